import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { TenantService } from "./TenantService.js"

export const TenantsHttpLive = HttpApiBuilder.group(Api, "tenants", (handlers) =>
  Effect.gen(function*() {
    const tenants = yield* TenantService
    return handlers
      .handle("get", ({ path }) => tenants.get(path.tenantId))
      .handle("addMember", ({ path, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          // The middleware resolved the caller's role on this tenant; it is always present here.
          tenants.addMember(path.tenantId, session.role ?? "developer", payload)))
      .handle("listMembers", ({ path, urlParams }) => tenants.listMembers(path.tenantId, urlParams))
  }))
