import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { TenantService } from "./TenantService.js"

export const TenantsHttpLive = HttpApiBuilder.group(
  Api,
  "tenants",
  Effect.fn(function*(handlers) {
    const tenants = yield* TenantService
    return handlers
      .handle("get", ({ params }) => tenants.get(params.tenantId))
      .handle("addMember", ({ params, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          // The middleware resolved the caller's role on this tenant; it is always present here.
          tenants.addMember(params.tenantId, session.role ?? "developer", payload)))
      .handle("listMembers", ({ params, query }) => tenants.listMembers(params.tenantId, query))
  })
)
