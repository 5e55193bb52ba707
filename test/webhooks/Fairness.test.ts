/**
 * SPEC §11 fairness for webhook deliveries, against real HTTP receivers on 127.0.0.1: a tenant whose
 * receivers never answer holds at most its cap of the dispatcher's workers, so another tenant's
 * delivery goes out at once; and the caps per tenant and per endpoint hold across two dispatchers
 * (two instances) on one database.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { type AppConfigShape, AppConfigTest } from "../../src/Config.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import type { EventType } from "../../src/domain/Events.js"
import { asId, type TenantId } from "../../src/domain/Ids.js"
import { EventLog } from "../../src/events/EventLog.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { DeliveryQueue } from "../../src/webhooks/DeliveryQueue.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import { WebhookDispatcherLive } from "../../src/webhooks/WebhookDispatcher.js"
import { WebhookRepo } from "../../src/webhooks/WebhookRepo.js"
import { WebhookService } from "../../src/webhooks/WebhookService.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"
import { startHoldingReceiver, startReceiver, waitFor } from "./receiver.js"

const services = (instanceId: string, fairness: Partial<AppConfigShape["fairness"]> = {}) =>
  Layer.mergeAll(WebhookService.layer, Readiness.layer, WebhookRepo.layer, DeliveryQueue.layer).pipe(
    Layer.provideMerge(EventLogLive),
    Layer.provideMerge(Transaction.layer),
    Layer.provideMerge(AppConfigTest({
      webhooks: {
        allowPrivateTargets: true,
        // SPEC §9 says 10 s; shorter here, so the tarpits' attempts end within the test.
        timeout: Duration.seconds(2),
        concurrency: 8,
        pollInterval: Duration.millis(20),
        lease: Duration.seconds(60)
      },
      fairness: { issuancePerTenant: 2, webhooksPerTenant: 4, webhooksPerEndpoint: 4, ...fairness },
      queue: { instanceId, shutdownGrace: Duration.millis(200) }
    }))
  )

let tenantCounter = 0
const newTenant = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  tenantCounter += 1
  const id = asId(
    "tenant",
    `ten_fair${String(tenantCounter).padStart(4, "0")}${Math.random().toString(36).slice(2, 10)}`
  )
  yield* sql`
    INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at)
    VALUES (${id}, ${"Receptora Ltda"}, ${cnpj()}, ${100}, ${new Date()})`
  return id
})

const endpoints = (tenantId: TenantId, urls: ReadonlyArray<string>) =>
  Effect.flatMap(
    WebhookService,
    (service) =>
      Effect.forEach(urls, (url) => service.create({ tenantId, environment: "test" }, { url, events: ["*"] }))
  )

/** `count` events of the tenant, each delivered to every endpoint of it. */
const emit = (tenantId: TenantId, count: number) =>
  Effect.flatMap(EventLog, (log) =>
    Effect.forEach(Array.from({ length: count }, (_, i) => i), (used) =>
      log.record({
        tenantId,
        environment: "test",
        type: "quota.threshold" as EventType,
        object: { object: "quota", tenant_id: tenantId, period: "2026-11", limit: 100, used, threshold: 80 }
      }), { discard: true }))

/**
 * Runs a dispatcher (one instance, with a queue and configuration of its own) until `scope` is
 * closed. A memo map of its own: in the test's, the queue already built for the setup would be
 * shared, with the setup's configuration.
 */
const dispatcher = (scope: Scope.Scope, instanceId: string, fairness: Partial<AppConfigShape["fairness"]> = {}) =>
  Effect.flatMap(
    Layer.makeMemoMap,
    (memoMap) =>
      Layer.buildWithMemoMap(WebhookDispatcherLive.pipe(Layer.provide(services(instanceId, fairness))), memoMap, scope)
  )

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `webhook fairness (${database})`,
    (it) => {
      it.effect("a tenant whose 20 receivers never answer holds at most its cap of workers: another tenant's delivery goes out at once", () =>
        Effect.gen(function*() {
          const tarpit = yield* startHoldingReceiver("never")
          const receiver = yield* startReceiver(() => 200)
          const noisy = yield* newTenant
          const quiet = yield* newTenant
          yield* endpoints(noisy, Array.from({ length: 20 }, (_, i) => tarpit.url(`/noisy/${i}`)))
          yield* endpoints(quiet, [receiver.url("/quiet")])
          // 100 deliveries that each hold a worker for the whole timeout.
          yield* emit(noisy, 5)
          const scope = yield* Scope.make()
          yield* dispatcher(scope, "fair-a")
          yield* waitFor(() => tarpit.inFlight() >= 4)
          const emittedAt = Date.now()
          yield* emit(quiet, 1)
          yield* waitFor(() => receiver.received.length === 1)
          const waited = Date.now() - emittedAt
          const noisyInFlight = tarpit.inFlight()
          yield* Scope.close(scope, Exit.void)
          // Without the cap all eight workers wait on the tarpits, and the quiet tenant's delivery
          // waits for them (2 s each), behind all 100 when claimed oldest first.
          expect(waited).toBeLessThan(1500)
          expect(noisyInFlight).toBe(4)
          expect(tarpit.maxInFlight()).toBe(4)
        }).pipe(Effect.provide(services("fair-setup")), TestClock.withLive))

      it.effect("two dispatchers together send at most the tenant's cap at once, and at most the endpoint's cap to one endpoint", () =>
        Effect.gen(function*() {
          const caps = { webhooksPerTenant: 3, webhooksPerEndpoint: 2 }
          // One receiver per tenant, so each counts one tenant's requests in flight.
          const first = yield* startHoldingReceiver(150)
          const second = yield* startHoldingReceiver(150)
          const busy = yield* newTenant
          const other = yield* newTenant
          yield* endpoints(busy, [first.url("/busy/0"), first.url("/busy/1")])
          yield* endpoints(other, [second.url("/other/0")])
          yield* emit(busy, 15)
          yield* emit(other, 10)
          const scope = yield* Scope.make()
          // Sixteen workers in all, far more than the caps.
          yield* dispatcher(scope, "fair-b", caps)
          yield* dispatcher(scope, "fair-c", caps)
          yield* waitFor(() => first.arrivals.length === 30 && second.arrivals.length === 10, 20_000)
          yield* Scope.close(scope, Exit.void)
          expect(first.maxInFlight()).toBe(3)
          expect(first.maxInFlightAt("/busy/0")).toBeLessThanOrEqual(2)
          expect(first.maxInFlightAt("/busy/1")).toBeLessThanOrEqual(2)
          expect(second.maxInFlight()).toBe(2)
          expect(new Set(first.arrivals).size).toBe(2)
        }).pipe(Effect.provide(services("fair-setup")), TestClock.withLive))
    }
  )
}
