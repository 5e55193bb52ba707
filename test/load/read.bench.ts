/**
 * Read benchmark (issue 11): `GET /v1/tenants/{tenantId}` with an API key (hash the token, look the
 * key up, read the tenant and its quota), driven by autocannon at 64 connections against
 *   floor           the same read by plain `node:http` + `pg` (test/load/readFloor.ts), each
 *                   statement parsed on every execution,
 *   floor-prepared  the floor with named prepared statements, as the service's client prepares,
 *   framework       the framework floor: the same read as an Effect HttpApi with a key middleware and
 *                   sql-pg, without the service's own layers (test/load/readFramework.ts),
 *   service         the service as production starts it (`node dist/main.js`), its access log on,
 *                   no telemetry exported,
 *   traced          the same exporting its traces and metrics to an OTLP receiver in this process,
 *                   sampling a tenth of the traces (OTEL_TRACES_SAMPLER=parentbased_traceidratio,
 *                   OTEL_TRACES_SAMPLER_ARG=BENCH_TRACE_RATIO, 0.1),
 *   traced-always   the same recording every trace (not run unless named in BENCH_RUNS),
 *   base            with BENCH_BASE (another built copy of the repository, e.g. the commit before a
 *                   change), that copy's service started as `service` is, so a change is measured in
 *                   the same rounds as the floors,
 * on one PostgreSQL database created for the run and dropped afterwards.
 *
 * The runs are interleaved: BENCH_ROUNDS rounds, each running every run once in an order that
 * rotates by one per round, each run on a fresh child alone on the machine (warm-up BENCH_WARMUP s,
 * not counted, then BENCH_SECONDS s measured). A shared machine drifts; interleaving spreads the
 * drift over every run instead of charging it to one. Per run it records req/s, latency, the
 * server's CPU time per request (µs, /proc/<pid>/stat over the measured window) and of it the
 * JavaScript thread's (/proc/<pid>/task: the rest is V8's and libuv's helper threads), the bytes its
 * JavaScript heap allocated per request with the collector's pauses per request (allocationProbe.ts),
 * RSS and, traced, the spans received.
 * It prints every round, then each run's medians and the medians' ratios to the floors. CPU and
 * allocation per request depend little on the machine's load; req/s does.
 *
 *   npm run bench:read                                  # builds dist/ first, then runs this file
 *   BENCH_ROUNDS=5 BENCH_SECONDS=8 npm run bench:read
 *   BENCH_RUNS=floor,service npm run bench:read         # a subset
 *   BENCH_PROFILE=1 npm run bench:read                  # a CPU profile of the untraced service (round 1)
 *   BENCH_PROFILE=framework npm run bench:read          # … or of any other run (a floor, traced, base)
 *   BENCH_BASE=/work/wt-base BENCH_RUNS=framework,service,base npm run bench:read
 *
 * Settings (environment): BENCH_ROUNDS (3), BENCH_SECONDS (5), BENCH_WARMUP (2), BENCH_CONNECTIONS
 * (64), BENCH_RUNS (floor,floor-prepared,framework,service,traced), BENCH_TRACE_RATIO (0.1), BENCH_NODE_FLAGS
 * (`node` flags for the service besides those of `npm start`), BENCH_FLOOR_POOL (20: the service's
 * 23 connections less the one each of its three queues keeps for LISTEN, src/db/Database.ts),
 * BENCH_PROFILE, BENCH_PROFILE_DIR, BENCH_BASE, DATABASE_URL (postgres://postgres@127.0.0.1:5432/test: the
 * server on which the run's database is created).
 */
import autocannon from "autocannon"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import {
  allocationProbe,
  type Child,
  cpuMicros,
  createScratchDatabase,
  killChildren,
  openAllocationWindow,
  rssMiB,
  type ScratchDatabase,
  serviceStart,
  startChild,
  startCommand,
  stopChild,
  threadCpuMicros
} from "./children.js"
import { percentile } from "./loadgen.js"
import { startOtlpReceiver } from "./otlpReceiver.js"
import { checkRead, setUp } from "./readSetup.js"

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3)
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? 5)
const WARMUP_SECONDS = Number(process.env["BENCH_WARMUP"] ?? 2)
const CONNECTIONS = Number(process.env["BENCH_CONNECTIONS"] ?? 64)
const FLOOR_POOL = Number(process.env["BENCH_FLOOR_POOL"] ?? 20)
const TRACE_RATIO = process.env["BENCH_TRACE_RATIO"] ?? "0.1"
/** The run whose first round is CPU-profiled: BENCH_PROFILE=1 names the service, or name any run. */
const PROFILED: string | undefined = ["1", "true"].includes(process.env["BENCH_PROFILE"] ?? "")
  ? "service"
  : process.env["BENCH_PROFILE"] || undefined
