/**
 * Pipeline benchmark (issue 11): documents issued over HTTP to the service as production starts it
 * (`node dist/main.js`, a child process on a PostgreSQL database created for the run), authorized
 * by the built-in simulator, and announced by `document.authorized` webhooks to a receiver in this
 * process. Two phases on one service:
 *
 *   1. burst: BENCH_DOCUMENTS documents from BENCH_CONCURRENCY clients as fast as they are accepted
 *      (accepted/s, request p50/p99), then the backlog drained to webhooks (delivered/s);
 *   2. steady: BENCH_RATE documents/s for BENCH_STEADY_SECONDS (an open model, below capacity):
 *      acceptance (`created_at`) → webhook received, p50/p99.
 *
 * Then it checks, in the database and at the receiver, that every 202 is one document, every
 * document was authorized and announced exactly once (0 lost, 0 duplicated), and prints the
 * service's peak RSS per phase. The load comes from autocannon, here (a lighter client than
 * fetch: the two cores are shared by it, the service and PostgreSQL).
 *
 *   npm run bench:pipeline                             # builds dist/ first
 *   BENCH_DOCUMENTS=5000 BENCH_RATE=300 npm run bench:pipeline
 *   WORKER_CONCURRENCY=8 BENCH_NODE_FLAGS="--max-old-space-size=256" npm run bench:pipeline
 *
 * Settings: DATABASE_URL (the server the run's database is created on; default the local `test`),
 * BENCH_DOCUMENTS (3000), BENCH_CONCURRENCY (32), BENCH_RATE (200), BENCH_STEADY_SECONDS (15),
 * BENCH_AUTHORITY_LATENCY (simulator latency, ms, default 0), BENCH_NODE_FLAGS (`node` flags for
 * the service besides those of `npm start`); WORKER_* and WEBHOOKS_* settings are passed to the service when set.
 */
import autocannon from "autocannon"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import pg from "pg"
import { declareRegistration } from "../support/registration.js"
import { cnpj } from "../support/taxIds.js"
import {
  type Child,
  createScratchDatabase,
  killChildren,
  sampleRss,
  serviceNodeFlags,
  startChild,
  stopChild
} from "./children.js"
import { makeChecks, percentile } from "./loadgen.js"

const DOCUMENTS = Number(process.env["BENCH_DOCUMENTS"] ?? 3000)
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 32)
const RATE = Number(process.env["BENCH_RATE"] ?? 200)
const STEADY_SECONDS = Number(process.env["BENCH_STEADY_SECONDS"] ?? 15)
const AUTHORITY_LATENCY_MS = Number(process.env["BENCH_AUTHORITY_LATENCY"] ?? 0)
const SERVER_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
/** The longest a phase may wait for its webhooks. */
const DRAIN_DEADLINE_MS = 180_000

/** The service's own settings that a run may change (pool sizes, caps), passed through when set. */
const passedThrough = Object.fromEntries(
  Object.entries(process.env).filter(([name, value]) => /^(WORKER|WEBHOOKS)_/.test(name) && value !== undefined)
) as Record<string, string>

// ---------------------------------------------------------------------------------------------
// The webhook receiver: when each document's `document.authorized` arrived

interface Arrival {
  readonly eventId: string
  readonly documentId: string
  readonly acceptedAt: number
  readonly receivedAt: number
}

const arrivals: Array<Arrival> = []
const receiver = createServer((request, response) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const receivedAt = Date.now()
    const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id: string
      type: string
      data: { object: { id: string; created_at: string } }
    }
    if (event.type === "document.authorized") {
      const document = event.data.object
      arrivals.push({
        eventId: event.id,
        documentId: document.id,
        acceptedAt: Date.parse(document.created_at),
        receivedAt
      })
    }
    response.writeHead(204).end()
  })
})

// ---------------------------------------------------------------------------------------------
// The run

const post = async (base: string, path: string, body: unknown, token?: string) => {
  const response = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  const json = (await response.json()) as Record<string, any>
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

const document = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria Tomadora" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 150000, iss_rate: "2.00" }
}

/** Waits until `count` webhooks have arrived (or the deadline), then returns when the last did. */
const awaitArrivals = async (count: number) => {
  const started = Date.now()
  while (arrivals.length < count && Date.now() - started < DRAIN_DEADLINE_MS) await sleep(20)
  return arrivals.at(-1)?.receivedAt ?? Date.now()
}

const ms = (values: ReadonlyArray<number>) => ({
  p50: Math.round(percentile(values, 50)),
  p99: Math.round(percentile(values, 99)),
  max: Math.round(Math.max(...values))
})

