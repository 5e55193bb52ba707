/**
 * Read benchmark (issue 11): `GET /v1/tenants/{tenantId}` with an API key (hash the token, look the
 * key up, read the tenant and its quota), driven by autocannon at 64 connections against
 *   1. floor: the same read by plain `node:http` + `pg` (test/load/readFloor.ts),
 *   2. service: the service as production starts it (`node dist/main.js`), tracing not exported,
 *   3. service+otlp: the same with its traces and metrics exported to an OTLP receiver in this process,
 * one after the other in the same run, on one PostgreSQL database created for the run and dropped
 * afterwards. It prints req/s, latency p50/p99, non-2xx answers, errors, the server's RSS (idle and
 * peak, from /proc) and, traced, the spans received; then each service run's ratio to the floor.
 *
 *   npm run bench:read                                  # builds dist/ first, then runs this file
 *   BENCH_SECONDS=30 BENCH_CONNECTIONS=128 npm run bench:read
 *   BENCH_RUNS=floor,service npm run bench:read         # a subset, in the order given
 *   BENCH_PROFILE=1 npm run bench:read                  # a CPU profile of the untraced service
 *
 * The servers under test are child processes, each alone on the machine while it is measured (the
 * setup's instance is stopped first), so autocannon, which runs here, shares no event loop with
 * them. Each run starts a fresh child: warm-up (BENCH_WARMUP s, not counted, for the JIT and the
 * pools), then the measurement (BENCH_SECONDS s). The OTLP receiver parses every export to count
 * its spans; that costs this process a little CPU in the traced run only, as a collector on the
 * same machine would.
 *
 * BENCH_PROFILE=1 starts the untraced service with `--cpu-prof`; it writes the profile when it
 * exits after SIGTERM, into BENCH_PROFILE_DIR (a temporary directory unless set, kept after the
 * run). That run's figures then include the profiler's overhead.
 *
 * Settings (environment): BENCH_SECONDS (10), BENCH_WARMUP (3), BENCH_CONNECTIONS (64),
 * BENCH_RUNS (floor,service,traced), BENCH_NODE_FLAGS (`node` flags for the service besides those of `npm start`), BENCH_FLOOR_POOL (20: the service's 23 connections less the
 * one each of its three queues keeps for LISTEN, src/db/Database.ts), BENCH_PROFILE, BENCH_PROFILE_DIR,
 * DATABASE_URL (postgres://postgres@127.0.0.1:5432/test: the server on which the run's database
 * is created, and the database connected to for that).
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { once } from "node:events"
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import pg from "pg"
import { cnpj } from "../support/taxIds.js"
import { type Child, killChildren, rssMiB, serviceNodeFlags, startChild, stopChild } from "./children.js"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 10)
const WARMUP_SECONDS = Number(process.env["BENCH_WARMUP"] ?? 3)
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? 64)
const FLOOR_POOL = Number(process.env["BENCH_FLOOR_POOL"] ?? 20)
const PROFILE = ["1", "true"].includes(process.env["BENCH_PROFILE"] ?? "")
const DATABASE_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const RUN_NAMES = ["floor", "service", "traced"] as const
type RunName = typeof RUN_NAMES[number]
const RUNS = (process.env["BENCH_RUNS"] ?? RUN_NAMES.join(",")).split(",").map((name) => name.trim()) as Array<RunName>
const LABELS: Record<RunName, string> = { floor: "floor", service: "service", traced: "service+otlp" }

const runId = randomBytes(4).toString("hex")
const database = `etd_readbench_${runId}`
const scratchUrl = (() => {
  const url = new URL(DATABASE_URL)
  url.pathname = `/${database}`
  return url.toString()
})()

for (const name of RUNS) {
  if (!RUN_NAMES.includes(name)) throw new Error(`BENCH_RUNS: unknown run "${name}" (known: ${RUN_NAMES.join(", ")})`)
}

// ---------------------------------------------------------------------------------------------
// Child processes: the floor and the service

let dataDir: string | undefined
const serviceEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  // Limits far above the load: a 429 would measure the limiter's refusals, not the read.
  const unlimited = "10000000"
  return {
    DATABASE_URL: scratchUrl,
    // One directory for every start in the run, so each finds the secrets the first generated.
    DATA_DIR: dataDir ??= mkdtempSync(join(tmpdir(), "etd-readbench-")),
    // Only the setup's registration and login hash a password; the measured read never does.
    PASSWORD_HASH_COST: "1024",
    RATE_LIMIT_PER_SECOND: unlimited,
    RATE_LIMIT_BURST: unlimited,
    RATE_LIMIT_TENANT_PER_SECOND: unlimited,
    RATE_LIMIT_TENANT_BURST: unlimited,
    RATE_LIMIT_SESSION_PER_SECOND: unlimited,
    RATE_LIMIT_SESSION_BURST: unlimited,
    ...extra
  }
}

const startService = (name: string, env: Record<string, string> = {}, nodeFlags: ReadonlyArray<string> = []) =>
  startChild(name, [...serviceNodeFlags, ...nodeFlags, "dist/main.js"], serviceEnv(env), ["/healthz", "/readyz"])

const startFloor = () =>
  startChild("floor", ["test/load/readFloor.ts"], { DATABASE_URL: scratchUrl, POOL_MAX: String(FLOOR_POOL) }, [
    "/healthz"
  ])

// ---------------------------------------------------------------------------------------------
// The OTLP receiver (traced run)

const otlp = { traces: 0, metrics: 0, bytes: 0, spans: 0, malformed: 0 }

interface OtlpTraces {
  readonly resourceSpans?: ReadonlyArray<
    { readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<unknown> }> }
  >
}

const startReceiver = async (): Promise<Server> => {
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const raw = Buffer.concat(chunks)
      otlp.bytes += raw.length
      if (request.url === "/v1/traces") {
        otlp.traces++
        try {
          const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
          const traces = JSON.parse(body.toString("utf8")) as OtlpTraces
          for (const resource of traces.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) otlp.spans += scope.spans?.length ?? 0
          }
        } catch {
          otlp.malformed++
        }
      } else if (request.url === "/v1/metrics") {
        otlp.metrics++
      }
      // Effect's exporter stops exporting for 60 s after a failed export: always answer 200.
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return server
}

// ---------------------------------------------------------------------------------------------
// Setup through the API, and the checks before measuring

const call = async (base: string, method: "GET" | "POST", path: string, token?: string, body?: unknown) => {
  const response = await fetch(base + path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
    },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> }
}

const expectOk = async (base: string, method: "GET" | "POST", path: string, token?: string, body?: unknown) => {
  const answer = await call(base, method, path, token, body)
  if (answer.status >= 300) {
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`)
  }
  return answer.body
}

/** A tenant and a test key of it, as a user would make them (README, "With curl"). */
const setUp = async (base: string) => {
  const email = `readbench-${runId}@example.com`
  const password = "correct horse battery staple"
  const registration = await expectOk(base, "POST", "/v1/auth/register", undefined, {
    email,
    password,
    name: "Read Bench",
    tenant: { name: "Read Bench Ltda", tax_id: cnpj() }
  })
  const tenantId = String((registration["tenant"] as { id: string }).id)
  const session = String((await expectOk(base, "POST", "/v1/auth/login", undefined, { email, password }))["token"])
  // `GET /v1/tenants/{id}` asks no scope of a key (src/tenants/Api.ts): any active key of the tenant reads it.
  const created = await expectOk(base, "POST", `/v1/tenants/${tenantId}/api-keys`, session, {
    name: "read bench",
    environment: "test",
    scopes: ["documents:read"]
  })
  return { tenantId, token: String(created["token"]) }
}

