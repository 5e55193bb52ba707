import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Conflict, Forbidden, NotFound } from "../domain/Errors.js"
import { TenantId } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, Role } from "../domain/Principal.js"
import { SessionAuth, TenantReaderAuth } from "../domain/Authentication.js"
import { Tenant } from "../domain/Tenant.js"
import { Email, PublicUser } from "../domain/User.js"

export class Member extends Schema.Class<Member>("Member")({
  object: Schema.tag("member"),
  user: PublicUser,
  role: Role,
  created_at: Schema.Date
}) {}

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
