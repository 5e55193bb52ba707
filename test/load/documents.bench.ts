/**
 * Document pipeline benchmark: accepted documents per second over HTTP, and the time from
 * acceptance to `authorized` (p50/p99), against the built-in simulator with 0 ms and 200 ms of
 * authority latency. Loopback only, bounded in count and time.
 *
 *   npm run bench:documents                         # burst: both latencies, 400 documents each
 *   BENCH_RATE=20 BENCH_DOCUMENTS=200 npm run bench:documents   # paced: 20 documents/s
 *   DATABASE_URL=postgres://… WORKER_CONCURRENCY=16 npm run bench:documents
 *   BENCH_ROUNDS=3 npm run bench:documents           # each latency 3 times, interleaved; medians
 *
 * The latencies are two conditions, not two variants of the code: there is no floor to divide by.
 * To compare two trees, run this file alternately on each (a round each, ≥ 3 rounds, alternating
 * which goes first) and compare the medians. BENCH_ROUNDS > 1 repeats the latencies in an order
 * that rotates per round and prints each latency's medians, so drift on the machine lands on both.
 * The service runs in this process beside the load generator (a fresh database per run).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { ConfigProvider, Duration, Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { createServer } from "node:http"
import { cpus } from "node:os"
import { makeApp } from "../../src/App.js"
import { AppConfigTest } from "../../src/Config.js"
import { embeddedLayer, postgresLayer } from "../../src/db/Database.js"
import { declareRegistration } from "../support/registration.js"
import { percentile, runLoad } from "./loadgen.js"

const TOTAL = Number(process.env["BENCH_DOCUMENTS"] ?? 400)
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 16)
/** Unset: a burst (throughput). Set: an open model at that many documents per second (latency). */
const RATE = process.env["BENCH_RATE"] ? Number(process.env["BENCH_RATE"]) : undefined
const DEADLINE_MS = 120_000
/** The service's default pool (32) unless set; the tables in the README before issue 11 used 4. */
const WORKERS = Number(process.env["WORKER_CONCURRENCY"] ?? 32)
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 1)

const digits = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 10))
const cnpj = () => {
  const base = digits(12)
  const check = (ds: Array<number>) => {
    const weights = ds.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    const rest = ds.reduce((acc, d, i) => acc + d * weights[i]!, 0) % 11
    return rest < 2 ? 0 : 11 - rest
  }
  const d1 = check(base)
  return [...base, d1, check([...base, d1])].join("")
}

const json = async (response: Response) => (await response.json()) as Record<string, unknown>

