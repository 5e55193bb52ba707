/**
 * Instructions per read (`npm run bench:instructions`): the read of read.bench.ts, `GET
 * /v1/tenants/{tenantId}` with an API key, counted in machine instructions by valgrind's callgrind
 * instead of timed. On a shared machine the time of one read moves by a third from one round to the
 * next (docs/benchmarks.md); the instructions it executes move by about 1 %, so a change of a few
 * percent shows here when `bench:read` cannot tell it from the drift. Runs:
 *   service    the built service as `npm start` starts it (dist/main.js),
 *   framework  the framework floor (test/load/readFramework.ts),
 *   base       with BENCH_BASE (another built copy of the repository), that copy's service.
 * Each run starts under callgrind with instrumentation off (the start-up is not counted), serves
 * BENCH_WARMUP reads (so the code is compiled as it is under load), then counts BENCH_READS reads
 * from 4 connections. The count is of every thread of the process (the collector's included) in user
 * space; the kernel's work (sockets) is not in it. Under valgrind a process runs ~50× slower: a
 * run takes about a minute. Rounds rotate the order, as the other benchmarks do.
 *
 *   npm run bench:instructions
 *   BENCH_BASE=/work/wt-base BENCH_RUNS=service,base npm run bench:instructions
 *
 * Settings (environment): BENCH_ROUNDS (3), BENCH_READS (1000), BENCH_WARMUP (1500), BENCH_RUNS
 * (service,framework; base when BENCH_BASE is set), BENCH_BASE, BENCH_KEEP (keep callgrind's files,
 * for `callgrind_annotate`), DATABASE_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import autocannon from "autocannon"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createScratchDatabase, serviceStart, startChild, startCommand, stopChild } from "./children.js"
import { freePort, percentile } from "./loadgen.js"
import { checkRead, setUp } from "./readSetup.js"

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 3)
const READS = Number(process.env["BENCH_READS"] ?? 1000)
const WARMUP = Number(process.env["BENCH_WARMUP"] ?? 1500)
const BASE = process.env["BENCH_BASE"]
const RUNS = (process.env["BENCH_RUNS"] ?? (BASE === undefined ? "service,framework" : "service,framework,base"))
  .split(",")
const SERVER_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"
const root = resolve(import.meta.dirname, "../..")

try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" })
} catch {
  console.error("bench:instructions needs valgrind (Debian: apt-get install valgrind)")
  process.exit(1)
}
if (RUNS.includes("base") && BASE === undefined) throw new Error("the run `base` needs BENCH_BASE")

const database = await createScratchDatabase(SERVER_URL, "etd_instrbench")
const unlimited = "10000000"
const env: Record<string, string> = {
  DATABASE_URL: database.url,
  DATA_DIR: mkdtempSync(join(tmpdir(), "etd-instrbench-")),
  PASSWORD_HASH_COST: "1024",
  ...Object.fromEntries(
    ["PER_SECOND", "BURST", "TENANT_PER_SECOND", "TENANT_BURST"].map((name) => [`RATE_LIMIT_${name}`, unlimited])
  ),
  // The framework floor's pool: the service's connections less its three LISTENing ones (read.bench.ts).
  POOL_MAX: "20"
}

/** The command of a run, started under callgrind with instrumentation off. */
const commandOf = (run: string) => {
  if (run === "framework") return { cwd: root, args: ["test/load/readFramework.ts"], env: {}, ready: "/healthz" }
  const tree = run === "base" ? BASE! : root
  const start = run === "base" ? startCommand(tree) : serviceStart
  return { cwd: tree, args: [...start.flags, "dist/main.js"], env: start.env, ready: "/readyz" }
}

