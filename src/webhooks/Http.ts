import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { reachOf } from "../domain/Principal.js"
import { WebhookService } from "./WebhookService.js"

export const WebhooksHttpLive = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* WebhookService
    return handlers
      .handle("createEndpoint", ({ params, payload }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.create(by, payload)))
      .handle("listEndpoints", ({ params, query }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.list(by, query)))
      .handle("getEndpoint", ({ params }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.get(by, params.endpointId)))
      .handle("updateEndpoint", ({ params, payload }) =>
        Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.update(by, params.endpointId, payload)))
      .handle("deleteEndpoint", ({ params }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.remove(by, params.endpointId)))
      .handle("rotateSecret", ({ params }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.rotateSecret(by, params.endpointId)))
      .handle("listDeliveries", ({ params, query }) =>
        Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.listDeliveries(by, params.endpointId, query)))
      .handle("recoverDeliveries", ({ params, payload }) =>
        Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.recover(by, params.endpointId, new Date(payload.since))))
      .handle("getDelivery", ({ params }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.getDelivery(by, params.deliveryId)))
      .handle("replayDelivery", ({ params }) => Effect.flatMap(reachOf(params.tenantId), (by) => webhooks.replay(by, params.deliveryId)))
  })
)
