/**
 * The webhooks' side of the event outbox: every recorded event becomes one queued delivery per
 * enabled endpoint of its tenant and environment that subscribes to its type. Written by the
 * statement that records the event, so an event and its deliveries commit or roll back together.
 */
import { Effect, Layer } from "effect"
import { EventFanOut, EventLog } from "../events/EventLog.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import { DeliveryQueue } from "./DeliveryQueue.js"
import { WebhookRepo } from "./WebhookRepo.js"

export const WebhookFanOutLive = Layer.effect(
  EventFanOut,
  Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const { channel } = yield* DeliveryQueue
    return {
      // The deliveries continue the trace that records the event (SPEC §13).
      fanningOut: (event) =>
        Effect.map(currentTraceparent, (traceparent) => (written) =>
          repo.queueingDeliveries(
            {
              eventId: event.id,
              tenantId: event.tenantId,
              environment: event.environment,
              eventType: event.type,
              traceparent,
              at: event.createdAt
            },
            written,
            channel
          ))
    }
  })
)

/** The event outbox as the application runs it: every event fans out to the webhooks. */
export const EventLogLive = EventLog.layer.pipe(
  Layer.provide(WebhookFanOutLive),
  Layer.provide([WebhookRepo.layer, DeliveryQueue.layer])
)
