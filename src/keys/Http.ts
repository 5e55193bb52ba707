import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { asId } from "../domain/Ids.js"
import { CurrentSession, pathTenant } from "../domain/Principal.js"
import { requireVerifiedEmail, UserDirectory } from "../tenants/UserDirectory.js"
import { KeyService } from "./KeyService.js"

/** The path's `{keyId}`, validated by its `IdOf("apiKey")` schema. */
const keyId = (params: { readonly keyId: string }) => asId("apiKey", params.keyId)

export const KeysHttpLive = HttpApiBuilder.group(
  Api,
  "apiKeys",
  Effect.fn(function*(handlers) {
    const keys = yield* KeyService
    const directory = yield* UserDirectory
    return handlers
      .handle(
        "create",
        ({ params, payload }) =>
          Effect.gen(function*() {
            const session = yield* CurrentSession
            // A live key issues real notes: its creator must have proven their address. Test keys need not.
            if (payload.environment === "live") {
              yield* requireVerifiedEmail(session.userId).pipe(Effect.provideService(UserDirectory, directory))
            }
            return yield* keys.create({ ...payload, tenantId: pathTenant(params), createdBy: session.userId })
          })
      )
      .handle("list", ({ params, query }) => keys.list(pathTenant(params), query))
      .handle(
        "rotate",
        ({ params, payload }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => keys.rotate(pathTenant(params), keyId(params), session.userId, payload.grace_days)
          )
      )
      .handle("revoke", ({ params }) => keys.revoke(pathTenant(params), keyId(params)))
  })
)
