import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { MemberService } from "./MemberService.js"
import { TenantService } from "./TenantService.js"

export const TenantsHttpLive = HttpApiBuilder.group(
  Api,
  "tenants",
  Effect.fn(function*(handlers) {
    const tenants = yield* TenantService
    const members = yield* MemberService
    return handlers
      .handle("get", ({ params }) => tenants.get(params.tenantId))
      .handle("update", ({ params, payload }) => tenants.update(params.tenantId, payload))
      .handle("addMember", ({ params, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          // The middleware resolved the caller's role on this tenant; it is always present here.
          members.addMember(params.tenantId, session.role ?? "developer", payload)))
      .handle("listMembers", ({ params, query }) => members.listMembers(params.tenantId, query))
      .handle("changeMemberRole", ({ params, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          members.changeRole(params.tenantId, session.userId, params.userId, payload.role)))
      .handle("removeMember", ({ params }) =>
        Effect.flatMap(CurrentSession, (session) => members.removeMember(params.tenantId, session.userId, params.userId)))
  })
)
