import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { asId } from "../domain/Ids.js"
import { CurrentSession, pathTenant } from "../domain/Principal.js"
import { KeyService } from "./KeyService.js"

/** The path's `{keyId}`, validated by its `IdOf("apiKey")` schema. */
const keyId = (params: { readonly keyId: string }) => asId("apiKey", params.keyId)

export const KeysHttpLive = HttpApiBuilder.group(
  Api,
  "apiKeys",
  Effect.fn(function*(handlers) {
    const keys = yield* KeyService
    return handlers
      .handle(
        "create",
        ({ params, payload }) =>
          Effect.flatMap(
            CurrentSession,
            (session) => keys.create({ ...payload, tenantId: pathTenant(params), createdBy: session.userId })
          )
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