const run = async (latencyMs: number) => {
  // Effect 4's default provider reads the environment once per process, so each run gets its own.
  const env = ConfigProvider.fromEnv({
    env: { ...process.env as Record<string, string>, TAX_AUTHORITY_SIMULATOR_LATENCY: `${latencyMs} millis` }
  })
  const database = process.env["DATABASE_URL"] ? postgresLayer(process.env["DATABASE_URL"]) : embeddedLayer(undefined)
  const config = AppConfigTest({
    passwordHashCost: 1024,
    rateLimit: { perSecond: 100_000, burst: 100_000 },
    tenantRateLimit: { perSecond: 100_000, burst: 100_000 },
    queue: { instanceId: "bench", shutdownGrace: Duration.seconds(5) },
    issuance: { concurrency: WORKERS, pollInterval: Duration.millis(100), lease: Duration.seconds(60) },
    // The bench's one tenant gets its cap of the workers (SPEC §11): half of them unless set.
    fairness: {
      issuancePerTenant: Number(process.env["WORKER_TENANT_CONCURRENCY"] ?? Math.ceil(WORKERS / 2)),
      webhooksPerTenant: 4,
      webhooksPerEndpoint: 4
    }
  })
  const app = makeApp(config, database).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 })),
    Layer.provide(ConfigProvider.layer(env))
  )
  const runtime = ManagedRuntime.make(app)
  try {
    const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
    if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    const base = `http://127.0.0.1:${address.port}`
    const post = (path: string, body: unknown, token?: string) =>
      fetch(base + path, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body)
      })

    const email = `bench-${Date.now()}@example.com`
    const password = "correct horse battery staple"
    const registration = await json(
      await post("/v1/auth/register", { email, password, tenant: { name: "Bench", tax_id: cnpj() } })
    )
    const tenantId = (registration["tenant"] as { id: string }).id
    const session = (await json(await post("/v1/auth/login", { email, password })))["token"] as string
    await declareRegistration(base, tenantId, session)
    const key = (await json(
      await post(`/v1/tenants/${tenantId}/api-keys`, {
        name: "bench",
        environment: "test",
        scopes: ["documents:write", "documents:read"]
      }, session)
    ))["token"] as string

    const document = {
      type: "service_invoice",
      taker: { tax_id: "52998224725", name: "Maria Tomadora" },
      service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
      amounts: { services: 150000, iss_rate: "2.00" }
    }
    const load = await runLoad({
      url: `${base}/v1/documents`,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(document),
      total: TOTAL,
      concurrency: CONCURRENCY,
      deadlineMs: DEADLINE_MS,
      ratePerSecond: RATE
    })

    // Wait for the pipeline to settle, then read acceptance → authorization times from the rows.
    const settled = await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < DEADLINE_MS / 100; i++) {
        const [row] = yield* sql<{ pending: number }>`
          SELECT count(*)::int AS pending FROM documents WHERE tenant_id = ${tenantId} AND status IN ('queued', 'submitting')`
        if (row!.pending === 0) break
        yield* Effect.sleep("100 millis")
      }
      return yield* sql<{ createdAt: Date; updatedAt: Date; status: string }>`
        SELECT created_at, updated_at, status FROM documents WHERE tenant_id = ${tenantId}`
    }))
    const toAuthorized = settled
      .filter((row) => row.status === "authorized")
      .map((row) => row.updatedAt.getTime() - row.createdAt.getTime())
    const memory = process.memoryUsage()
    const result = {
      authority_latency_ms: latencyMs,
      mode: RATE ? `paced ${RATE}/s` : "burst",
      worker_concurrency: WORKERS,
      documents: load.latenciesMs.length,
      statuses: load.statuses,
      concurrency: CONCURRENCY,
      accepted_per_second: Math.round((load.statuses["202"] ?? 0) / load.seconds),
      accept_request_ms: {
        p50: Math.round(percentile(load.latenciesMs, 50)),
        p99: Math.round(percentile(load.latenciesMs, 99))
      },
      authorized: toAuthorized.length,
      acceptance_to_authorized_ms: { p50: percentile(toAuthorized, 50), p99: percentile(toAuthorized, 99) },
      rss_mib: Math.round(memory.rss / 1024 / 1024),
      heap_used_mib: Math.round(memory.heapUsed / 1024 / 1024)
    }
    console.log(JSON.stringify(result))
    return result
  } finally {
    await runtime.dispose()
  }
}

console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, node ${process.version}, database: ${
    process.env["DATABASE_URL"] ? "postgres" : "embedded"
  }`
)
const latencies = (process.env["BENCH_LATENCIES"] ?? "0,200").split(",").map(Number)
const results: Array<Awaited<ReturnType<typeof run>>> = []
for (let round = 0; round < ROUNDS; round++) {
  for (const latency of latencies.map((_, i) => latencies[(i + round) % latencies.length]!)) {
    results.push(await run(latency))
  }
}
if (ROUNDS > 1) {
  for (const latency of latencies) {
    const of = results.filter((r) => r.authority_latency_ms === latency)
    const median = (pick: (r: typeof of[number]) => number) => percentile(of.map(pick), 50)
    console.log(JSON.stringify({
      summary: true,
      rounds: ROUNDS,
      authority_latency_ms: latency,
      accepted_per_second: of.map((r) => r.accepted_per_second),
      median_accepted_per_second: median((r) => r.accepted_per_second),
      median_acceptance_to_authorized_ms: {
        p50: median((r) => r.acceptance_to_authorized_ms.p50),
        p99: median((r) => r.acceptance_to_authorized_ms.p99)
      }
    }))
  }
}
