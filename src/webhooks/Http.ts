import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentApiKey } from "../domain/Principal.js"
import type { Owner } from "./WebhookRepo.js"
import { WebhookService } from "./WebhookService.js"

/** Endpoints and deliveries belong to the key's tenant and environment; the middleware matched the path's tenant. */
const owner = Effect.map(CurrentApiKey, (key): Owner => ({ tenantId: key.tenantId, environment: key.environment }))

export const WebhooksHttpLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhooks = yield* WebhookService
    return handlers
      .handle("createEndpoint", ({ payload }) => Effect.flatMap(owner, (by) => webhooks.create(by, payload)))
      .handle("listEndpoints", ({ urlParams }) => Effect.flatMap(owner, (by) => webhooks.list(by, urlParams)))
      .handle("getEndpoint", ({ path }) => Effect.flatMap(owner, (by) => webhooks.get(by, path.endpointId)))
      .handle("updateEndpoint", ({ path, payload }) => Effect.flatMap(owner, (by) => webhooks.update(by, path.endpointId, payload)))
      .handle("deleteEndpoint", ({ path }) => Effect.flatMap(owner, (by) => webhooks.remove(by, path.endpointId)))
      .handle("rotateSecret", ({ path }) => Effect.flatMap(owner, (by) => webhooks.rotateSecret(by, path.endpointId)))
      .handle("listDeliveries", ({ path, urlParams }) =>
        Effect.flatMap(owner, (by) => webhooks.listDeliveries(by, path.endpointId, urlParams)))
      .handle("recoverDeliveries", ({ path, payload }) =>
        Effect.flatMap(owner, (by) => webhooks.recover(by, path.endpointId, new Date(payload.since))))
      .handle("getDelivery", ({ path }) => Effect.flatMap(owner, (by) => webhooks.getDelivery(by, path.deliveryId)))
      .handle("replayDelivery", ({ path }) => Effect.flatMap(owner, (by) => webhooks.replay(by, path.deliveryId)))
  }))
