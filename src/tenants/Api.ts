import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { KeyOrSessionAuth, SessionAuth } from "../domain/Authentication.js"
import { Conflict, Forbidden, InvalidState, NotFound } from "../domain/Errors.js"
import { TenantIdParam } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, Role } from "../domain/Principal.js"
import { Tenant, TenantChanges } from "../domain/Tenant.js"
import { DateTime } from "../domain/Time.js"
import { Email, PublicUser } from "../domain/User.js"

export class Member extends Schema.Class<Member>("Member")({
  object: Schema.tag("member"),
  user: PublicUser,
  role: Role,
  created_at: DateTime
}) {}

export const AddMember = Schema.Struct({ email: Email, role: Role })

export const ChangeRole = Schema.Struct({ role: Role })

/**
 * The member's user id. Not checked against the `usr_` pattern here: a malformed id names no
 * member, and answers the same 404 as an unknown one (SPEC §2), not a 400.
 */
const memberParams = {
  tenantId: TenantIdParam,
  userId: Schema.String.annotate({ description: "The member's user id (`usr_…`)." })
}

export class TenantsApi extends HttpApiGroup.make("tenants")
  .add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId", {
      params: { tenantId: TenantIdParam },
      success: Tenant
    })
      .annotate(OpenApi.Summary, "Get a tenant")
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredRoles, memberRoles)
      .annotate(
        OpenApi.Description,
        "The tenant with the provider's registration, for a member's session or any active API key of the tenant."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/tenants/:tenantId", {
      params: { tenantId: TenantIdParam },
      payload: TenantChanges,
      success: Tenant
    })
      .annotate(OpenApi.Summary, "Update a tenant")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Changes the tenant's name, its option for the Simples Nacional (`simples_nacional`) or the provider's " +
          "registration (`registration`: legal name, IM, address, phone, e-mail, tax regime), which every " +
          "document's issuer block is written from. In `registration`, each field given replaces the stored one " +
          "(`null` clears it) and the others are kept; `address` is replaced as a whole and its `state` must be " +
          "the state of its `municipality_code`. Every DPS sent from then on declares the new values, including " +
          "those of documents still queued, except the municipality of emission (`cLocEmi`), fixed when a " +
          "document is accepted. At least one field (`400 invalid_request` otherwise)."
      )
  )
  .add(
    HttpApiEndpoint.post("addMember", "/tenants/:tenantId/members", {
      params: { tenantId: TenantIdParam },
      payload: AddMember,
      success: Member.pipe(HttpApiSchema.status(201)),
      error: [Conflict, NotFound, Forbidden]
    })
      .annotate(OpenApi.Summary, "Add a member")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(OpenApi.Description, "Adds a registered user to the tenant. Only an owner may add another owner.")
  )
  .add(
    HttpApiEndpoint.get("listMembers", "/tenants/:tenantId/members", {
      params: { tenantId: TenantIdParam },
      query: PageParams,
      success: Page(Member)
    })
      .annotate(OpenApi.Summary, "List members")
      .annotate(OpenApi.Description, "The tenant's members with their roles. Any member may list them.")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.patch("changeMemberRole", "/tenants/:tenantId/members/:userId", {
      params: memberParams,
      payload: ChangeRole,
      success: Member,
      error: [NotFound, Forbidden, InvalidState]
    })
      .annotate(OpenApi.Summary, "Change a member's role")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Changes a member's role. Only an owner grants or takes away `owner`; the last owner cannot be demoted " +
          "(`409 invalid_state`)."
      )
  )
  .add(
    HttpApiEndpoint.delete("removeMember", "/tenants/:tenantId/members/:userId", {
      params: memberParams,
      success: HttpApiSchema.NoContent,
      error: [NotFound, Forbidden, InvalidState]
    })
      .annotate(OpenApi.Summary, "Remove a member")
      .middleware(SessionAuth)
      // Every member may call it, to leave the tenant; removing others is checked by the service.
      .annotate(RequiredRoles, memberRoles)
      .annotate(
        OpenApi.Description,
        "Removes a member; the user loses access to the tenant at once. Owners and admins remove others, every " +
          "member may remove themselves. Only an owner removes an owner; the last owner cannot be removed " +
          "(`409 invalid_state`)."
      )
  )
  .annotate(OpenApi.Title, "Tenants")
  .annotate(
    OpenApi.Description,
    "The tenant (its tax id, billing status, plan and quota) and its members with their roles (`owner`, `admin`, `developer`)."
  )
{}
