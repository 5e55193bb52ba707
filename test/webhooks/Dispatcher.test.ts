/**
 * The WebhookDispatcher against real HTTP receivers on 127.0.0.1: the retry schedule (TestClock),
 * recovery of a failing receiver, 410, auto-disable after 5 days of failures, secret rotation,
 * crash recovery through leases, two dispatchers on one queue, SSRF refusals, and the
 * transactional fan-out of events into deliveries.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { type AppConfigShape, AppConfigTest } from "../../src/Config.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import { type EventType, WebhookEvent } from "../../src/domain/Events.js"
import { asId, encodeId, type TenantId } from "../../src/domain/Ids.js"
import type { Environment } from "../../src/domain/Principal.js"
import { EventLog } from "../../src/events/EventLog.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { DeliveryQueue } from "../../src/webhooks/DeliveryQueue.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import type { Resolver } from "../../src/webhooks/SsrfGuard.js"
import {
  makeWebhookDispatcher,
  nextDelay,
  WebhookDispatcherLive,
  WebhookResolver
} from "../../src/webhooks/WebhookDispatcher.js"
import { WebhookRepo } from "../../src/webhooks/WebhookRepo.js"
import { WebhookService } from "../../src/webhooks/WebhookService.js"
import { claimOne } from "../support/claimOne.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"
import { startReceiver, waitFor } from "./receiver.js"

const SPEC_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]

const webhookConfig = (overrides: Partial<AppConfigShape["webhooks"]> = {}): AppConfigShape["webhooks"] => ({
  allowPrivateTargets: true,
  timeout: Duration.seconds(10),
  concurrency: 2,
  pollInterval: Duration.millis(10),
  lease: Duration.seconds(60),
  ...overrides
})

const services = (instanceId = "dispatcher-a", webhooks: Partial<AppConfigShape["webhooks"]> = {}) =>
  Layer.mergeAll(WebhookService.layer, Readiness.layer, WebhookRepo.layer, DeliveryQueue.layer).pipe(
    Layer.provideMerge(EventLogLive),
    Layer.provideMerge(Transaction.layer),
    Layer.provideMerge(AppConfigTest({
      webhooks: webhookConfig(webhooks),
      queue: { instanceId, shutdownGrace: Duration.seconds(5) }
    }))
  )

let tenantCounter = 0
/** A tenant of its own; what earlier tests left queued is settled, so `drain` sees only this test's deliveries. */
const newTenant = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE status = 'pending'`
  tenantCounter += 1
  const id = asId(
    "tenant",
    `ten_webhooks${String(tenantCounter).padStart(6, "0")}${Math.random().toString(36).slice(2, 10)}`
  )
  yield* sql`
    INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at)
    VALUES (${id}, ${"Receptora Ltda"}, ${cnpj()}, ${100}, ${new Date()})`
  return id
})

const quotaEvent = (tenantId: TenantId, environment: Environment = "test", used = 80) => ({
  tenantId,
  environment,
  type: "quota.threshold" as EventType,
  object: { object: "quota", tenant_id: tenantId, period: "2026-11", limit: 100, used, threshold: 80 }
})

const emit = (event: ReturnType<typeof quotaEvent>) => Effect.flatMap(EventLog, (log) => log.record(event))

const endpoint = (
  tenantId: TenantId,
  url: string,
  events: ReadonlyArray<string> = ["*"],
  environment: Environment = "test"
) =>
  Effect.flatMap(
    WebhookService,
    (service) => service.create({ tenantId, environment }, { url, events: events as ReadonlyArray<EventType> })
  )

interface DeliveryState {
  readonly status: string
  readonly attempts: number
  readonly nextAttemptAt: Date | null
  readonly lastStatusCode: number | null
  readonly lastError: string | null
}

const deliveriesOf = (endpointId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<DeliveryState & { id: string; eventId: string }>`
      SELECT id, event_id, status, attempts, next_attempt_at, last_status_code, last_error
      FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY id`)

const endpointState = (endpointId: string) =>
  Effect.map(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ enabled: boolean; disabledReason: string | null }>`
        SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = ${endpointId}`),
    (rows) => rows[0]!
  )

/** The next due delivery, leased as the dispatcher leases them. */
const nextDelivery = Effect.flatMap(DeliveryQueue, (queue: DeliveryQueue["Service"]) => claimOne(queue))

/** A receiver, a new tenant's endpoint to it and one event for it, the clock at a fixed time. */
const oneEventToNewEndpoint = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-11-10T12:00:00Z"))
  const receiver = yield* startReceiver()
  const tenantId = yield* newTenant
  const hook = yield* endpoint(tenantId, receiver.url())
  yield* emit(quotaEvent(tenantId))
  return { hook, receiver }
})

/** Claims and sends every due delivery (none of which stays in flight). */
const drain = Effect.gen(function*() {
  const dispatcher = yield* makeWebhookDispatcher
  let sent = 0
  for (;;) {
    const claimed = yield* nextDelivery
    if (Option.isNone(claimed)) return sent
    yield* dispatcher.process(claimed.value)
    sent++
  }
})

/** Every signature in the header that `secret` produces (Standard Webhooks' own signer). */
const signedBy = (secret: string, request: { headers: Record<string, string>; body: string }) => {
  const expected = new Webhook(secret).sign(
    request.headers["webhook-id"]!,
    new Date(Number(request.headers["webhook-timestamp"]) * 1000),
    request.body
  )
  return request.headers["webhook-signature"]!.split(" ").includes(expected)
}

describe("retry schedule", () => {
  it.effect("is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, jittered by at most 10 %", () =>
    Effect.gen(function*() {
      for (let run = 0; run < 20; run++) {
        for (const [i, expected] of SPEC_DELAYS_MS.entries()) {
          const delay = Duration.toMillis(Option.getOrThrow(yield* nextDelay(i + 1)))
          expect(delay).toBeGreaterThanOrEqual(expected * 0.9)
          expect(delay).toBeLessThanOrEqual(expected * 1.1)
        }
        expect(Option.isNone(yield* nextDelay(8))).toBe(true)
      }
    }))
})

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 120_000 })(
    `webhook dispatcher (${database})`,
    (it) => {
      it.effect("retries on the schedule (TestClock) until the receiver recovers; webhook-id is stable", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(Date.parse("2026-11-10T12:00:00Z"))
          const receiver = yield* startReceiver((_, i) => (i < 3 ? 500 : 204))
          const tenantId = yield* newTenant
          const hook = yield* endpoint(tenantId, receiver.url())
          yield* emit(quotaEvent(tenantId))

          expect(yield* drain).toBe(1)
          // Not before 4.5 s (5 s − 10 %); by 5.5 s at the latest.
          yield* TestClock.adjust("4400 millis")
          expect(yield* drain).toBe(0)
          yield* TestClock.adjust("1200 millis")
          expect(yield* drain).toBe(1)
          // 5 min ± 10 %: not at 4 min 20 s, certainly at 5 min 40 s.
          yield* TestClock.adjust("260 seconds")
          expect(yield* drain).toBe(0)
          yield* TestClock.adjust("80 seconds")
          expect(yield* drain).toBe(1)
          // 30 min ± 10 %: not at 26 min, certainly at 34 min.
          yield* TestClock.adjust("26 minutes")
          expect(yield* drain).toBe(0)
          yield* TestClock.adjust("8 minutes")
          expect(yield* drain).toBe(1)

          expect(receiver.received.length).toBe(4)
          const [delivery] = yield* deliveriesOf(hook.id)
          expect(delivery).toMatchObject({ status: "succeeded", attempts: 4, lastStatusCode: 204, nextAttemptAt: null })
          expect(new Set(receiver.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([delivery!.eventId]))
          expect(new Set(receiver.received.map((r) => r.headers["webhook-timestamp"])).size).toBe(4)
          for (const request of receiver.received) {
            expect(signedBy(hook.secret, request)).toBe(true)
            const body = Schema.decodeUnknownSync(WebhookEvent)(JSON.parse(request.body))
            expect(body).toMatchObject({
              id: delivery!.eventId,
              type: "quota.threshold",
              tenant_id: tenantId,
              environment: "test"
            })
          }
          const sql = yield* SqlClient.SqlClient
          const attempts = yield* sql<
            { attempt: number; statusCode: number; responseBody: string; error: string | null }
          >`
          SELECT attempt, status_code, response_body, error FROM webhook_delivery_attempts
          WHERE delivery_id = ${delivery!.id} ORDER BY id`
          expect(attempts.map((a) => [a.attempt, a.statusCode])).toEqual([[1, 500], [2, 500], [3, 500], [4, 204]])
          expect(attempts[0]!.responseBody).toBe("status 500")
          yield* TestClock.adjust("1 day")
          expect(yield* drain).toBe(0)
        }).pipe(Effect.provide(services())))

      it.effect("gives up after the eighth attempt, keeps at most 1 KiB of each answer", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(Date.parse("2026-11-10T12:00:00Z"))
          const receiver = yield* startReceiver(() => ({ status: 503, body: "x".repeat(5000) }))
          const tenantId = yield* newTenant
          const hook = yield* endpoint(tenantId, receiver.url())
          yield* emit(quotaEvent(tenantId))
          for (let hour = 0; hour < 40; hour++) {
            yield* drain
            yield* TestClock.adjust("1 hour")
          }
          expect(receiver.received.length).toBe(8)
          const [delivery] = yield* deliveriesOf(hook.id)
          expect(delivery).toMatchObject({ status: "failed", attempts: 8, lastStatusCode: 503, lastError: "HTTP 503" })
          const sql = yield* SqlClient.SqlClient
          const lengths = yield* sql<{ length: number }>`
          SELECT length(response_body) AS length FROM webhook_delivery_attempts WHERE delivery_id = ${delivery!.id}`
          expect(lengths.every((l) => l.length === 1024)).toBe(true)
          // About 28 h of retries is well short of the 5 days that disable an endpoint.
          expect((yield* endpointState(hook.id)).enabled).toBe(true)
        }).pipe(Effect.provide(services())))

      it.effect("410 Gone disables the endpoint and stops its other deliveries", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 410)
          const tenantId = yield* newTenant
          const hook = yield* endpoint(tenantId, receiver.url())
          yield* emit(quotaEvent(tenantId))
          yield* emit(quotaEvent(tenantId, "test", 100))
          const dispatcher = yield* makeWebhookDispatcher
          yield* dispatcher.process(Option.getOrThrow(yield* nextDelivery))
          expect(yield* endpointState(hook.id)).toEqual({ enabled: false, disabledReason: "gone" })
          expect((yield* deliveriesOf(hook.id)).map((d) => d.status)).toEqual(["failed", "failed"])
          yield* emit(quotaEvent(tenantId))
          expect((yield* deliveriesOf(hook.id)).length).toBe(2)
          expect(yield* drain).toBe(0)
          expect(receiver.received.length).toBe(1)
        }).pipe(Effect.provide(services())))

      it.effect("an endpoint failing continuously for 5 days is disabled; a success resets the clock", () =>
        Effect.gen(function*() {
          const start = Date.parse("2026-11-10T12:00:00Z")
          yield* TestClock.setTime(start)
          const receiver = yield* startReceiver(() => 500)
          const tenantId = yield* newTenant
          const hook = yield* endpoint(tenantId, receiver.url())
          const other = yield* endpoint(tenantId, receiver.url("/other"))
          let disabledAfter: number | undefined
          // One event every 6 hours; everything due is sent as time passes.
          for (let step = 0; step < 6 * 4 && disabledAfter === undefined; step++) {
            yield* emit(quotaEvent(tenantId))
            yield* drain
            // The other endpoint recovers every day, so its failure clock starts over.
            receiver.respond = (request) => (request.path === "/other" && step % 4 === 3 ? 200 : 500)
            const state = yield* endpointState(hook.id)
            if (!state.enabled) disabledAfter = step * 6
            else yield* TestClock.adjust("6 hours")
          }
          expect(disabledAfter).toBeGreaterThanOrEqual(5 * 24)
          expect(disabledAfter).toBeLessThanOrEqual(5 * 24 + 6)
          expect(yield* endpointState(hook.id)).toEqual({ enabled: false, disabledReason: "failing" })
          expect((yield* deliveriesOf(hook.id)).every((d) => d.status !== "pending")).toBe(true)
          expect((yield* endpointState(other.id)).enabled).toBe(true)
        }).pipe(Effect.provide(services())))

      it.effect("during a rotation both secrets sign for 24 h, then only the new one", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(Date.now())
          const receiver = yield* startReceiver()
          const tenantId = yield* newTenant
          const hook = yield* endpoint(tenantId, receiver.url())
          const rotated = yield* Effect.flatMap(
            WebhookService,
            (s) => s.rotateSecret({ tenantId, environment: "test" }, asId("webhookEndpoint", hook.id))
          )
          expect(rotated.secret).not.toBe(hook.secret)
          expect(rotated.previous_secret_expires_at?.getTime()).toBe(rotated.updated_at.getTime() + 24 * 3600_000)
          yield* emit(quotaEvent(tenantId))
          yield* drain
          const during = receiver.received[0]!
          expect(during.headers["webhook-signature"]!.split(" ").length).toBe(2)
          // The published library verifies with either secret (the clock is real time here).
          new Webhook(hook.secret).verify(during.body, during.headers)
          new Webhook(rotated.secret).verify(during.body, during.headers)

          yield* TestClock.adjust("24 hours")
          yield* TestClock.adjust("1 second")
          yield* emit(quotaEvent(tenantId))
          yield* drain
          const after = receiver.received[1]!
          expect(after.headers["webhook-signature"]!.split(" ").length).toBe(1)
          expect(signedBy(rotated.secret, after)).toBe(true)
          expect(signedBy(hook.secret, after)).toBe(false)
        }).pipe(Effect.provide(services())))

      it.effect("crash recovery: a claimed delivery whose worker died is sent once its lease runs out", () =>
        Effect.gen(function*() {
          const { hook, receiver } = yield* oneEventToNewEndpoint
          // Instance A claims and dies before sending.
          const crashed = yield* Effect.provide(nextDelivery, services("instance-a"))
          expect(Option.isSome(crashed)).toBe(true)
          yield* Effect.gen(function*() {
            const dispatcher = yield* makeWebhookDispatcher
            expect(Option.isNone(yield* nextDelivery)).toBe(true) // still leased by A
            yield* TestClock.adjust("61 seconds")
            yield* dispatcher.process(Option.getOrThrow(yield* nextDelivery))
          }).pipe(Effect.provide(services("instance-b")))
          expect(receiver.received.length).toBe(1)
          expect((yield* deliveriesOf(hook.id))[0]).toMatchObject({ status: "succeeded", attempts: 2 })
        }).pipe(Effect.provide(services())))

      it.effect("a success sent after its lease ran out keeps its attempt and leaves the delivery to its new owner", () =>
        Effect.gen(function*() {
          const { hook, receiver } = yield* oneEventToNewEndpoint
          const stale = Option.getOrThrow(yield* Effect.provide(nextDelivery, services("instance-a")))
          // A stalls past its lease; B claims the delivery.
          yield* TestClock.adjust("61 seconds")
          const current = Option.getOrThrow(yield* Effect.provide(nextDelivery, services("instance-b")))
          // A wakes and sends: its attempt is kept, its end is not written.
          yield* Effect.provide(Effect.flatMap(makeWebhookDispatcher, (d) => d.process(stale)), services("instance-a"))
          const sql = yield* SqlClient.SqlClient
          const attempts = () =>
            sql<{ readonly statusCode: number | null }>`
              SELECT status_code FROM webhook_delivery_attempts WHERE delivery_id = ${stale.id} ORDER BY id`
          expect(yield* attempts()).toEqual([{ statusCode: 200 }])
          expect((yield* deliveriesOf(hook.id))[0]).toMatchObject({ status: "pending", attempts: 2 })
          yield* Effect.provide(
            Effect.flatMap(makeWebhookDispatcher, (d) => d.process(current)),
            services("instance-b")
          )
          expect(yield* attempts()).toEqual([{ statusCode: 200 }, { statusCode: 200 }])
          expect((yield* deliveriesOf(hook.id))[0]).toMatchObject({ status: "succeeded", attempts: 2 })
          expect(receiver.received.length).toBe(2)
        }).pipe(Effect.provide(services())))

      it.effect("an endpoint that answers 410, or is disabled, ends its waiting deliveries; one in flight settles on its own", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(Date.parse("2026-11-10T12:00:00Z"))
          const receiver = yield* startReceiver(() => 410)
          const tenantId = yield* newTenant
          const dispatcher = yield* makeWebhookDispatcher
          const statuses = (endpointId: string) =>
            Effect.map(deliveriesOf(endpointId), (rows) => rows.map((row) => [row.id, row.status, row.lastError]))

          // 410: three deliveries; one is in flight elsewhere while another gets the 410.
          const gone = yield* endpoint(tenantId, receiver.url())
          for (let i = 0; i < 3; i++) yield* emit(quotaEvent(tenantId))
          const elsewhere = Option.getOrThrow(yield* nextDelivery)
          const answered = Option.getOrThrow(yield* nextDelivery)
          yield* dispatcher.process(answered)
          const afterGone = yield* statuses(gone.id)
          expect(afterGone.find(([id]) => id === elsewhere.id)?.[1]).toBe("pending")
          expect(afterGone.find(([id]) => id === answered.id)?.slice(1)).toEqual(["failed", "HTTP 410"])
          expect(afterGone.filter(([id]) => id !== elsewhere.id && id !== answered.id).map((row) => row.slice(1)))
            .toEqual([["failed", "endpoint disabled"]])

          // Disabled through the API: the same, for its two deliveries.
          const manual = yield* endpoint(tenantId, "http://127.0.0.1:9/manual")
          for (let i = 0; i < 2; i++) yield* emit(quotaEvent(tenantId))
          const held = Option.getOrThrow(yield* nextDelivery)
          expect(held.endpointId).toBe(manual.id)
          yield* (yield* WebhookService).update({ tenantId, environment: "test" }, asId("webhookEndpoint", manual.id), {
            enabled: false
          })
          const afterManual = yield* statuses(manual.id)
          expect(afterManual.find(([id]) => id === held.id)?.[1]).toBe("pending")
          expect(afterManual.filter(([id]) => id !== held.id).map((row) => row.slice(1))).toEqual([[
            "failed",
            "endpoint disabled"
          ]])
        }).pipe(Effect.provide(services())))

      it.effect("fan-out is part of the event's transaction and honours filters, state and environment", () =>
        Effect.gen(function*() {
          const tenantId = yield* newTenant
          const all = yield* endpoint(tenantId, "http://127.0.0.1:9/all")
          const quota = yield* endpoint(tenantId, "http://127.0.0.1:9/quota", ["quota.threshold"])
          const documents = yield* endpoint(tenantId, "http://127.0.0.1:9/docs", [
            "document.authorized",
            "document.rejected"
          ])
          const live = yield* endpoint(tenantId, "http://127.0.0.1:9/live", ["*"], "live")
          const disabled = yield* endpoint(tenantId, "http://127.0.0.1:9/off")
          const service = yield* WebhookService
          yield* service.update({ tenantId, environment: "test" }, asId("webhookEndpoint", disabled.id), {
            enabled: false
          })
          const sql = yield* SqlClient.SqlClient

          const rolledBack = yield* emit(quotaEvent(tenantId)).pipe(
            Effect.andThen(Effect.fail("the state change failed" as const)),
            sql.withTransaction,
            Effect.flip
          )
          expect(rolledBack).toBe("the state change failed")
          const [counted] = yield* sql<{ events: number; deliveries: number }>`
          SELECT (SELECT count(*)::int FROM events WHERE tenant_id = ${tenantId}) AS events,
                 (SELECT count(*)::int FROM webhook_deliveries WHERE tenant_id = ${tenantId}) AS deliveries`
          expect(counted).toEqual({ events: 0, deliveries: 0 })

          // Carried by another statement, written only where its gate holds: a gate that does not
          // hold (an outcome whose lease was lost) writes neither the event nor its deliveries.
          const gatedOff = (yield* (yield* EventLog).recording(quotaEvent(tenantId)))(sql`false`)
          yield* sql`WITH ${gatedOff.ctes} SELECT ${gatedOff.select} AS notified`
          const [stillNone] = yield* sql<{ events: number }>`
          SELECT count(*)::int AS events FROM events WHERE tenant_id = ${tenantId}`
          expect(stillNone).toEqual({ events: 0 })

          const eventId = yield* emit(quotaEvent(tenantId))
          const rows = yield* sql<
            { id: string; endpointId: string; status: string; createdAt: Date }
          >`SELECT id, endpoint_id, status, created_at FROM webhook_deliveries WHERE event_id = ${eventId}`
          expect(rows.map((r) => r.endpointId).sort()).toEqual([all.id, quota.id].sort())
          expect(rows.map((r) => r.endpointId)).not.toContain(documents.id)
          expect(rows.map((r) => r.endpointId)).not.toContain(live.id)
          // Ids made in the statement: well formed, one per endpoint, timed by their creation as any id.
          expect(rows.every((r) => /^dlv_[0-9a-hjkmnp-tv-z]{26}$/.test(r.id) && r.status === "pending")).toBe(true)
          expect(new Set(rows.map((r) => r.id)).size).toBe(2)
          expect(rows.map((r) => r.id.slice(0, 14))).toEqual(
            rows.map((r) => encodeId("delivery", new Date(r.createdAt).getTime(), new Uint8Array(10)).slice(0, 14))
          )
        }).pipe(Effect.provide(services())))

      it.effect("replay sends again now; recover requeues the failed deliveries since a time", () =>
        Effect.gen(function*() {
          const start = Date.parse("2026-11-10T12:00:00Z")
          yield* TestClock.setTime(start)
          const receiver = yield* startReceiver(() => 200)
          const tenantId = yield* newTenant
          const owner = { tenantId, environment: "test" as const }
          const hook = yield* endpoint(tenantId, receiver.url())
          const hookId = asId("webhookEndpoint", hook.id)
          const service = yield* WebhookService
          yield* emit(quotaEvent(tenantId))
          yield* drain
          const [first] = yield* deliveriesOf(hook.id)
          const firstId = asId("delivery", first!.id)
          const replayed = yield* service.replay(owner, firstId)
          expect(replayed.status).toBe("pending")
          expect(yield* drain).toBe(1)
          expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([first!.eventId, first!.eventId])
          const detail = yield* service.getDelivery(owner, firstId)
          expect(detail.status).toBe("succeeded")
          expect(detail.attempts.map((a) => a.status_code)).toEqual([200, 200])

          // Three deliveries fail for good (the endpoint is disabled while they wait), an hour apart.
          receiver.respond = () => 500
          for (let i = 0; i < 3; i++) {
            yield* TestClock.adjust("1 hour")
            yield* emit(quotaEvent(tenantId))
          }
          yield* service.update(owner, hookId, { enabled: false })
          expect(yield* Effect.flip(service.recover(owner, hookId, new Date(start)))).toMatchObject({
            _tag: "InvalidState"
          })
          expect(yield* Effect.flip(service.replay(owner, firstId))).toMatchObject({ _tag: "InvalidState" })
          yield* service.update(owner, hookId, { enabled: true })
          receiver.respond = () => 200
          const recovery = yield* service.recover(owner, hookId, new Date(start + 90 * 60_000))
          expect(recovery.recovered).toBe(2)
          expect(yield* drain).toBe(2)
          const statuses = (yield* deliveriesOf(hook.id)).map((d) => d.status)
          expect(statuses).toEqual(["succeeded", "failed", "succeeded", "succeeded"])
        }).pipe(Effect.provide(services())))

      it.effect("SSRF: every non-public range is refused before connecting, and so is a name resolving into one", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver()
          const tenantId = yield* newTenant
          const sql = yield* SqlClient.SqlClient
          const targets = [
            "http://127.0.0.1:PORT/", // loopback, with private targets not allowed
            "http://[::1]:PORT/",
            "http://10.1.2.3/",
            "http://172.16.5.4/",
            "http://192.168.0.10/",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://224.0.0.251/",
            "http://192.0.2.10/",
            "http://198.51.100.7/",
            "http://203.0.113.9/",
            "http://[::ffff:10.0.0.1]/",
            "http://[::ffff:127.0.0.1]:PORT/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[ff02::1]/",
            "http://[2001:db8::1]/",
            "http://internal.example.com:PORT/" // resolves to 10.0.0.7 (hostile DNS)
          ].map((url) => url.replace("PORT", String(receiver.port)))
          const hostile: Resolver = (hostname) =>
            Promise.resolve(hostname === "internal.example.com" ? [{ address: "10.0.0.7", family: 4 }] : [])
          // Creation refuses these targets (tested over HTTP), so each is written past it, as a URL
          // that was public when registered and whose DNS later changed would be.
          const hooks = yield* Effect.forEach(targets, (url) =>
            Effect.tap(
              endpoint(tenantId, "https://hooks.example.com/"),
              (hook) => sql`UPDATE webhook_endpoints SET url = ${url} WHERE id = ${hook.id}`
            ))
          yield* emit(quotaEvent(tenantId))
          yield* drain.pipe(
            Effect.provide(services("strict", { allowPrivateTargets: false })),
            Effect.provideService(WebhookResolver, { resolve: hostile })
          )
          expect(receiver.received).toEqual([])
          for (const [i, hook] of hooks.entries()) {
            const [attempt] = yield* sql<{ statusCode: number | null; error: string }>`
            SELECT a.status_code, a.error FROM webhook_delivery_attempts a
            JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.endpoint_id = ${hook.id}`
            expect(attempt?.statusCode, targets[i]).toBeNull()
            expect(attempt?.error, targets[i]).toMatch(/refused by the SSRF guard/)
          }
          const [named] = yield* sql<{ error: string }>`
          SELECT a.error FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
          WHERE d.endpoint_id = ${hooks.at(-1)!.id}`
          // The tenant learns that the name was refused, not which internal address it resolves to.
          expect(named!.error).toMatch(/refused by the SSRF guard/)
          expect(named!.error).not.toContain("10.0.0.7")

          // A name resolving to loopback, with loopback allowed: connects to exactly that address.
          const friendly: Resolver = () => Promise.resolve([{ address: "127.0.0.1", family: 4 }])
          const named2 = yield* endpoint(tenantId, `http://receiver.example.com:${receiver.port}/named`, [
            "quota.threshold"
          ])
          yield* sql`UPDATE webhook_endpoints SET enabled = false WHERE id <> ${named2.id} AND tenant_id = ${tenantId}`
          yield* emit(quotaEvent(tenantId))
          yield* drain.pipe(Effect.provideService(WebhookResolver, { resolve: friendly }))
          expect(receiver.received.map((r) => r.path)).toEqual(["/named"])
          expect(receiver.received[0]!.headers["host"]).toBe(`receiver.example.com:${receiver.port}`)
        }).pipe(Effect.provide(services())))

      // Real time from here on: many fibers race on the queue.
      it.effect("two dispatchers share the queue without sending anything twice", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 200)
          const tenantId = yield* newTenant
          const hook = yield* endpoint(tenantId, receiver.url())
          yield* Effect.forEach(Array.from({ length: 40 }), (_, i) => emit(quotaEvent(tenantId, "test", i)), {
            discard: true
          })
          const scope = yield* Scope.make()
          yield* Layer.buildWithScope(
            WebhookDispatcherLive.pipe(Layer.provide(services("pool-a", { concurrency: 4 }))),
            scope
          )
          yield* Layer.buildWithScope(
            WebhookDispatcherLive.pipe(Layer.provide(services("pool-b", { concurrency: 4 }))),
            scope
          )
          yield* waitFor(() => receiver.received.length >= 40)
          yield* Effect.sleep("200 millis")
          yield* Scope.close(scope, Exit.void)
          expect(receiver.received.length).toBe(40)
          expect(new Set(receiver.received.map((r) => r.headers["webhook-id"])).size).toBe(40)
          const rows = yield* deliveriesOf(hook.id)
          expect(rows.every((d) => d.status === "succeeded" && d.attempts === 1)).toBe(true)
        }).pipe(Effect.provide(services()), TestClock.withLive))
    }
  )
}
