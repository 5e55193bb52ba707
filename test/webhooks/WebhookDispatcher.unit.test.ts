/**
 * The dispatcher's "send one delivery" alone: the repository, the queue and the event log are
 * mocks, the receiver is real HTTP on loopback. Dispatcher.test.ts covers the same rules against
 * the real queue on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { Statement } from "effect/sql"
import { AppConfigTest } from "../../src/Config.js"
import { asId } from "../../src/domain/Ids.js"
import { EventLog } from "../../src/events/EventLog.js"
import { type ClaimedDelivery, DeliveryQueue } from "../../src/webhooks/DeliveryQueue.js"
import { makeWebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.js"
import { WebhookRepo } from "../../src/webhooks/WebhookRepo.js"
import { recordingTransaction } from "../support/recordingTransaction.js"
import { startReceiver } from "./receiver.js"

const delivery: ClaimedDelivery = {
  id: asId("delivery", "dlv_1"),
  endpointId: asId("webhookEndpoint", "whe_1"),
  eventId: "evt_0000000000000000000000000a",
  tenantId: asId("tenant", "ten_x"),
  attempts: 1,
  runAttempts: 1,
  lockedBy: "test:claim",
  traceparent: null
}

/** The dispatcher over mocks, sending to `url`; the arrays record what it wrote. */
const dispatcherTo = (
  url: string,
  options: { readonly failing: boolean; readonly leaseHeld?: boolean } = { failing: true }
) => {
  const writes: Array<string> = []
  const mocks = Layer.mergeAll(
    Layer.mock(WebhookRepo, {
      deliveryTargets: () =>
        Effect.succeed([{
          id: delivery.endpointId,
          url,
          enabled: true,
          deletedAt: null,
          secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
          previousSecret: null,
          previousSecretExpiresAt: null,
          failingSince: options.failing ? new Date(0) : null
        }]),
      insertAttempt: (attempt) => Effect.sync(() => void writes.push(`attempt:${attempt.statusCode}`)),
      keepAttemptEnding: (attempt) =>
        Effect.sync(() => writes.push(`attempt:${attempt.statusCode} with the end`)).pipe(
          Effect.as(options.leaseHeld ?? true)
        ),
      clearFailing: () => Effect.sync(() => void writes.push("clearFailing")),
      markFailing: (_, at) => Effect.sync(() => writes.push("markFailing")).pipe(Effect.as(Option.some(at))),
      disableEndpoint: (_, reason) => Effect.sync(() => void writes.push(`disable:${reason}`)),
      pendingOf: () => Effect.succeed([asId("delivery", "dlv_waiting")]),
      queueingDeliveries: () => ({ ctes: Statement.fragment([]), select: Statement.fragment([]) })
    }),
    Layer.mock(DeliveryQueue, {
      name: "webhooks",
      channel: "etd_webhook_deliveries",
      ending: () => Statement.fragment([]),
      enqueueing: () => {
        throw new Error("the worker enqueues nothing")
      },
      complete: (_, state) => Effect.sync(() => void writes.push(`complete:${state}`)),
      retryAt: () => Effect.sync(() => void writes.push("retryAt")),
      cancelWaiting: (ids, state) => Effect.sync(() => void writes.push(`cancel:${ids.join(",")}:${state}`))
    }),
    Layer.mock(EventLog, {
      findMany: () =>
        Effect.succeed([{
          id: delivery.eventId,
          tenantId: delivery.tenantId,
          environment: "test" as const,
          type: "quota.threshold",
          data: { object: { object: "quota" } },
          createdAt: new Date()
        }])
    }),
    AppConfigTest({
      webhooks: {
        allowPrivateTargets: true,
        timeout: Duration.seconds(5),
        concurrency: 1,
        pollInterval: Duration.seconds(1),
        lease: Duration.seconds(60)
      }
    }),
    // Marks where each transaction begins and ends, to see which writes it groups.
    recordingTransaction(writes)
  )
  return { writes, layer: mocks }
}

describe("WebhookDispatcher (neighbours mocked)", () => {
  it.live("a 2xx settles the delivery as succeeded and clears the endpoint's failing clock", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 204)
      const { layer, writes } = dispatcherTo(receiver.url())
      yield* Effect.flatMap(makeWebhookDispatcher, (dispatcher) => dispatcher.process(delivery)).pipe(
        Effect.provide(layer)
      )
      expect(receiver.received).toHaveLength(1)
      expect(receiver.received[0]!.headers["webhook-id"]).toBe(delivery.eventId)
      expect(writes).toEqual(["attempt:204", "BEGIN", "complete:succeeded", "clearFailing", "COMMIT"])
    }).pipe(Effect.scoped))

  it.live("a 2xx at an endpoint that is not failing is one write, without a transaction around it", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 200)
      const { layer, writes } = dispatcherTo(receiver.url(), { failing: false })
      yield* Effect.flatMap(makeWebhookDispatcher, (dispatcher) => dispatcher.process(delivery)).pipe(
        Effect.provide(layer)
      )
      expect(writes).toEqual(["attempt:200 with the end"])
    }).pipe(Effect.scoped))

  it.live("that one write keeps the attempt when the lease was lost, and settles nothing else", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 200)
      const { layer, writes } = dispatcherTo(receiver.url(), { failing: false, leaseHeld: false })
      yield* Effect.flatMap(makeWebhookDispatcher, (dispatcher) => dispatcher.process(delivery)).pipe(
        Effect.provide(layer)
      )
      expect(writes).toEqual(["attempt:200 with the end"])
    }).pipe(Effect.scoped))

  it.live("a 410 fails the delivery and disables the endpoint as gone, without a retry", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 410)
      const { layer, writes } = dispatcherTo(receiver.url())
      yield* Effect.flatMap(makeWebhookDispatcher, (dispatcher) => dispatcher.process(delivery)).pipe(
        Effect.provide(layer)
      )
      // The endpoint's other waiting deliveries end with it.
      expect(writes).toEqual([
        "attempt:410",
        "BEGIN",
        "complete:failed",
        "disable:gone",
        "cancel:dlv_waiting:failed",
        "COMMIT"
      ])
    }).pipe(Effect.scoped))

  it.live("any other answer starts the failing clock and schedules the next attempt", () =>
    Effect.gen(function*() {
      const receiver = yield* startReceiver(() => 500)
      const { layer, writes } = dispatcherTo(receiver.url())
      yield* Effect.flatMap(makeWebhookDispatcher, (dispatcher) => dispatcher.process(delivery)).pipe(
        Effect.provide(layer)
      )
      expect(writes).toEqual(["attempt:500", "BEGIN", "markFailing", "retryAt", "COMMIT"])
    }).pipe(Effect.scoped))
})
