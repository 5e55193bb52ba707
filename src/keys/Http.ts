import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentSession } from "../domain/Principal.js"
import { KeyService } from "./KeyService.js"

export const KeysHttpLive = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* KeyService
    return handlers
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          keys.create({ ...payload, tenantId: path.tenantId, createdBy: session.userId })))
      .handle("list", ({ path, urlParams }) => keys.list(path.tenantId, urlParams))
      .handle("rotate", ({ path, payload }) =>
        Effect.flatMap(CurrentSession, (session) =>
          keys.rotate(path.tenantId, path.keyId, session.userId, payload.grace_days)))
      .handle("revoke", ({ path }) => keys.revoke(path.tenantId, path.keyId))
  }))
