import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { clientAddressOf } from "../http/ClientAddress.js"
import { TenantService } from "../tenants/TenantService.js"
import { AuthService } from "./AuthService.js"
import { makeLoginLimits } from "./LoginLimits.js"

export const AuthHttpLive = HttpApiBuilder.group(
  Api,
  "auth",
  Effect.fn(function*(handlers) {
    const auth = yield* AuthService
    const tenants = yield* TenantService
    const limits = yield* makeLoginLimits

    return handlers
      .handle(
        "register",
        ({ payload, request }) =>
          Effect.andThen(limits.register(payload.email, clientAddressOf(request)), auth.register(payload))
      )
      .handle(
        "login",
        ({ payload, request }) =>
          limits.login(payload.email, clientAddressOf(request), auth.login(payload.email, payload.password))
      )
      .handle("logout", () => Effect.flatMap(CurrentSession, (session) => auth.logout(session.sessionId)))
      .handle("me", () => Effect.flatMap(CurrentSession, (session) => auth.me(session.userId)))
      .handle(
        "myTenants",
        ({ query }) => Effect.flatMap(CurrentSession, (session) => tenants.tenantsOfUser(session.userId, query))
      )
  })
)
