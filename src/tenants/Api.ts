import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, Forbidden, NotFound } from "../domain/Errors.js"
import { IdOf } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { RequiredRoles, Role } from "../domain/Principal.js"
import { TaxId } from "../domain/TaxId.js"
import { SessionAuth, TenantReaderAuth } from "../keys/Authentication.js"

export const TenantStatus = Schema.Literal("active", "past_due", "suspended")

export const Quota = Schema.Struct({
  period: Schema.String.annotations({ description: "Calendar month (UTC), `YYYY-MM`." }),
  limit: Schema.Int,
  used: Schema.Int
}).annotations({ identifier: "Quota" })

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

export const Email = Schema.Trim.pipe(
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an email address" }),
  Schema.maxLength(254),
  Schema.annotations({ description: "An email address.", examples: ["ana@example.com"] })
)

export const NewTenant = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)),
  tax_id: TaxId
})

export const AddMember = Schema.Struct({ email: Email, role: Role })

const tenantPath = HttpApiSchema.param("tenantId", IdOf("tenant"))
const ownerOrAdmin: ReadonlyArray<Role> = ["owner", "admin"]
// Developers are read-only in the dashboard: they may see the members, not add them.
const anyMember: ReadonlyArray<Role> = ["owner", "admin", "developer"]

export class TenantsApi extends HttpApiGroup.make("tenants")
  .add(
    HttpApiEndpoint.get("get")`/v1/tenants/${tenantPath}`
      .addSuccess(Tenant)
      .middleware(TenantReaderAuth)
      .annotate(OpenApi.Description, "The tenant, for a member's session or any active API key of the tenant.")
  )
  .add(
    HttpApiEndpoint.post("addMember")`/v1/tenants/${tenantPath}/members`
      .setPayload(AddMember)
      .addSuccess(Member, { status: 201 })
      .addError(Conflict)
      .addError(NotFound)
      .addError(Forbidden)
      .middleware(SessionAuth)
      .annotate(RequiredRoles, ownerOrAdmin)
      .annotate(OpenApi.Description, "Adds a registered user to the tenant. Only an owner may add another owner.")
  )
  .add(
    HttpApiEndpoint.get("listMembers")`/v1/tenants/${tenantPath}/members`
      .setUrlParams(PageParams)
      .addSuccess(Page(Member))
      .middleware(SessionAuth)
      .annotate(RequiredRoles, anyMember)
  )
  .annotate(OpenApi.Title, "Tenants")
{}
