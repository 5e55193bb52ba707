import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { clientAddressOf } from "../http/ClientAddress.js"
import { TenantService } from "../tenants/TenantService.js"
import { AccountLinks } from "./AccountLinks.js"
import { AuthService } from "./AuthService.js"
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
