import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { asId } from "../domain/Ids.js"
import { reachOf } from "../domain/Principal.js"
import { WebhookService } from "./WebhookService.js"

// The path's ids, validated by their `IdOf` schemas.
const endpointId = (params: { readonly endpointId: string }) => asId("webhookEndpoint", params.endpointId)
const deliveryId = (params: { readonly deliveryId: string }) => asId("delivery", params.deliveryId)

export const WebhooksHttpLive = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* WebhookService
    return handlers
      .handle(
        "createEndpoint",
        ({ params, payload }) => Effect.flatMap(reachOf(params), (by) => webhooks.create(by, payload))
      )
      .handle("listEndpoints", ({ params, query }) => Effect.flatMap(reachOf(params), (by) => webhooks.list(by, query)))
      .handle(
        "getEndpoint",
        ({ params }) => Effect.flatMap(reachOf(params), (by) => webhooks.get(by, endpointId(params)))
      )
      .handle(
        "updateEndpoint",
        ({ params, payload }) =>
          Effect.flatMap(reachOf(params), (by) => webhooks.update(by, endpointId(params), payload))
      )
      .handle(
        "deleteEndpoint",
        ({ params }) => Effect.flatMap(reachOf(params), (by) => webhooks.remove(by, endpointId(params)))
      )
      .handle(
        "rotateSecret",
        ({ params }) => Effect.flatMap(reachOf(params), (by) => webhooks.rotateSecret(by, endpointId(params)))
      )
      .handle(
        "listDeliveries",
        ({ params, query }) =>
          Effect.flatMap(reachOf(params), (by) => webhooks.listDeliveries(by, endpointId(params), query))
      )
      .handle(
        "recoverDeliveries",
        ({ params, payload }) =>
          Effect.flatMap(reachOf(params), (by) => webhooks.recover(by, endpointId(params), new Date(payload.since)))
      )
      .handle(
        "getDelivery",
        ({ params }) => Effect.flatMap(reachOf(params), (by) => webhooks.getDelivery(by, deliveryId(params)))
      )
      .handle(
        "replayDelivery",
        ({ params }) => Effect.flatMap(reachOf(params), (by) => webhooks.replay(by, deliveryId(params)))
      )
  })
)
