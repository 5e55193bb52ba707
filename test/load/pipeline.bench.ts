/**
 * Pipeline benchmark: documents issued over HTTP the way a client issues them (the README's note,
 * each with its own reference and Idempotency-Key) to the service as `npm start` starts it, on a
 * PostgreSQL database created for the run, authorized by the built-in simulator and announced by
 * `document.authorized` webhooks to a receiver here that verifies every signature (pipelineRun.ts).
 * Two phases per run:
 *
 *   1. burst: BENCH_DOCUMENTS documents from BENCH_CONCURRENCY clients as fast as they are accepted
 *      (accepted/s, request p50/p99), then the backlog drained to webhooks (delivered/s);
 *   2. steady: BENCH_RATE documents/s for BENCH_STEADY_SECONDS (an open model, below capacity):
 *      acceptance (`created_at`) → webhook received, p50/p99.
 *
 * Each phase says where the CPU went, per document and in cores: the service, this process (load
 * generator and receiver), the run's PostgreSQL backends, the other PostgreSQL processes and the
 * whole machine (two cores shared by all of them, and by anything else running). Each run checks
 * that every 202 is one document, authorized and announced exactly once (0 lost, 0 duplicated).
 *
 * With BENCH_BASE (another built copy of the repository, e.g. the commit before a change), runs of
 * both alternate for BENCH_ROUNDS rounds, each round starting with the other one, and the medians of
 * each and their ratio (this tree ÷ base) are printed.
 *
 *   npm run bench:pipeline                             # builds dist/ first
 *   BENCH_BASE=/work/wt-base BENCH_DOCUMENTS=1500 BENCH_STEADY_SECONDS=8 npm run bench:pipeline
 *   BENCH_STATEMENT_LOG=/var/log/postgresql/postgresql-15-main.log npm run bench:pipeline
 *
 * Settings: DATABASE_URL (the server the run's database is created on; default the local `test`),
 * BENCH_DOCUMENTS (3000), BENCH_CONCURRENCY (32), BENCH_RATE (200), BENCH_STEADY_SECONDS (15),
 * BENCH_AUTHORITY_LATENCY (simulator latency, ms, default 0), BENCH_NODE_FLAGS (`node` flags for
 * the service besides those of `npm start`), BENCH_BASE, BENCH_ROUNDS (3), BENCH_TYPE (`service_invoice`,
 * or `product_invoice` / `consumer_invoice`: the contract's example NF-e or NFC-e), BENCH_BODY (`client`, or
 * `reused`: one bare body for every request and no Idempotency-Key), BENCH_LIMITS (`raised`, or
 * `default`: the service's own rate limits, 100/s per key), BENCH_STATEMENT_LOG (PostgreSQL's log
 * file, readable here: statements per document are counted with `log_statement = 'all'` on the
 * run's database, which slows it; figures of such a run are for the census only); WORKER_* and
 * WEBHOOKS_* settings are passed to the service when set.
 */
import { cpus, totalmem } from "node:os"
import { killChildren, root, serviceStart } from "./children.js"
import { percentile } from "./loadgen.js"
import { runPipeline } from "./pipelineRun.js"

const BASE = process.env["BENCH_BASE"]
const ROUNDS = BASE === undefined ? 1 : Number(process.env["BENCH_ROUNDS"] ?? 3)

/** The service's own settings that a run may change (pool sizes, caps), passed through when set. */
const passedThrough = Object.fromEntries(
  Object.entries(process.env).filter(([name, value]) => /^(WORKER|WEBHOOKS)_/.test(name) && value !== undefined)
) as Record<string, string>

