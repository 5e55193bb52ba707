import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentPrincipal } from "../domain/Principal.js"
import type { Owner } from "./WebhookRepo.js"
import { WebhookService } from "./WebhookService.js"

/**
 * Whose endpoints and deliveries: the key's tenant and environment, or a member's session's tenant
 * in both environments (the middleware matched the path's tenant and checked the role).
 */
const ownerOf = (tenantId: string) =>
  Effect.map(CurrentPrincipal, (principal): Owner =>
    principal._tag === "Session" ? { tenantId } : { tenantId: principal.tenantId, environment: principal.environment })

export const WebhooksHttpLive = HttpApiBuilder.group(
  Api,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = yield* WebhookService
    return handlers
      .handle("createEndpoint", ({ params, payload }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.create(by, payload)))
      .handle("listEndpoints", ({ params, query }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.list(by, query)))
      .handle("getEndpoint", ({ params }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.get(by, params.endpointId)))
      .handle("updateEndpoint", ({ params, payload }) =>
        Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.update(by, params.endpointId, payload)))
      .handle("deleteEndpoint", ({ params }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.remove(by, params.endpointId)))
      .handle("rotateSecret", ({ params }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.rotateSecret(by, params.endpointId)))
      .handle("listDeliveries", ({ params, query }) =>
        Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.listDeliveries(by, params.endpointId, query)))
      .handle("recoverDeliveries", ({ params, payload }) =>
        Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.recover(by, params.endpointId, new Date(payload.since))))
      .handle("getDelivery", ({ params }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.getDelivery(by, params.deliveryId)))
      .handle("replayDelivery", ({ params }) => Effect.flatMap(ownerOf(params.tenantId), (by) => webhooks.replay(by, params.deliveryId)))
  })
)