const SERVER_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const RUN_NAMES = ["floor", "floor-prepared", "framework", "service", "traced", "traced-always", "base"] as const
const FLOORS: ReadonlyArray<RunName> = ["floor", "floor-prepared", "framework"]
type RunName = typeof RUN_NAMES[number]
const BASE = process.env["BENCH_BASE"]
const RUNS = (process.env["BENCH_RUNS"] ?? `floor,floor-prepared,framework,service,traced${BASE ? ",base" : ""}`).split(
  ","
).map((name) => name.trim()) as Array<RunName>
for (const name of RUNS) {
  if (!RUN_NAMES.includes(name)) throw new Error(`BENCH_RUNS: unknown run "${name}" (known: ${RUN_NAMES.join(", ")})`)
}
if (RUNS.includes("base") && BASE === undefined) {
  throw new Error("BENCH_RUNS names base: set BENCH_BASE to a built tree")
}

const runId = randomBytes(4).toString("hex")
const scratch: { database?: ScratchDatabase; dataDir?: string } = {}

const serviceEnv = (extra: Record<string, string>): Record<string, string> => {
  // Limits far above the load: a 429 would measure the limiter's refusals, not the read.
  const unlimited = "10000000"
  return {
    DATABASE_URL: scratch.database!.url,
    // One directory for every start in the run, so each finds the secrets the first generated.
    DATA_DIR: scratch.dataDir ??= mkdtempSync(join(tmpdir(), "etd-readbench-")),
    // Only the setup's registration and login hash a password; the measured read never does.
    PASSWORD_HASH_COST: "1024",
    ...Object.fromEntries(
      ["PER_SECOND", "BURST", "TENANT_PER_SECOND", "TENANT_BURST", "SESSION_PER_SECOND", "SESSION_BURST"].map(
        (name) => [`RATE_LIMIT_${name}`, unlimited]
      )
    ),
    ...extra
  }
}

/** Starts the child of a run, with the allocation probe loaded into it. */
const startRun = (run: RunName, probeFile: string, otlpEndpoint: string, profileDir: string | undefined) => {
  const probe = allocationProbe(probeFile)
  const profile = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]
  if (run === "floor" || run === "floor-prepared") {
    return startChild(run, [...probe.flags, ...profile, "test/load/readFloor.ts"], {
      DATABASE_URL: scratch.database!.url,
      POOL_MAX: String(FLOOR_POOL),
      FLOOR_PREPARED: run === "floor-prepared" ? "1" : "0",
      ...probe.env
    }, ["/healthz"])
  }
  if (run === "framework") {
    return startChild(run, [...probe.flags, ...profile, "test/load/readFramework.ts"], {
      DATABASE_URL: scratch.database!.url,
      POOL_MAX: String(FLOOR_POOL),
      ...probe.env
    }, ["/healthz"])
  }
  const exported: Record<string, string> = run === "service" || run === "base"
    ? {}
    : { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint }
  const sampled: Record<string, string> = run === "traced"
    ? { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: TRACE_RATIO }
    : run === "traced-always"
    ? { OTEL_TRACES_SAMPLER: "always_on" }
    : {}
  // Each tree as its own `npm start` runs it: a change to the memory settings is measured too.
  const start = run === "base" ? startCommand(BASE) : serviceStart
  return startChild(
    run,
    [...start.flags, ...probe.flags, ...profile, "dist/main.js"],
    serviceEnv({ ...start.env, ...exported, ...sampled, ...probe.env }),
    ["/healthz", "/readyz"],
    run === "base" ? BASE : undefined
  )
}

// ---------------------------------------------------------------------------------------------
// A measured run

interface Measured {
  readonly run: RunName
  readonly round: number
  readonly req_per_s: number
  readonly requests: number
  readonly p50_ms: number
  readonly p99_ms: number
  readonly cpu_us_per_request: number
  /** Of it, the JavaScript thread's; the rest is V8's helpers (concurrent marking, parallel scavenges, compilers) and libuv's. */
  readonly main_thread_us_per_request: number
  readonly alloc_kib_per_request: number
  readonly gcs: number
  readonly gc_us_per_request: number
  readonly failures: number
  readonly rss_mib: { readonly idle: number; readonly peak: number }
  readonly spans_per_request?: number
}

