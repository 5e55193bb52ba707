import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { KeyOrSessionAuth, SessionAuth } from "../domain/Authentication.js"
import { Conflict, Forbidden, InvalidState, NotFound } from "../domain/Errors.js"
import { TenantIdParam } from "../domain/Ids.js"
import { Invitation, InvitationStatus, NewInvitation } from "../domain/Invitation.js"
import { oneCursor, Page, PageParams } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, Role } from "../domain/Principal.js"
import { Tenant, TenantChanges } from "../domain/Tenant.js"
import { DateTime } from "../domain/Time.js"
import { Email, PublicUser } from "../domain/User.js"

export class Member extends Schema.Class<Member>("Member")({
  object: Schema.tag("member"),
  user: PublicUser,
  role: Role,
  created_at: DateTime
}, { description: "A user's membership of the tenant, with their role." }) {}

/** The older form of `POST …/invitations`: the same invitation, in the e-mail's default language. */
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
          "document is accepted. `note_mail` sets whether authorized and cancelled notes are e-mailed to their " +
          "takers (`enabled`) and the From's display name (`sender_name`, one line of at most 100 characters; " +
          "`null` restores the default); it applies to notes authorized or cancelled from then on. At least one " +
          "field (`400 invalid_request` otherwise)."
      )
  )
  .add(
    HttpApiEndpoint.post("addMember", "/tenants/:tenantId/members", {
      params: { tenantId: TenantIdParam },
      payload: AddMember,
      success: Invitation.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Forbidden]
    })
      .annotate(OpenApi.Summary, "Invite a member (older name)")
      .annotate(OpenApi.Deprecated, true)
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "The older name of `POST /v1/tenants/{tenantId}/invitations`, kept for existing integrations: it no " +
          "longer grants the role at once but invites the address, which joins only by accepting from its " +
          "mailbox. Answers the invitation, like the newer endpoint."
      )
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

const invitationParams = {
  tenantId: TenantIdParam,
  invitationId: Schema.String.annotate({ description: "The invitation's id (`inv_…`)." })
}

export const InvitationListParams = Schema.Struct({
  ...PageParams.fields,
  status: Schema.optionalKey(
    InvitationStatus.annotate({ description: "Which invitations to list; `pending` (still acceptable) by default." })
  )
}).check(oneCursor)

export class InvitationsApi extends HttpApiGroup.make("invitations")
  .add(
    HttpApiEndpoint.post("create", "/tenants/:tenantId/invitations", {
      params: { tenantId: TenantIdParam },
      payload: NewInvitation,
      success: Invitation.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Forbidden]
    })
      .annotate(OpenApi.Summary, "Invite a member")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Invites an address with a role: the person receives a link by e-mail, valid for 7 days " +
          "(`INVITATION_TTL`), and joins only by accepting it (`POST /v1/invitations/accept`), registering " +
          "there if new. Only an owner invites an owner (`403 forbidden`). A member's address, or one with a " +
          "pending invitation, is `409 conflict` (resend that one instead). The link's token is never in a response."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/tenants/:tenantId/invitations", {
      params: { tenantId: TenantIdParam },
      query: InvitationListParams,
      success: Page(Invitation)
    })
      .annotate(OpenApi.Summary, "List invitations")
      .annotate(
        OpenApi.Description,
        "The tenant's invitations, newest first; pending ones unless `status` says otherwise. Any member may list them."
      )
      .middleware(SessionAuth)
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.post("resend", "/tenants/:tenantId/invitations/:invitationId/resend", {
      params: invitationParams,
      success: Invitation,
      error: [NotFound, Forbidden, InvalidState]
    })
      .annotate(OpenApi.Summary, "Resend an invitation")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Sends a new link with a fresh expiry; the previous link stops working. The caller becomes the " +
          "invitation's sender. A pending invitation only, lapsed or not (`409 invalid_state` otherwise)."
      )
  )
  .add(
    HttpApiEndpoint.post("revoke", "/tenants/:tenantId/invitations/:invitationId/revoke", {
      params: invitationParams,
      success: Invitation,
      error: [NotFound, Forbidden, InvalidState]
    })
      .annotate(OpenApi.Summary, "Revoke an invitation")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Its link stops working at once. A pending invitation only (`409 invalid_state` otherwise); only an " +
          "owner revokes or resends an invitation to the owner role."
      )
  )
  .annotate(OpenApi.Title, "Invitations")
  .annotate(
    OpenApi.Description,
    "How people join a tenant: owners and admins invite an address with a role, and the person accepts from " +
      "the mailbox. Invitations expire after 7 days; they are listed, resent and revoked here."
  )
{}