const waitFor = async (url: string, child: ChildProcess) => {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode})`)
    const ok = await fetch(url).then((response) => response.ok, () => false)
    if (ok) return
    await new Promise((done) => setTimeout(done, 1000))
  }
  throw new Error(`${url} did not answer in 10 minutes`)
}

const measure = async (run: string, path: string, token: string) => {
  const command = commandOf(run)
  const out = mkdtempSync(join(tmpdir(), `etd-callgrind-${run}-`))
  const port = await freePort()
  const child = spawn(
    "valgrind",
    [
      "--tool=callgrind",
      "--instr-atstart=no",
      `--callgrind-out-file=${out}/callgrind.%p`,
      process.execPath,
      ...command.args
    ],
    {
      cwd: command.cwd,
      env: { PATH: process.env["PATH"] ?? "", ...env, ...command.env, PORT: String(port) },
      stdio: "ignore"
    }
  )
  try {
    const base = `http://127.0.0.1:${port}`
    await waitFor(base + command.ready, child)
    const read = (amount: number) =>
      autocannon({ url: base + path, connections: 4, amount, headers: { authorization: `Bearer ${token}` } })
    await read(WARMUP)
    execFileSync("callgrind_control", ["--instr=on", String(child.pid)], { stdio: "ignore" })
    const counted = await read(READS)
    execFileSync("callgrind_control", ["--dump", String(child.pid)], { stdio: "ignore" })
    if (counted.non2xx > 0 || counted.errors > 0) throw new Error(`${run}: ${counted.non2xx} reads were not 200`)
    // The dump's totals: one file per dump (and one, empty, written at the exit).
    const instructions = readdirSync(out).reduce((sum, file) => {
      const total = /^(?:totals|summary): (\d+)/m.exec(readFileSync(join(out, file), "utf8"))
      return sum + Number(total?.[1] ?? 0)
    }, 0)
    return {
      instructions_per_read: Math.round(instructions / READS),
      ...(process.env["BENCH_KEEP"] === undefined ? {} : { files: out })
    }
  } finally {
    child.kill("SIGKILL")
    if (process.env["BENCH_KEEP"] === undefined) rmSync(out, { recursive: true, force: true })
  }
}

try {
  const setup = await startChild("setup", [...serviceStart.flags, "dist/main.js"], env, ["/healthz", "/readyz"])
  const { tenantId, token } = await setUp(setup.base, `instr${Date.now()}`)
  const path = `/v1/tenants/${tenantId}`
  await checkRead(setup, path, token)
  await stopChild(setup.process)
  console.log(
    `instructions bench: ${
      RUNS.join(", ")
    }; ${ROUNDS} rounds (order rotating) of ${WARMUP} reads uncounted, then ${READS} counted`
  )
  const results = new Map<string, Array<number>>(RUNS.map((run) => [run, []]))
  for (let round = 1; round <= ROUNDS; round++) {
    for (const run of RUNS.map((_, i) => RUNS[(i + round - 1) % RUNS.length]!)) {
      const measured = await measure(run, path, token)
      results.get(run)!.push(measured.instructions_per_read)
      console.log(JSON.stringify({ bench: "instructions", run, round, ...measured }))
    }
  }
  const medians = new Map([...results].map(([run, counts]) => [run, percentile([...counts].sort((a, b) => a - b), 50)]))
  console.log("\nrun          thousand instructions per read (median; every round)")
  for (const [run, counts] of results) {
    console.log(
      `${run.padEnd(12)} ${(medians.get(run)! / 1000).toFixed(0).padStart(6)}   (${
        counts.map((n) => (n / 1000).toFixed(0)).join(", ")
      })`
    )
  }
  const ratio = (run: string, to: string) => {
    const [a, b] = [medians.get(run), medians.get(to)]
    if (a !== undefined && b !== undefined) console.log(`  ${run} / ${to}: ${(a / b).toFixed(3)}×`)
  }
  ratio("service", "framework")
  ratio("base", "framework")
  ratio("service", "base")
} finally {
  await database.drop()
  rmSync(env["DATA_DIR"]!, { recursive: true, force: true })
}