const main = async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const receiverPort = (receiver.address() as AddressInfo).port
  const database = await createScratchDatabase(SERVER_URL, "etd_pipelinebench")
  const dataDir = mkdtempSync(join(tmpdir(), "etd-pipelinebench-"))
  const unlimited = "10000000"
  let service: Child | undefined
  try {
    service = await startChild("service", [...serviceNodeFlags, "dist/main.js"], {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PASSWORD_HASH_COST: "1024",
      // Limits far above the load: a 429 would measure the limiter, not the pipeline.
      RATE_LIMIT_PER_SECOND: unlimited,
      RATE_LIMIT_BURST: unlimited,
      RATE_LIMIT_TENANT_PER_SECOND: unlimited,
      RATE_LIMIT_TENANT_BURST: unlimited,
      // The receiver is on loopback.
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
      TAX_AUTHORITY_SIMULATOR_LATENCY: `${AUTHORITY_LATENCY_MS} millis`,
      ...passedThrough
    }, ["/healthz", "/readyz"])
    const base = service.base
    const pid = service.process.pid

    console.log(
      `pipeline bench: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${
        Math.round(totalmem() / 2 ** 30)
      } GiB, node ${process.version}, ` +
        `PostgreSQL ${database.serverVersion}; simulator latency ${AUTHORITY_LATENCY_MS} ms` +
        (Object.keys(passedThrough).length > 0 ? `; ${JSON.stringify(passedThrough)}` : "") +
        `; node ${serviceNodeFlags.join(" ")}`
    )

    const email = `bench-${Date.now()}@example.com`
    const password = "correct horse battery staple"
    const registration = await post(base, "/v1/auth/register", {
      email,
      password,
      tenant: { name: "Bench", tax_id: cnpj() }
    })
    const tenantId = registration["tenant"].id as string
    const session = (await post(base, "/v1/auth/login", { email, password }))["token"] as string
    await declareRegistration(base, tenantId, session)
    const key = (await post(base, `/v1/tenants/${tenantId}/api-keys`, {
      name: "bench",
      environment: "test",
      scopes: ["documents:write", "documents:read", "webhooks:write"]
    }, session))["token"] as string
    await post(base, `/v1/tenants/${tenantId}/webhook-endpoints`, {
      url: `http://127.0.0.1:${receiverPort}/hooks`,
      events: ["document.authorized"]
    }, key)
    /** `amount` documents from `connections` clients, at `rate` per second in all when given. */
    const issue = async (amount: number, connections: number, rate?: number) => {
      const started = performance.now()
      const result = await autocannon({
        url: `${base}/v1/documents`,
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify(document),
        connections,
        amount,
        ...(rate === undefined ? {} : { overallRate: rate }),
        timeout: 30
      })
      return {
        seconds: (performance.now() - started) / 1000,
        accepted: result["2xx"],
        refused: result.non2xx,
        errors: result.errors + result.timeouts,
        request_ms: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max }
      }
    }

    // 1. Burst, then its backlog drained.
    const burstRss = sampleRss(pid)
    const burstStarted = Date.now()
    const burst = await issue(DOCUMENTS, CONCURRENCY)
    const lastBurstArrival = await awaitArrivals(burst.accepted)
    const burstArrivals = arrivals.slice(0, burst.accepted)
    const firstArrival = Math.min(...burstArrivals.map((a) => a.receivedAt))
    const burstFigures = {
      phase: "burst",
      documents: DOCUMENTS,
      clients: CONCURRENCY,
      accepted: burst.accepted,
      refused: burst.refused,
      errors: burst.errors,
      accepted_per_second: Math.round(burst.accepted / burst.seconds),
      request_ms: burst.request_ms,
      webhooks: burstArrivals.length,
      // From the first webhook to the last: the pipeline's own pace through the backlog.
      delivered_per_second: Math.round(
        burstArrivals.length / Math.max(0.001, (lastBurstArrival - firstArrival) / 1000)
      ),
      // From the first request to the last webhook: documents through the whole pipeline per second.
      end_to_end_per_second: Math.round(burstArrivals.length / ((lastBurstArrival - burstStarted) / 1000)),
      acceptance_to_webhook_ms: ms(burstArrivals.map((a) => a.receivedAt - a.acceptedAt)),
      peak_rss_mib: burstRss.stop()
    }
    console.log(JSON.stringify(burstFigures))

    // 2. Steady, below capacity: the delay itself.
    const steadyRss = sampleRss(pid)
    const before = arrivals.length
    const steady = await issue(RATE * STEADY_SECONDS, CONCURRENCY, RATE)
    await awaitArrivals(before + steady.accepted)
    const steadyArrivals = arrivals.slice(before)
    const steadyFigures = {
      phase: `steady ${RATE}/s`,
      documents: RATE * STEADY_SECONDS,
      accepted: steady.accepted,
      refused: steady.refused,
      errors: steady.errors,
      accepted_per_second: Math.round(steady.accepted / steady.seconds),
      request_ms: steady.request_ms,
      webhooks: steadyArrivals.length,
      acceptance_to_webhook_ms: ms(steadyArrivals.map((a) => a.receivedAt - a.acceptedAt)),
      peak_rss_mib: steadyRss.stop()
    }
    console.log(JSON.stringify(steadyFigures))

    // Nothing lost, nothing twice: in the database and at the receiver.
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const counts = (await client.query<{ documents: number; authorized: number }>(
      `SELECT count(*)::int AS documents, count(*) FILTER (WHERE status = 'authorized')::int AS authorized
       FROM documents WHERE tenant_id = $1`,
      [tenantId]
    )).rows[0]!
    await client.end()
    const accepted = burst.accepted + steady.accepted
    const announced = new Set(arrivals.map((a) => a.documentId))
    const { check, failures } = makeChecks()
    check(burst.refused + burst.errors + steady.refused + steady.errors === 0, "every request answered 202")
    check(counts.documents === accepted, `${accepted} answered 202, ${counts.documents} documents stored`)
    check(counts.authorized === accepted, `${counts.authorized} of ${counts.documents} documents authorized`)
    check(announced.size === accepted, `${announced.size} documents announced by a webhook (0 lost)`)
    check(arrivals.length === announced.size, `${arrivals.length - announced.size} duplicated webhooks`)
    check(new Set(arrivals.map((a) => a.eventId)).size === arrivals.length, "one event id per webhook")
    if (failures.length > 0) process.exitCode = 1
  } finally {
    if (service !== undefined) await stopChild(service.process)
    await killChildren()
    await database.drop()
    rmSync(dataDir, { recursive: true, force: true })
    receiver.closeAllConnections()
    receiver.close()
  }
}

process.once("SIGINT", () => {
  void killChildren().then(() => process.exit(130))
})
await main()
