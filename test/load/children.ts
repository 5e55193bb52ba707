/**
 * What the benchmarks that start the service as production does share: a scratch PostgreSQL
 * database per run, child processes (`node dist/main.js`, or a floor server) started on a free port
 * and awaited on their health paths, stopped with SIGTERM (the service drains), and their resident
 * memory and CPU time read from /proc, and the bytes they allocate counted by allocationProbe.ts.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { once } from "node:events"
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { freePort } from "./loadgen.js"

export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..")

/**
 * How `npm start` of the tree at `tree` runs the service (its package.json): the environment it sets
 * before `exec` and the `node` flags, so the benchmarks run each tree with its own memory settings;
 * BENCH_NODE_FLAGS (space-separated) adds to the flags.
 */
export const startCommand = (tree: string = root) => {
  const script = (JSON.parse(readFileSync(resolve(tree, "package.json"), "utf8")) as {
    scripts: Record<string, string>
  }).scripts["start"] ?? ""
  const parsed = /^((?:[A-Z_]+=\S+ )*)exec node (.*)dist\/main\.js$/.exec(script)
  if (parsed === null) {
    throw new Error(`${tree}/package.json: npm start is not "[VAR=value …] exec node … dist/main.js"`)
  }
  const words = (text: string | undefined) => (text ?? "").split(" ").filter((word) => word !== "")
  return {
    env: Object.fromEntries(words(parsed[1]).map((assignment) => assignment.split("=", 2) as [string, string])),
    flags: [...words(parsed[2]), ...words(process.env["BENCH_NODE_FLAGS"])]
  }
}

/** This tree's `npm start`. */
export const serviceStart = startCommand()

/** How long a child may take to answer its health paths (a busy machine starts slowly). */
const START_MS = 120_000
/** How long a child may take to exit after SIGTERM (the service drains first) before SIGKILL. */
const STOP_MS = 30_000

export interface ScratchDatabase {
  readonly name: string
  readonly url: string
  readonly serverVersion: string
  readonly drop: () => Promise<void>
}

/** A database of its own on the server of `serverUrl` (connected to for that), dropped by `drop`. */
export const createScratchDatabase = async (serverUrl: string, prefix: string): Promise<ScratchDatabase> => {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  const serverVersion = String(
    (await admin.query<{ server_version: string }>("SHOW server_version")).rows[0]?.server_version
  )
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const drop = async () => {
    const client = new pg.Client({ connectionString: serverUrl })
    try {
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } catch (error) {
      console.error(`could not drop ${name}: ${String(error)}`)
    } finally {
      await client.end().catch(() => {})
    }
  }
  return { name, url: url.toString(), serverVersion, drop }
}

export interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly base: string
  /** The last lines it printed, to show when it fails to start or dies. */
  readonly tail: Array<string>
}

const children = new Set<ChildProcess>()

/**
 * Starts `node <args>` in the repository (or in `cwd`, another built copy of it) with only `env`
 * (and PATH: nothing of this shell, an OTEL_* or NODE_OPTIONS, leaks in) on a free port, and waits
 * for each of `ready` to answer 200.
 */
