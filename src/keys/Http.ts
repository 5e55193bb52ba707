import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { KeyService } from "./KeyService.js"

export const KeysHttpLive = HttpApiBuilder.group(
  Api,
  "apiKeys",
  Effect.fn(function*(handlers) {
    const keys = yield* KeyService
    return handlers
      .handle("create", ({ params, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          keys.create({ ...payload, tenantId: params.tenantId, createdBy: session.userId })))
      .handle("list", ({ params, query }) => keys.list(params.tenantId, query))
      .handle("rotate", ({ params, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          keys.rotate(params.tenantId, params.keyId, session.userId, payload.grace_days)))
      .handle("revoke", ({ params }) => keys.revoke(params.tenantId, params.keyId))
  })
)
