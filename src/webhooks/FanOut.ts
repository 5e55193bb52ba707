/**
 * The webhooks' side of the event outbox: every recorded event becomes one queued delivery per
 * enabled endpoint of its tenant and environment that subscribes to its type. Runs inside the
 * transaction that records the event, so an event and its deliveries commit or roll back together.
 */
import { Effect, Layer } from "effect"
import { makeId } from "../domain/Ids.js"
import { EventFanOut, EventLog } from "../events/EventLog.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import { DeliveryQueue } from "./DeliveryQueue.js"
import { WebhookRepo } from "./WebhookRepo.js"

export const WebhookFanOutLive = Layer.effect(
  EventFanOut,
  Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const deliveries = yield* DeliveryQueue
    return {
      fanOut: (event) =>
        Effect.gen(function*() {
          const endpoints = yield* repo.subscribedEndpoints(event.tenantId, event.environment, event.type)
          if (endpoints.length === 0) return
          const traceparent = yield* currentTraceparent
          yield* deliveries.enqueue(
            yield* Effect.forEach(endpoints, (endpointId) =>
              Effect.map(makeId("delivery"), (id) => ({
                id,
                eventId: event.id,
                endpointId,
                tenantId: event.tenantId,
                environment: event.environment,
                eventType: event.type,
                traceparent
              })))
          )
        }).pipe(Effect.withSpan("Webhooks.fanOut"))
    }
  })
)

/** The event outbox as the application runs it: every event fans out to the webhooks. */
export const EventLogLive = EventLog.layer.pipe(
  Layer.provide(WebhookFanOutLive),
  Layer.provide([WebhookRepo.layer, DeliveryQueue.layer])
)
