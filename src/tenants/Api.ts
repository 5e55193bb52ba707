import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Conflict, Forbidden, NotFound } from "../domain/Errors.js"
import { emailAddress } from "../domain/Email.js"
import { TenantId } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, Role } from "../domain/Principal.js"
import { TaxId } from "../domain/TaxId.js"
import { SessionAuth, TenantReaderAuth } from "../domain/Authentication.js"

export const TenantStatus = Schema.Literals(["active", "past_due", "suspended"])

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
  status: TenantStatus,
  plan: Schema.String,
  quota: Quota,
  created_at: Schema.Date
}) {}

export class PublicUser extends Schema.Class<PublicUser>("User")({
  id: Schema.String,
  object: Schema.tag("user"),
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  created_at: Schema.Date
}) {}

export class Member extends Schema.Class<Member>("Member")({
  object: Schema.tag("member"),
  user: PublicUser,
  role: Role,
  created_at: Schema.Date
}) {}

export const Email = emailAddress(Schema.Trim).annotate({
  description: "An email address.",
  examples: ["ana@example.com"]
})

export const NewTenant = Schema.Struct({
  name: Schema.Trim.check(Schema.isMinLength(1), Schema.isMaxLength(200)),
  tax_id: TaxId
})

export const AddMember = Schema.Struct({ email: Email, role: Role })

export class TenantsApi extends HttpApiGroup.make("tenants")
  .add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId", {
      params: { tenantId: TenantId },
      success: Tenant
    })
      .middleware(TenantReaderAuth)
      .annotate(OpenApi.Description, "The tenant, for a member's session or any active API key of the tenant.")
  )
  .add(
    HttpApiEndpoint.post("addMember", "/tenants/:tenantId/members", {
      params: { tenantId: TenantId },
      payload: AddMember,
      success: Member.pipe(HttpApiSchema.status(201)),
      error: [Conflict, NotFound, Forbidden]
    })
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(OpenApi.Description, "Adds a registered user to the tenant. Only an owner may add another owner.")
  )
  .add(
    HttpApiEndpoint.get("listMembers", "/tenants/:tenantId/members", {
      params: { tenantId: TenantId },
      query: PageParams,
      success: Page(Member)
    })
      .middleware(SessionAuth)
      .annotate(RequiredRoles, memberRoles)
  )
  .annotate(OpenApi.Title, "Tenants")
{}
