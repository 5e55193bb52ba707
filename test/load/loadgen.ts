/**
 * A load generator on its own thread (its own event loop and core), so the client's HTTP work
 * does not compete with the server under test. Used by the benchmarks in this folder.
 */
import { once } from "node:events"
import { createServer as createNetServer } from "node:net"
import { Worker } from "node:worker_threads"

export interface LoadOptions {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers: Record<string, string>
  /** One body per request, or the same body for all. */
  readonly body?: string | undefined
  readonly bodies?: ReadonlyArray<string> | undefined
  readonly total: number
  readonly concurrency: number
  readonly deadlineMs: number
  /** When set, requests start at this rate (an open model) instead of as fast as possible. */
  readonly ratePerSecond?: number | undefined
}

export interface LoadResult {
  readonly latenciesMs: ReadonlyArray<number>
  readonly statuses: Record<string, number>
  readonly seconds: number
}

const workerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const o = workerData
let next = 0
const latencies = []
const statuses = {}
const started = performance.now()
const one = async () => {
  while (next < o.total && performance.now() - started < o.deadlineMs) {
    const i = next++
    if (o.ratePerSecond) {
      const due = started + (i * 1000) / o.ratePerSecond
      const wait = due - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    }
    const t0 = performance.now()
    const response = await fetch(o.url, { method: o.method, headers: o.headers, body: o.bodies ? o.bodies[i] : o.body })
    await response.arrayBuffer()
    latencies.push(performance.now() - t0)
    statuses[response.status] = (statuses[response.status] || 0) + 1
  }
}
Promise.all(Array.from({ length: o.concurrency }, one)).then(() =>
  parentPort.postMessage({ latenciesMs: latencies, statuses, seconds: (performance.now() - started) / 1000 }))
`

export const runLoad = (options: LoadOptions): Promise<LoadResult> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(workerSource, { eval: true, workerData: options })
    worker.once("message", (result: LoadResult) => {
      resolve(result)
      void worker.terminate()
    })
    worker.once("error", reject)
  })

export const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

/** A verdict list for the scripts that check (crash, outage): each check printed, failures kept. */
export const makeChecks = () => {
  const failures: Array<string> = []
  const check = (ok: boolean, message: string) => {
    console.log(`  ${ok ? "ok  " : "FAIL"} ${message}`)
    if (!ok) failures.push(message)
  }
  return { failures, check }
}

/** A TCP port free on loopback right now, for a child instance to listen on. */
export const freePort = async (): Promise<number> => {
  const server = createNetServer()
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  server.close()
  if (typeof address !== "object" || address === null) throw new Error("no free port")
  return address.port
}