/** The read answers 200 with the tenant, and a well-formed unknown key 401, before anything is measured. */
const checkRead = async (child: Child, path: string, token: string) => {
  const ok = await call(child.base, "GET", path, token)
  if (ok.status !== 200) throw new Error(`${child.name}: GET ${path} answered ${ok.status}: ${JSON.stringify(ok.body)}`)
  const unknown = await call(child.base, "GET", path, `etd_test_${"a".repeat(32)}`)
  if (unknown.status !== 401) throw new Error(`${child.name}: an unknown key was answered ${unknown.status}, not 401`)
  return ok.body
}

// ---------------------------------------------------------------------------------------------
// A measured run

interface Measured {
  readonly run: string
  readonly req_per_s: number
  readonly requests: number
  readonly latency_ms: { readonly p50: number; readonly p99: number; readonly mean: number; readonly max: number }
  readonly non_2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly rss_mib: { readonly idle: number; readonly peak: number }
  readonly otlp?: {
    readonly spans_per_s: number
    readonly spans_per_request: number
    readonly trace_exports: number
    readonly metric_exports: number
    readonly kib_per_s: number
    readonly malformed: number
  }
}

const load = (url: string, token: string, seconds: number) =>
  autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${token}` } })

const measure = async (run: RunName, child: Child, path: string, token: string): Promise<Measured> => {
  const pid = child.process.pid
  const idle = rssMiB(pid)
  let peak = idle
  // A sample after the child's exit is NaN, and never the peak.
  const sampler = setInterval(() => {
    const now = rssMiB(pid)
    if (now > peak) peak = now
  }, 100)
  try {
    const warmup = await load(child.base + path, token, WARMUP_SECONDS)
    const before = { ...otlp }
    const startedAt = performance.now()
    const result = await load(child.base + path, token, SECONDS)
    const elapsed = (performance.now() - startedAt) / 1000
    const during = { ...otlp }
    const traced = run === "traced"
      ? await (async () => {
        // Every span of the run (warm-up included) is in by the child's exit: its exporter flushes then.
        await stopChild(child.process)
        const requests = warmup.requests.total + result.requests.total + 2
        return {
          spans_per_s: Math.round((during.spans - before.spans) / elapsed),
          spans_per_request: Number((otlp.spans / requests).toFixed(2)),
          trace_exports: during.traces - before.traces,
          metric_exports: during.metrics - before.metrics,
          kib_per_s: Math.round((during.bytes - before.bytes) / 1024 / elapsed),
          malformed: otlp.malformed
        }
      })()
      : undefined
    return {
      run: LABELS[run],
      req_per_s: Math.round(result.requests.mean),
      requests: result.requests.total,
      latency_ms: {
        p50: result.latency.p50,
        p99: result.latency.p99,
        mean: result.latency.mean,
        max: result.latency.max
      },
      non_2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      rss_mib: { idle: Math.round(idle), peak: Math.round(peak) },
      ...(traced === undefined ? {} : { otlp: traced })
    }
  } finally {
    clearInterval(sampler)
  }
}

// ---------------------------------------------------------------------------------------------
// The run

let cleaning: Promise<void> | undefined
/** Stops every child, drops the run's database and removes DATA_DIR; once, on the way out or on Ctrl-C. */
const cleanup = () => (cleaning ??= (async () => {
  await killChildren()
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  try {
    await admin.connect()
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
  } catch (error) {
    console.error(`could not drop ${database}: ${String(error)}`)
  } finally {
    await admin.end().catch(() => {})
  }
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})())

const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—")

const printTable = (results: ReadonlyArray<Measured>, floor: Measured | undefined) => {
  const header = [
    "run",
    "req/s",
    "× floor",
    "p50 ms",
    "p99 ms",
    "non-2xx",
    "errors",
    "timeouts",
    "RSS idle→peak MiB",
    "spans/s"
  ]
  const rows = results.map((r) => [
    r.run,
    String(r.req_per_s),
    floor === undefined || r === floor ? "" : fixed(r.req_per_s / floor.req_per_s, 2),
    String(r.latency_ms.p50),
    String(r.latency_ms.p99),
    String(r.non_2xx),
    String(r.errors),
    String(r.timeouts),
    `${r.rss_mib.idle} → ${r.rss_mib.peak}`,
    r.otlp === undefined ? "" : `${r.otlp.spans_per_s} (${r.otlp.spans_per_request}/req)`
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(`\n${line(header)}\n${line(widths.map((w) => "-".repeat(w)))}`)
  for (const row of rows) console.log(line(row))
}

const main = async () => {
  const admin = new pg.Client({ connectionString: DATABASE_URL })
  await admin.connect()
  const pgVersion = String(
    (await admin.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version
  )
  await admin.query(`CREATE DATABASE ${database}`)
  await admin.end()
  const machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? "cpu",
    memory_gib: Number((totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    postgres: pgVersion
  }
  console.log(
    `read bench ${runId}: machine ${machine.cpus} × ${machine.model}, ${machine.memory_gib} GiB, node ${machine.node}, ` +
      `PostgreSQL ${machine.postgres}; ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s per run; ` +
      `runs: ${RUNS.map((r) => LABELS[r]).join(", ")}; database ${database}`
  )

  // The first start migrates the database; its instance makes the tenant and key, then stops, so
  // the floor is measured with no service running (its workers poll even when idle).
  const setup = await startService("setup")
  const { tenantId, token } = await setUp(setup.base)
  const path = `/v1/tenants/${tenantId}`
  const expected = await checkRead(setup, path, token)
  await stopChild(setup.process)

  const results: Array<Measured> = []
  let receiver: Server | undefined
  for (const run of RUNS) {
    let child: Child
    let profileDir: string | undefined
    if (run === "floor") {
      child = await startFloor()
    } else if (run === "service") {
      profileDir = PROFILE
        ? (process.env["BENCH_PROFILE_DIR"] ?? join(tmpdir(), `etd-read-profile-${runId}`))
        : undefined
      if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true })
      child = await startService(
        "service",
        {},
        profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
      )
    } else {
      receiver ??= await startReceiver()
      const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
      child = await startService("service+otlp", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })
    }
    try {
      const body = await checkRead(child, path, token)
      // The floor must do the same work: the same tenant, the same JSON, field for field.
      if (run === "floor" && JSON.stringify(body) !== JSON.stringify(expected)) {
        console.log(
          `  note: the floor's body differs from the service's:\n    floor   ${JSON.stringify(body)}\n    service ${
            JSON.stringify(expected)
          }`
        )
      }
      const measured = await measure(run, child, path, token)
      results.push(measured)
      console.log(
        JSON.stringify({
          bench: "read",
          ...measured,
          connections: CONNECTIONS,
          seconds: SECONDS,
          ...(profileDir ? { profiled: true } : {})
        })
      )
    } finally {
      await stopChild(child.process)
    }
    if (profileDir !== undefined) {
      const profiles = readdirSync(profileDir).filter((file) => file.endsWith(".cpuprofile"))
      console.log(
        profiles.length === 0
          ? `  no .cpuprofile in ${profileDir}: ${child.tail.slice(-5).join(" | ")}`
          : `  CPU profile of the service (warm-up and measurement, with the profiler's overhead): ${
            profiles.map((file) => join(profileDir, file)).join(", ")
          }`
      )
    }
  }
  receiver?.close()

  const floor = results.find((r) => r.run === LABELS.floor)
  const ratios: Record<string, { readonly req_per_s: number; readonly p99: number }> = floor === undefined
    ? {}
    : Object.fromEntries(
      results.filter((r) => r !== floor).map((r) => [r.run, {
        req_per_s: Number((r.req_per_s / floor.req_per_s).toFixed(3)),
        p99: Number((r.latency_ms.p99 / floor.latency_ms.p99).toFixed(2))
      }])
    )
  console.log(
    JSON.stringify({
      bench: "read",
      summary: true,
      machine,
      connections: CONNECTIONS,
      seconds: SECONDS,
      ratios_to_floor: ratios
    })
  )
  printTable(results, floor)
  console.log(
    `\nmachine: ${machine.cpus} × ${machine.model}, ${machine.memory_gib} GiB, node ${machine.node}, PostgreSQL ${machine.postgres}`
  )
  for (const [run, ratio] of Object.entries(ratios)) {
    console.log(
      `${run} / floor: ${ratio.req_per_s.toFixed(2)}× req/s, ${ratio.p99.toFixed(2)}× p99 (issue 11: ≥ 0.75×)`
    )
  }
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and dropping ${database}`)
    void cleanup().finally(() => process.exit(130))
  })
}

await main().then(
  () => cleanup(),
  async (error: unknown) => {
    console.error(error)
    await cleanup()
    process.exitCode = 1
  }
)
