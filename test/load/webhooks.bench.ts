/**
 * Webhook delivery benchmark: deliveries per second from the WebhookDispatcher to a local
 * receiver, and the delay from the state change (the event's `created_at`, written in the same
 * transaction) to the receiver holding the delivery (p50/p99), plus memory. Loopback only,
 * bounded in count and time. Events are recorded directly through EventLog (the outbox the
 * document pipeline writes to), so the figure is the webhook path alone.
 *
 *   npm run bench:webhooks                           # 2000 events, 1 endpoint
 *   BENCH_EVENTS=5000 BENCH_ENDPOINTS=2 WEBHOOKS_CONCURRENCY=16 npm run bench:webhooks
 *   WEBHOOKS_ENDPOINT_CONCURRENCY=8 WEBHOOKS_TENANT_CONCURRENCY=8 npm run bench:webhooks  # caps at the pool
 *   DATABASE_URL=postgres://… npm run bench:webhooks # on PostgreSQL instead of the embedded database
 *
 * Its phases (a burst, a backlog's drain, a paced run) are different measures of one dispatcher,
 * not variants of it, so nothing here is interleaved and there is no floor to divide by (a bare
 * HTTP client posting the same bodies would measure the receiver, not delivery). To compare two
 * trees, run this file alternately on each, ≥ 3 rounds alternating which goes first, and compare
 * the medians.
 */
import { Duration, Effect, Exit, Fiber, Layer, ManagedRuntime, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus, totalmem } from "node:os"
import { Webhook } from "standardwebhooks"
import { AppConfigTest } from "../../src/Config.js"
import { embeddedLayer, MigrationsLive, postgresLayer } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import { asId } from "../../src/domain/Ids.js"
import { EventLog } from "../../src/events/EventLog.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { DeliveryQueue } from "../../src/webhooks/DeliveryQueue.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import { WebhookDispatcherLive } from "../../src/webhooks/WebhookDispatcher.js"
import { WebhookRepo } from "../../src/webhooks/WebhookRepo.js"
import { WebhookService } from "../../src/webhooks/WebhookService.js"
import { cnpj } from "../support/taxIds.js"

const EVENTS = Number(process.env["BENCH_EVENTS"] ?? 2000)
const ENDPOINTS = Number(process.env["BENCH_ENDPOINTS"] ?? 1)
const EMIT_CONCURRENCY = Number(process.env["BENCH_EMIT_CONCURRENCY"] ?? 8)
/** Events per second for the paced run (below capacity: the delay without a backlog); 0 skips it. */
const PACED_RATE = Number(process.env["BENCH_RATE"] ?? 50)
const PACED_EVENTS = Number(process.env["BENCH_PACED_EVENTS"] ?? 500)
// The service's defaults unless set (32 in flight, 16 per tenant and per endpoint); the README's
// tables before issue 11 used 8, 4 and 4.
const DISPATCH_CONCURRENCY = Number(process.env["WEBHOOKS_CONCURRENCY"] ?? 32)
/** The caps of SPEC §11 fairness, at the service's defaults unless set (one tenant and its endpoints here). */
const TENANT_CAP = Number(process.env["WEBHOOKS_TENANT_CONCURRENCY"] ?? Math.ceil(DISPATCH_CONCURRENCY / 2))
const ENDPOINT_CAP = Number(process.env["WEBHOOKS_ENDPOINT_CONCURRENCY"] ?? 16)
const DEADLINE_MS = 120_000

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

/**
 * burst: events recorded as fast as possible while the dispatcher runs (recording and sending
 * share the CPU); drain: the backlog is recorded first, then the dispatcher starts (its throughput
 * alone); paced: events below capacity (the delay without a backlog).
 */
