import { Effect, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { AppConfig } from "../Config.js"
import { CurrentSession } from "../domain/Principal.js"
import { normalizeEmail } from "../domain/User.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"
import { TenantService } from "../tenants/TenantService.js"
import { AuthService } from "./AuthService.js"

export const AuthHttpLive = HttpApiBuilder.group(
  Api,
  "auth",
  Effect.fn(function*(handlers) {
    const auth = yield* AuthService
    const tenants = yield* TenantService
    const limiter = yield* RateLimiter
    const { loginRateLimit } = yield* AppConfig
    const perEmail = { capacity: loginRateLimit.perMinute, refillPerSecond: loginRateLimit.perMinute / 60 }
    // One address may serve several people (an office behind NAT), so it gets a larger budget.
    const perAddress = { capacity: loginRateLimit.perMinute * 3, refillPerSecond: (loginRateLimit.perMinute * 3) / 60 }

    const limitAddress = (action: string, request: HttpServerRequest.HttpServerRequest) =>
      limiter.consume(`${action}:address:${Option.getOrElse(request.remoteAddress, () => "unknown")}`, perAddress)

    return handlers
      .handle("register", ({ payload, request }) =>
        limitAddress("register", request).pipe(
          Effect.andThen(limiter.consume(`register:email:${normalizeEmail(payload.email)}`, perEmail)),
          Effect.andThen(auth.register(payload))
        ))
      .handle("login", ({ payload, request }) =>
        limitAddress("login", request).pipe(
          Effect.andThen(limiter.consume(`login:email:${normalizeEmail(payload.email)}`, perEmail)),
          Effect.andThen(auth.login(payload.email, payload.password))
        ))
      .handle("logout", () => Effect.flatMap(CurrentSession, (session) => auth.logout(session.sessionId)))
      .handle("me", () => Effect.flatMap(CurrentSession, (session) => auth.me(session.userId)))
      .handle("myTenants", ({ query }) =>
        Effect.flatMap(CurrentSession, (session) => tenants.tenantsOfUser(session.userId, query)))
  })
)