export const startChild = async (
  name: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  ready: ReadonlyArray<string>,
  cwd: string = root
): Promise<Child> => {
  const port = await freePort()
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env["PATH"] ?? "", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  child.once("exit", () => children.delete(child))
  const tail: Array<string> = []
  const keep = (chunk: Buffer) => {
    tail.push(...chunk.toString("utf8").split("\n").filter((line) => line.trim() !== ""))
    tail.splice(0, Math.max(0, tail.length - 40))
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const instance: Child = { name, process: child, base: `http://127.0.0.1:${port}`, tail }
  const started = Date.now()
  for (const path of ready) {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${name} exited during its start (${child.exitCode ?? child.signalCode}):\n${tail.join("\n")}`)
      }
      const status = await fetch(instance.base + path, { signal: AbortSignal.timeout(2_000) }).then(
        async (response) => (await response.arrayBuffer(), response.status),
        () => 0
      )
      if (status === 200) break
      if (Date.now() - started > START_MS) {
        throw new Error(`${name}: ${path} not 200 after ${START_MS / 1000} s:\n${tail.join("\n")}`)
      }
      await sleep(100)
    }
  }
  return instance
}

/** SIGTERM and wait for the exit (the service drains; a CPU profile is written then), SIGKILL if it hangs. */
export const stopChild = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, "exit")
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_MS)
  await exited
  clearTimeout(timer)
}

/** Kills every child still running (on the way out, or on Ctrl-C). */
export const killChildren = () =>
  Promise.all([...children].map(async (child) => {
    const exited = once(child, "exit")
    child.kill("SIGKILL")
    await exited
  }))

/** Resident memory of a process, from /proc (NaN where there is none). */
export const rssMiB = (pid: number | undefined) => {
  try {
    const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return kib === undefined ? NaN : Number(kib) / 1024
  } catch {
    return NaN
  }
}

/** Samples a process's RSS every 100 ms until `stop`, which returns the peak. */
export const sampleRss = (pid: number | undefined) => {
  let peak = rssMiB(pid)
  const timer = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 100)
  return {
    stop: () => {
      clearInterval(timer)
      return Math.round(Math.max(peak, rssMiB(pid)))
    }
  }
}

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** CPU time (user + system, µs) a process has spent so far, from /proc/<pid>/stat (NaN where there is none). */
export const cpuMicros = (pid: number | undefined) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
  } catch {
    return NaN
  }
}

/**
 * CPU microseconds so far of each thread of process `pid`, by thread name (`/proc/<pid>/task`): the
 * JavaScript thread is named after the process, V8's and libuv's helpers have names of their own.
 */
export const threadCpuMicros = (pid: number | undefined) => {
  const byName = new Map<string, number>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")
        const name = tid === String(pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        const micros = ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
        byName.set(name, (byName.get(name) ?? 0) + micros)
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // The process ended.
  }
  return byName
}

/** The `node` flag and environment that load allocationProbe.ts into a child, writing to `file`. */
export const allocationProbe = (file: string) => ({
  flags: ["--import", resolve(root, "test/load/allocationProbe.ts")],
  env: { ALLOCATION_PROBE_FILE: file }
})

export interface Allocation {
  readonly allocated_bytes: number
  readonly gcs: number
  readonly gc_pause_ms: number
  readonly gc_pause_us: number
  readonly heap_used_after_mib: number
}

/**
 * Opens a child's allocation window (allocationProbe.ts); the returned `close` ends it and reads
 * what the probe wrote (undefined if it wrote nothing within 5 s).
 */
export const openAllocationWindow = (child: ChildProcess, file: string) => {
  rmSync(file, { force: true })
  child.kill("SIGUSR2")
  return async (): Promise<Allocation | undefined> => {
    child.kill("SIGUSR2")
    for (let waited = 0; waited < 5_000; waited += 50) {
      if (existsSync(file)) {
        const text = readFileSync(file, "utf8")
        if (text.endsWith("\n")) {
          rmSync(file, { force: true })
          return JSON.parse(text) as Allocation
        }
      }
      await sleep(50)
    }
    return undefined
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc; 0 once it is gone. */
export const cpuSeconds = (pid: number | undefined): number => {
  const micros = cpuMicros(pid)
  return Number.isNaN(micros) ? 0 : micros / 1e6
}

/**
 * CPU seconds so far of every PostgreSQL process on this machine, split into the backends connected
 * to `database` (their process title names it) and the rest (WAL writer, checkpointer, other
 * databases' backends: other work on a shared machine shows up there).
 */
export const postgresCpu = (database: string) => {
  const byPid = new Map<number, { readonly ours: boolean; readonly seconds: number }>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ")
      if (!title.startsWith("postgres")) continue
      byPid.set(Number(entry), { ours: title.includes(` ${database} `), seconds: cpuSeconds(Number(entry)) })
    } catch {
      // Gone meanwhile.
    }
  }
  return byPid
}

/** Busy and total CPU seconds of the whole machine so far (all cores), from /proc/stat. */
export const machineCpu = () => {
  const [, ...times] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).map(Number)
  const total = times.reduce((sum, value) => sum + value, 0)
  // idle and iowait are the idle columns.
  return { busy: (total - times[3]! - times[4]!) / ticksPerSecond, total: total / ticksPerSecond }
}
