import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentApiKey } from "../domain/Principal.js"
import type { Owner } from "./WebhookRepo.js"
import { WebhookService } from "./WebhookService.js"

/** Endpoints and deliveries belong to the key's tenant and environment; the middleware matched the path's tenant. */
const owner = Effect.map(CurrentApiKey, (key): Owner => ({ tenantId: key.tenantId, environment: key.environment }))

export const WebhooksHttpLive = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* WebhookService
    return handlers
      .handle("createEndpoint", ({ payload }) => Effect.flatMap(owner, (by) => webhooks.create(by, payload)))
      .handle("listEndpoints", ({ query }) => Effect.flatMap(owner, (by) => webhooks.list(by, query)))
      .handle("getEndpoint", ({ params }) => Effect.flatMap(owner, (by) => webhooks.get(by, params.endpointId)))
      .handle("updateEndpoint", ({ params, payload }) =>
        Effect.flatMap(owner, (by) => webhooks.update(by, params.endpointId, payload)))
      .handle("deleteEndpoint", ({ params }) => Effect.flatMap(owner, (by) => webhooks.remove(by, params.endpointId)))
      .handle("rotateSecret", ({ params }) => Effect.flatMap(owner, (by) => webhooks.rotateSecret(by, params.endpointId)))
      .handle("listDeliveries", ({ params, query }) =>
        Effect.flatMap(owner, (by) => webhooks.listDeliveries(by, params.endpointId, query)))
      .handle("recoverDeliveries", ({ params, payload }) =>
        Effect.flatMap(owner, (by) => webhooks.recover(by, params.endpointId, new Date(payload.since))))
      .handle("getDelivery", ({ params }) => Effect.flatMap(owner, (by) => webhooks.getDelivery(by, params.deliveryId)))
      .handle("replayDelivery", ({ params }) => Effect.flatMap(owner, (by) => webhooks.replay(by, params.deliveryId)))
  })
)
