import { Effect, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { AppConfig } from "../Config.js"
import { asId } from "../domain/Ids.js"
import { CurrentSession } from "../domain/Principal.js"
import { clientAddressOf, limitKeyOf } from "../http/ClientAddress.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"
import { TenantService } from "../tenants/TenantService.js"
import { AccountLinks } from "./AccountLinks.js"
import { AuthService } from "./AuthService.js"
import { InvitationAcceptanceService } from "./InvitationAcceptance.js"
import { makeLoginLimits } from "./LoginLimits.js"
import { makeMailLimits } from "./MailLimits.js"

export const AuthHttpLive = HttpApiBuilder.group(
  Api,
  "auth",
  Effect.fn(function*(handlers) {
    const auth = yield* AuthService
    const tenants = yield* TenantService
    const limits = yield* makeLoginLimits
    const links = yield* AccountLinks
    const mailLimits = yield* makeMailLimits

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
      .handle("resendVerification", ({ payload }) =>
        Effect.gen(function*() {
          const session = yield* CurrentSession
          yield* mailLimits.resendVerification(session.userId)
          yield* links.resendVerification(session.userId, payload.locale ?? "pt-BR")
        }))
      .handle(
        "confirmEmail",
        ({ payload, request }) =>
          Effect.andThen(mailLimits.confirm(clientAddressOf(request)), links.confirmVerification(payload.token))
      )
      .handle("requestPasswordReset", ({ payload, request }) =>
        Effect.andThen(
          mailLimits.requestReset(payload.email, clientAddressOf(request)),
          links.requestReset(payload.email, payload.locale ?? "pt-BR")
        ))
      .handle("confirmPasswordReset", ({ payload, request }) =>
        Effect.andThen(
          mailLimits.confirm(clientAddressOf(request)),
          links.confirmReset(payload.token, payload.password)
        ))
      .handle(
        "myTenants",
        ({ query }) => Effect.flatMap(CurrentSession, (session) => tenants.tenantsOfUser(session.userId, query))
      )
  })
)

const BEARER = /^Bearer +([^\s]+)$/i

/** The bearer token, if the request carries one: accepting by link into an existing account needs its session. */
const bearerOf = (request: HttpServerRequest.HttpServerRequest) =>
  Option.fromNullishOr(BEARER.exec(request.headers["authorization"] ?? "")?.[1])

/** The path's `{invitationId}`, only looked up among the user's invitations: a malformed one is a 404. */
const invitationId = (params: { readonly invitationId: string }) => asId("invitation", params.invitationId)

export const InvitationAcceptanceHttpLive = HttpApiBuilder.group(
  Api,
  "invitationAcceptance",
  Effect.fn(function*(handlers) {
    const acceptance = yield* InvitationAcceptanceService
    const limits = yield* makeLoginLimits
    const limiter = yield* RateLimiter
    const { loginRateLimit } = yield* AppConfig
    // Per address, like registration's, so links are guessed no faster than registrations are tried.
    const perAddress = { capacity: loginRateLimit.perMinute * 3, refillPerSecond: (loginRateLimit.perMinute * 3) / 60 }
    const tokenTries = (request: HttpServerRequest.HttpServerRequest) =>
      limiter.consume([{ key: `invitation-address:${limitKeyOf(clientAddressOf(request))}`, policy: perAddress }])
    return handlers
      .handle("lookup", ({ payload, request }) => Effect.andThen(tokenTries(request), acceptance.lookup(payload.token)))
      .handle("accept", ({ payload, request }) =>
        Effect.andThen(
          tokenTries(request),
          // Then registration's limits, per address and per the invited e-mail.
          acceptance.acceptByLink(
            payload,
            bearerOf(request),
            (email) => limits.register(email, clientAddressOf(request))
          )
        ))
      .handle(
        "listMine",
        ({ query }) => Effect.flatMap(CurrentSession, (session) => acceptance.listMine(session.userId, query))
      )
      .handle(
        "acceptMine",
        ({ params }) =>
          Effect.flatMap(CurrentSession, (session) => acceptance.acceptMine(session.userId, invitationId(params)))
      )
      .handle(
        "declineMine",
        ({ params }) =>
          Effect.flatMap(CurrentSession, (session) => acceptance.declineMine(session.userId, invitationId(params)))
      )
  })
)
