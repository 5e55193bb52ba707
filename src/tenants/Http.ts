import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { asId } from "../domain/Ids.js"
import { CurrentSession, pathTenant } from "../domain/Principal.js"
import { InvitationService } from "./InvitationService.js"
import { MemberService } from "./MemberService.js"
import { TenantService } from "./TenantService.js"

/**
 * The path's `{userId}`. Its schema checks no pattern (a malformed id is the 404 of an unknown
 * member, SPEC §2): it is only looked up among the tenant's members.
 */
const userId = (params: { readonly userId: string }) => asId("user", params.userId)

/** The path's `{invitationId}`, unchecked like `{userId}`: a malformed id is the 404 of an unknown one. */
const invitationId = (params: { readonly invitationId: string }) => asId("invitation", params.invitationId)

export const TenantsHttpLive = HttpApiBuilder.group(
  Api,
  "tenants",
  Effect.fn(function*(handlers) {
    const tenants = yield* TenantService
    const members = yield* MemberService
    const invitations = yield* InvitationService
    return handlers
      .handle("get", ({ params }) => tenants.get(pathTenant(params)))
      .handle("update", ({ params, payload }) => tenants.update(pathTenant(params), payload))
      .handle(
        "addMember",
        ({ params, payload }) =>
          Effect.flatMap(CurrentSession, (session) => invitations.invite(pathTenant(params), session.userId, payload))
      )
      .handle("listMembers", ({ params, query }) => members.listMembers(pathTenant(params), query))
      .handle(
        "changeMemberRole",
        ({ params, payload }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => members.changeRole(pathTenant(params), session.userId, userId(params), payload.role)
          )
      )
      .handle(
        "removeMember",
        ({ params }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => members.removeMember(pathTenant(params), session.userId, userId(params))
          )
      )
  })
)

export const InvitationsHttpLive = HttpApiBuilder.group(
  Api,
  "invitations",
  Effect.fn(function*(handlers) {
    const invitations = yield* InvitationService
    return handlers
      .handle(
        "create",
        ({ params, payload }) =>
          Effect.flatMap(CurrentSession, (session) => invitations.invite(pathTenant(params), session.userId, payload))
      )
      .handle("list", ({ params, query }) => invitations.list(pathTenant(params), query.status ?? "pending", query))
      .handle("resend", ({ params }) =>
        Effect.flatMap(
          CurrentSession,
          (session) => invitations.resend(pathTenant(params), session.userId, invitationId(params))
        ))
      .handle("revoke", ({ params }) =>
        Effect.flatMap(
          CurrentSession,
          (session) => invitations.revoke(pathTenant(params), session.userId, invitationId(params))
        ))
  })
)