const load = (url: string, token: string, seconds: number) =>
  autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${token}` } })

const measure = async (run: RunName, round: number, child: Child, path: string, token: string, probeFile: string) => {
  const pid = child.process.pid
  const idle = rssMiB(pid)
  let peak = idle
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid) || 0)), 100)
  try {
    await load(child.base + path, token, WARMUP_SECONDS)
    const closeWindow = openAllocationWindow(child.process, probeFile)
    const cpuBefore = cpuMicros(pid)
    const threadsBefore = threadCpuMicros(pid)
    const result = await load(child.base + path, token, SECONDS)
    const cpu = cpuMicros(pid) - cpuBefore
    const mainThread = (threadCpuMicros(pid).get("main") ?? NaN) - (threadsBefore.get("main") ?? NaN)
    const allocation = await closeWindow()
    const requests = result.requests.total
    const measured: Measured = {
      run,
      round,
      req_per_s: Math.round(result.requests.mean),
      requests,
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      cpu_us_per_request: Math.round(cpu / requests),
      main_thread_us_per_request: Math.round(mainThread / requests),
      alloc_kib_per_request: allocation === undefined
        ? NaN
        : Number((allocation.allocated_bytes / requests / 1024).toFixed(1)),
      gcs: allocation?.gcs ?? NaN,
      gc_us_per_request: allocation === undefined ? NaN : Number((allocation.gc_pause_us / requests).toFixed(1)),
      failures: result.non2xx + result.errors + result.timeouts,
      rss_mib: { idle: Math.round(idle), peak: Math.round(peak) }
    }
    return measured
  } finally {
    clearInterval(sampler)
  }
}

// ---------------------------------------------------------------------------------------------
// Reporting

const median = (values: ReadonlyArray<number>) => percentile(values.filter(Number.isFinite), 50)
const fixed = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "—")

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  console.log(`\n${line(header)}\n${line(widths.map((w) => "-".repeat(w)))}`)
  for (const row of rows) console.log(line(row))
}

const summarize = (results: ReadonlyArray<Measured>) => {
  const runs = RUNS.map((run) => {
    const of = results.filter((r) => r.run === run)
    return {
      run,
      req_per_s: median(of.map((r) => r.req_per_s)),
      p99_ms: median(of.map((r) => r.p99_ms)),
      cpu_us_per_request: median(of.map((r) => r.cpu_us_per_request)),
      main_thread_us_per_request: median(of.map((r) => r.main_thread_us_per_request)),
      alloc_kib_per_request: median(of.map((r) => r.alloc_kib_per_request)),
      gc_us_per_request: median(of.map((r) => r.gc_us_per_request)),
      peak_rss_mib: median(of.map((r) => r.rss_mib.peak))
    }
  })
  const floors = runs.filter((r) => FLOORS.includes(r.run))
  const ratio = (a: number, b: number) => Number((a / b).toFixed(2))
  // Each run against every floor below it (the framework against the plain ones), and the service
  // against the base tree when there is one.
  const ratios = Object.fromEntries(
    runs.filter((r) => r.run !== "floor" && r.run !== "floor-prepared").map((r) => [
      r.run,
      Object.fromEntries(
        [...floors, ...(r.run === "service" ? runs.filter((b) => b.run === "base") : [])].filter((floor) => floor !== r)
          .map((floor) => [floor.run, {
            req_per_s: ratio(r.req_per_s, floor.req_per_s),
            cpu_per_request: ratio(r.cpu_us_per_request, floor.cpu_us_per_request),
            alloc_per_request: ratio(r.alloc_kib_per_request, floor.alloc_kib_per_request)
          }])
      )
    ])
  )
  return { runs, ratios }
}

// ---------------------------------------------------------------------------------------------
// The run

let cleaning: Promise<void> | undefined
/** Stops every child, drops the run's database and removes DATA_DIR; once, on the way out or on Ctrl-C. */
const cleanup = () => (cleaning ??= (async () => {
  await killChildren()
  await scratch.database?.drop()
  if (scratch.dataDir !== undefined) rmSync(scratch.dataDir, { recursive: true, force: true })
})())

const main = async () => {
  scratch.database = await createScratchDatabase(SERVER_URL, "etd_readbench")
  const machine = {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? "cpu",
    memory_gib: Number((totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    postgres: scratch.database.serverVersion
  }
  console.log(
    `read bench ${runId}: ${machine.cpus} × ${machine.model}, ${machine.memory_gib} GiB, node ${machine.node}, ` +
      `PostgreSQL ${machine.postgres}; ${CONNECTIONS} connections; ${ROUNDS} rounds of ${RUNS.join(", ")} ` +
      `(order rotating), each ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured; traced samples ${TRACE_RATIO}`
  )

  // The first start migrates the database; its instance makes the tenant and key, then stops, so
  // no run is measured beside another server (the service's workers poll even when idle).
  const setup = await startChild("setup", [...serviceStart.flags, "dist/main.js"], serviceEnv(serviceStart.env), [
    "/healthz",
    "/readyz"
  ])
  const { tenantId, token } = await setUp(setup.base, runId)
  const path = `/v1/tenants/${tenantId}`
  const expected = JSON.stringify(await checkRead(setup, path, token))
  await stopChild(setup.process)

  const receiver = await startOtlpReceiver()
  const probeDir = mkdtempSync(join(tmpdir(), "etd-readbench-probe-"))
  const results: Array<Measured> = []
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      const order = RUNS.map((_, i) => RUNS[(i + round - 1) % RUNS.length]!)
      for (const run of order) {
        const profileDir = run === PROFILED && round === 1
          ? (process.env["BENCH_PROFILE_DIR"] ?? join(tmpdir(), `etd-read-profile-${runId}`))
          : undefined
        if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true })
        const probeFile = join(probeDir, `${run}-${round}.json`)
        const child = await startRun(run, probeFile, receiver.endpoint, profileDir)
        const spansBefore = receiver.counts.spans
        let measured: Measured
        try {
          // Every run must do the same work: the same tenant, the same JSON, field for field. A floor
          // that answers less than the service measures less work: the run stops, naming the difference.
          const body = JSON.stringify(await checkRead(child, path, token))
          if (body !== expected && run !== "base") {
            throw new Error(`${run}'s body differs from the service's:\n    ${body}\n    ${expected}`)
          }
          measured = await measure(run, round, child, path, token, probeFile)
        } finally {
          // The exporter flushes at the exit: every span of the run is in by then.
          await stopChild(child.process)
        }
        if (run === "traced" || run === "traced-always") {
          const total = measured.requests * (1 + WARMUP_SECONDS / SECONDS)
          measured = {
            ...measured,
            spans_per_request: Number(((receiver.counts.spans - spansBefore) / total).toFixed(2))
          }
        }
        results.push(measured)
        console.log(JSON.stringify({ bench: "read", ...measured }))
        if (profileDir !== undefined) {
          const files = readdirSync(profileDir).filter((file) => file.endsWith(".cpuprofile"))
          console.log(
            `  CPU profile (with the profiler's overhead): ${files.map((f) => join(profileDir, f)).join(", ")}`
          )
        }
      }
    }
  } finally {
    receiver.close()
    rmSync(probeDir, { recursive: true, force: true })
  }

  table(
    [
      "round",
      "run",
      "req/s",
      "p50 ms",
      "p99 ms",
      "CPU µs/req",
      "JS thread",
      "alloc KiB/req",
      "GC µs/req",
      "GCs",
      "failed",
      "RSS MiB",
      "spans/req"
    ],
    results.map((r) => [
      String(r.round),
      r.run,
      String(r.req_per_s),
      String(r.p50_ms),
      String(r.p99_ms),
      String(r.cpu_us_per_request),
      fixed(r.main_thread_us_per_request),
      fixed(r.alloc_kib_per_request, 1),
      fixed(r.gc_us_per_request, 1),
      fixed(r.gcs),
      String(r.failures),
      `${r.rss_mib.idle} → ${r.rss_mib.peak}`,
      r.spans_per_request === undefined ? "" : String(r.spans_per_request)
    ])
  )
  const summary = summarize(results)
  table(
    ["median of " + ROUNDS, "req/s", "p99 ms", "CPU µs/req", "JS thread", "alloc KiB/req", "GC µs/req", "peak RSS MiB"],
    summary.runs.map((r) => [
      r.run,
      fixed(r.req_per_s),
      fixed(r.p99_ms),
      fixed(r.cpu_us_per_request),
      fixed(r.main_thread_us_per_request),
      fixed(r.alloc_kib_per_request, 1),
      fixed(r.gc_us_per_request, 1),
      fixed(r.peak_rss_mib)
    ])
  )
  console.log("\nratios of the medians (req/s: higher is better; CPU and allocation per request: lower is better):")
  for (const [run, byFloor] of Object.entries(summary.ratios)) {
    for (const [floor, r] of Object.entries(byFloor)) {
      console.log(
        `  ${run} / ${floor}: ${fixed(r.req_per_s, 2)}× req/s, ${fixed(r.cpu_per_request, 2)}× CPU/req, ` +
          `${fixed(r.alloc_per_request, 2)}× alloc/req`
      )
    }
  }
  console.log(JSON.stringify({ bench: "read", summary: true, machine, rounds: ROUNDS, seconds: SECONDS, ...summary }))
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and dropping the run's database`)
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