const main = async (mode: "burst" | "drain" | "paced") => {
  const total = mode === "paced" ? PACED_EVENTS : EVENTS
  // The receiver: records arrival time; verifies a sample of signatures with the published library.
  const arrivals: Array<{ key: string; createdAt: number; receivedAt: number }> = []
  let verifyWith: Webhook | undefined
  let verified = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const receivedAt = Date.now()
      const body = Buffer.concat(chunks).toString("utf8")
      const event = JSON.parse(body) as { id: string; created_at: string }
      if (verifyWith !== undefined && arrivals.length % 50 === 0) {
        verifyWith.verify(body, req.headers as Record<string, string>)
        verified++
      }
      arrivals.push({ key: `${req.url} ${event.id}`, createdAt: Date.parse(event.created_at), receivedAt })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port

  const database = process.env["DATABASE_URL"] ? postgresLayer(process.env["DATABASE_URL"]) : embeddedLayer(undefined)
  const config = AppConfigTest({
    webhooks: {
      allowPrivateTargets: true,
      timeout: Duration.seconds(10),
      concurrency: DISPATCH_CONCURRENCY,
      pollInterval: Duration.seconds(1),
      lease: Duration.seconds(60)
    },
    queue: { instanceId: "bench", shutdownGrace: Duration.seconds(5) },
    issuance: { concurrency: 1, pollInterval: Duration.seconds(1), lease: Duration.seconds(60) },
    fairness: { issuancePerTenant: 1, webhooksPerTenant: TENANT_CAP, webhooksPerEndpoint: ENDPOINT_CAP }
  })
  const services = Layer.mergeAll(WebhookService.layer, Readiness.layer, WebhookRepo.layer, DeliveryQueue.layer).pipe(
    Layer.provideMerge(EventLogLive),
    Layer.provideMerge(Transaction.layer),
    Layer.provideMerge(Layer.provideMerge(MigrationsLive, database)),
    Layer.provideMerge(config)
  )
  const runtime = ManagedRuntime.make(services)
  let peakRss = 0
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100)
  try {
    const tenantId = asId("tenant", `ten_bench${Date.now()}`)
    const secrets = await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // A fresh CNPJ per run: the burst and paced runs share one database on PostgreSQL (tax_id is unique).
      yield* sql`INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at) VALUES (${tenantId}, 'Bench', ${cnpj()}, 100, now())`
      const webhooks = yield* WebhookService
      return yield* Effect.forEach(Array.from({ length: ENDPOINTS }, (_, i) => i), (i) =>
        Effect.map(
          webhooks.create({ tenantId, environment: "test" }, {
            url: `http://127.0.0.1:${port}/hook/${i}`,
            events: ["*"]
          }),
          (endpoint) => endpoint.secret
        ))
    }))
    verifyWith = new Webhook(secrets[0]!)
    const expected = total * ENDPOINTS

    // The dispatcher runs in its own scope, started before the load as it would be in the service
    // (after it when draining a backlog).
    const startDispatcher = () =>
      runtime.runPromise(Effect.gen(function*() {
        const scope = yield* Scope.make()
        yield* Layer.buildWithScope(WebhookDispatcherLive, scope)
        return scope
      }))
    let dispatcher = mode === "drain" ? undefined : await startDispatcher()

    let started = Date.now()
    await runtime.runPromise(Effect.gen(function*() {
      const log = yield* EventLog
      const record = (i: number) =>
        log.record({
          tenantId,
          environment: "test",
          type: "quota.threshold",
          object: { object: "quota", tenant_id: tenantId, period: "2026-11", limit: total, used: i, threshold: 80 }
        })
      const indexes = Array.from({ length: total }, (_, i) => i)
      if (mode !== "paced") {
        yield* Effect.forEach(indexes, record, { concurrency: EMIT_CONCURRENCY, discard: true })
      } else {
        // One state change every 1/rate seconds, each in its own fiber, as requests would arrive.
        const fibers = yield* Effect.forEach(
          indexes,
          (i) => Effect.andThen(Effect.sleep(Duration.millis(1000 / PACED_RATE)), Effect.forkChild(record(i)))
        )
        yield* Fiber.joinAll(fibers)
      }
    }))
    const emitted = Date.now()
    if (dispatcher === undefined) {
      started = Date.now()
      dispatcher = await startDispatcher()
    }
    while (arrivals.length < expected && Date.now() - started < DEADLINE_MS) await new Promise((r) => setTimeout(r, 20))
    const finished = Date.now()
    await runtime.runPromise(Scope.close(dispatcher, Exit.void))

    const delays = arrivals.map((a) => a.receivedAt - a.createdAt).sort((a, b) => a - b)
    const memory = process.memoryUsage()
    console.log(JSON.stringify({
      mode: mode === "burst"
        ? "burst (recorded while sending: throughput)"
        : mode === "drain"
        ? "drain (backlog recorded first: the dispatcher's throughput)"
        : `paced at ${PACED_RATE} events/s (no backlog: delay)`,
      events: total,
      endpoints: ENDPOINTS,
      dispatcher_concurrency: DISPATCH_CONCURRENCY,
      caps: { tenant: TENANT_CAP, endpoint: ENDPOINT_CAP },
      delivered: arrivals.length,
      duplicates: arrivals.length - new Set(arrivals.map((a) => a.key)).size,
      signatures_verified: verified,
      ...(mode !== "paced" ? { events_recorded_per_second: Math.round(total / ((emitted - started) / 1000)) } : {}),
      deliveries_per_second: Math.round(arrivals.length / ((finished - started) / 1000)),
      // Draining, the delay counts the wait before the dispatcher started: not a figure of its own.
      ...(mode !== "drain"
        ? {
          state_change_to_delivery_ms: { p50: percentile(delays, 50), p99: percentile(delays, 99), max: delays.at(-1) }
        }
        : {}),
      rss_mib: Math.round(memory.rss / 1024 / 1024),
      peak_rss_mib: Math.round(peakRss / 1024 / 1024),
      heap_used_mib: Math.round(memory.heapUsed / 1024 / 1024)
    }))
  } finally {
    clearInterval(sampler)
    await runtime.dispose()
    server.closeAllConnections()
    server.close()
  }
}

console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${
    Math.round(totalmem() / 2 ** 30)
  } GiB, node ${process.version}, database: ${process.env["DATABASE_URL"] ? "postgres" : "embedded"}`
)
await main("burst")
await main("drain")
if (PACED_RATE > 0) await main("paced")