const options = {
  serverUrl: process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test",
  documents: Number(process.env["BENCH_DOCUMENTS"] ?? 3000),
  concurrency: Number(process.env["BENCH_CONCURRENCY"] ?? 32),
  rate: Number(process.env["BENCH_RATE"] ?? 200),
  steadySeconds: Number(process.env["BENCH_STEADY_SECONDS"] ?? 15),
  authorityLatencyMs: Number(process.env["BENCH_AUTHORITY_LATENCY"] ?? 0),
  body: process.env["BENCH_BODY"] === "reused" ? "reused" as const : "client" as const,
  documentType: (["product_invoice", "consumer_invoice"] as const).find((type) => type === process.env["BENCH_TYPE"]) ??
    "service_invoice" as const,
  defaultLimits: process.env["BENCH_LIMITS"] === "default",
  statementLog: process.env["BENCH_STATEMENT_LOG"],
  env: passedThrough
}

/** The figures compared between variants: [name, read from one run's result]. */
const compared: ReadonlyArray<readonly [string, (run: Awaited<ReturnType<typeof runPipeline>>) => number]> = [
  ["burst accepted/s", (run) => run.burst.accepted_per_second],
  ["burst delivered/s", (run) => run.burst.delivered_per_second],
  ["burst end-to-end/s", (run) => run.burst.end_to_end_per_second],
  ["burst service CPU ms/doc", (run) => run.burst.cpu.ms_per_document["service"]!],
  ["burst PostgreSQL CPU ms/doc", (run) => run.burst.cpu.ms_per_document["postgres"]!],
  ["burst client CPU ms/doc", (run) => run.burst.cpu.ms_per_document["client"]!],
  ["steady p50 ms", (run) => run.steady.acceptance_to_webhook_ms.p50],
  ["steady p99 ms", (run) => run.steady.acceptance_to_webhook_ms.p99],
  ["steady service CPU ms/doc", (run) => run.steady.cpu.ms_per_document["service"]!],
  ["steady PostgreSQL CPU ms/doc", (run) => run.steady.cpu.ms_per_document["postgres"]!],
  ["peak RSS MiB", (run) => Math.max(run.burst.peak_rss_mib, run.steady.peak_rss_mib)]
]

const main = async () => {
  console.log(
    `pipeline bench: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${
      Math.round(totalmem() / 2 ** 30)
    } GiB, node ${process.version}; simulator latency ${options.authorityLatencyMs} ms; ${options.documentType}; body ${options.body}; ` +
      `limits ${options.defaultLimits ? "default" : "raised"}` +
      (Object.keys(passedThrough).length > 0 ? `; ${JSON.stringify(passedThrough)}` : "") +
      `; ${Object.entries(serviceStart.env).map(([name, value]) => `${name}=${value} `).join("")}node ${
        serviceStart.flags.join(" ")
      }`
  )
  const variants = BASE === undefined ? [["this", root] as const] : [["base", BASE] as const, ["this", root] as const]
  const results = new Map<string, Array<Awaited<ReturnType<typeof runPipeline>>>>()
  let failed = false
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which goes first: a machine that warms up or gets busier favours neither.
    for (const [name, tree] of round % 2 === 0 ? variants : [...variants].reverse()) {
      console.log(`round ${round + 1}, ${name} (${tree}):`)
      const run = await runPipeline({ ...options, tree })
      console.log(JSON.stringify(run.burst))
      console.log(JSON.stringify(run.steady))
      if (run.failures.length > 0) failed = true
      results.set(name, [...(results.get(name) ?? []), run])
    }
  }
  if (BASE !== undefined) {
    const median = (name: string, read: (typeof compared)[number][1]) => percentile(results.get(name)!.map(read), 50)
    console.log(`\nmedians of ${ROUNDS} rounds: base | this | this ÷ base`)
    for (const [label, read] of compared) {
      const [base, self] = [median("base", read), median("this", read)]
      console.log(
        `  ${label.padEnd(30)} ${String(base).padStart(8)} | ${String(self).padStart(8)} | ${(self / base).toFixed(2)}`
      )
    }
  }
  if (failed) process.exitCode = 1
}

process.once("SIGINT", () => {
  void killChildren().then(() => process.exit(130))
})
try {
  await main()
} finally {
  await killChildren()
}
