/** Tenants as the API shows them, shared by the tenants module (which owns them) and auth (registration, `/me/tenants`). */
import { Schema } from "effect"
import { Role } from "./Principal.js"
import { TaxId } from "./TaxId.js"

export const TenantStatus = Schema.Literals(["active", "past_due", "suspended"])
export type TenantStatus = typeof TenantStatus.Type

export const Quota = Schema.Struct({
  period: Schema.String.annotate({ description: "Calendar month (UTC), `YYYY-MM`." }),
  limit: Schema.Int,
  used: Schema.Int
}).annotate({ identifier: "Quota" })

export class Tenant extends Schema.Class<Tenant>("Tenant")({
  id: Schema.String,
  object: Schema.tag("tenant"),
  name: Schema.String,
  tax_id: Schema.String,
  verified: Schema.Boolean.annotate({
    description: "Whether this tenant proved its tax id with an A1 certificate issued to it (SPEC §5). A verified " +
      "tenant holds the tax id alone: no other tenant may register with it or issue live documents for it."
  }),
  status: TenantStatus,
  plan: Schema.String,
  quota: Quota,
  created_at: Schema.Date
}) {}

export const NewTenant = Schema.Struct({
  name: Schema.Trim.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  tax_id: TaxId
})
export type NewTenant = typeof NewTenant.Type

export class TenantMembership extends Schema.Class<TenantMembership>("TenantMembership")({
  tenant: Tenant,
  role: Role
}) {}
