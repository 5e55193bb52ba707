/**
 * Webhook deliveries (`webhook_deliveries`) on the shared leased queue: one per event and matching
 * endpoint, sent by the WebhookDispatcher. A delivery is also what the API lists, so its row keeps
 * the outcome of the last attempt next to the queue's columns.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig } from "../Config.js"
import { DeliveryId, TenantId, WebhookEndpointId } from "../domain/Ids.js"
import { type Environment } from "../domain/Principal.js"
import { type LeasedQueue, LeaseFields, makeLeasedQueue } from "../queue/LeasedQueue.js"
import type { WebhookRepo } from "./WebhookRepo.js"

export const ClaimedDelivery = Schema.Struct({
  ...LeaseFields,
  id: DeliveryId,
  endpointId: WebhookEndpointId,
  eventId: Schema.String,
  tenantId: TenantId,
  /** Attempts since the delivery was last (re)queued: the retry schedule counts these. */
  runAttempts: Schema.Number,
  traceparent: Schema.NullOr(Schema.String)
})
export type ClaimedDelivery = typeof ClaimedDelivery.Type

export interface NewDelivery {
  readonly id: DeliveryId
  readonly eventId: string
  readonly endpointId: WebhookEndpointId
  readonly tenantId: TenantId
  readonly environment: Environment
  readonly eventType: string
  readonly traceparent: string | null
}

export class DeliveryQueue extends Context.Service<DeliveryQueue, LeasedQueue<ClaimedDelivery, NewDelivery>>()(
  "etd/DeliveryQueue"
) {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const { fairness } = yield* AppConfig
      return yield* makeLeasedQueue<ClaimedDelivery, NewDelivery>({
        name: "webhooks",
        table: "webhook_deliveries",
        stateColumn: "status",
        dueColumn: "next_attempt_at",
        job: ClaimedDelivery,
        channel: "etd_webhook_deliveries",
        row: (delivery, at) => ({ ...delivery, status: "pending", nextAttemptAt: at, createdAt: at, updatedAt: at }),
        onClaim: (sql) => sql`run_attempts = run_attempts + 1`,
        // A receiver that never answers holds a worker for the whole timeout: its tenant holds at
        // most its cap of workers, the endpoint at most its own (SPEC §11).
        fairness: {
          tenant: { column: "tenant_id", cap: fairness.webhooksPerTenant },
          within: { column: "endpoint_id", cap: fairness.webhooksPerEndpoint }
        }
      })
    })
  )
}

/**
 * Ends an endpoint's waiting deliveries once it is no longer sent to (disabled, deleted or gone),
 * with `reason` as their last error; deliveries in flight settle on their own.
 */
export const endWaitingDeliveries =
  (repo: WebhookRepo["Service"], queue: DeliveryQueue["Service"]) => (endpointId: WebhookEndpointId, reason: string) =>
    Effect.flatMap(
      repo.pendingOf(endpointId),
      (pending) => queue.cancelWaiting(pending, "failed", { nextAttemptAt: null, lastError: reason })
    )
