/** A real HTTP receiver on 127.0.0.1 for webhook tests: records every request, answers as scripted. */
import { Effect } from "effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string
}

export type Responder = (request: Received, index: number) => number | { status: number; body?: string }

const flat = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v]]))
  )

/** Scoped: the server closes with the test's scope. `respond` can be swapped at any time. */
export const startReceiver = (initial: Responder = () => 200) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{
        readonly url: (path?: string) => string
        readonly port: number
        readonly received: Array<Received>
        respond: Responder
        readonly close: () => Promise<void>
      }>((resolve) => {
        const state = {
          received: [] as Array<Received>,
          respond: initial
        }
        const server = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const request = {
              path: req.url ?? "/",
              headers: flat(req.headers),
              body: Buffer.concat(chunks).toString("utf8")
            }
            const index = state.received.length
            state.received.push(request)
            const answer = handle.respond(request, index)
            const { body, status } = typeof answer === "number" ? { status: answer, body: `status ${answer}` } : answer
            res.writeHead(status, { "content-type": "text/plain" })
            res.end(body ?? "")
          })
        })
        const handle = {
          get received() {
            return state.received
          },
          get respond() {
            return state.respond
          },
          set respond(r: Responder) {
            state.respond = r
          },
          port: 0,
          url: (path = "/hook") => `http://127.0.0.1:${handle.port}${path}`,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
        }
        server.listen(0, "127.0.0.1", () => {
          handle.port = (server.address() as AddressInfo).port
          resolve(handle)
        })
      })
    ),
    (receiver) => Effect.promise(() => receiver.close())
  )

/** Wall-clock wait for the receiver (real I/O), whatever clock the test runs on. */
export const waitFor = (condition: () => boolean, timeoutMs = 10_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error("timed out waiting for the receiver")
      await new Promise((r) => setTimeout(r, 10))
    }
  })

/**
 * Repeats `effect` until its result satisfies `done` (bounded). The receiver sees a delivery a
 * moment before the dispatcher records its outcome, so reads of the outcome must wait for it.
 */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (value: A) => boolean, attempts = 200) =>
  Effect.gen(function*() {
    let value = yield* effect
    for (let i = 0; i < attempts && !done(value); i++) {
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      value = yield* effect
    }
    return value
  })

/**
 * A receiver that holds every request: it answers 204 after `holdMs`, or never (a tarpit: the
 * connection stays open until the sender gives up). It counts the requests in flight, per path and
 * in all, and the most seen at once.
 */
export const startHoldingReceiver = (holdMs: number | "never") =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{
        readonly url: (path: string) => string
        /** Paths of the requests as they arrived. */
        readonly arrivals: Array<string>
        readonly inFlight: () => number
        readonly maxInFlight: () => number
        readonly maxInFlightAt: (path: string) => number
        readonly close: () => Promise<void>
      }>((resolve) => {
        const open = new Map<string, number>()
        const most = new Map<string, number>()
        const arrivals: Array<string> = []
        let total = 0
        let maxTotal = 0
        const server = createServer((req, res) => {
          const path = req.url ?? "/"
          arrivals.push(path)
          open.set(path, (open.get(path) ?? 0) + 1)
          most.set(path, Math.max(most.get(path) ?? 0, open.get(path)!))
          total += 1
          maxTotal = Math.max(maxTotal, total)
          // Ends when answered or when the sender gives up, whichever comes first; counted once.
          res.once("close", () => {
            open.set(path, open.get(path)! - 1)
            total -= 1
          })
          req.resume()
          if (holdMs !== "never") setTimeout(() => res.writeHead(204).end(), holdMs)
        })
        server.listen(0, "127.0.0.1", () => {
          const port = (server.address() as AddressInfo).port
          resolve({
            url: (path) => `http://127.0.0.1:${port}${path}`,
            arrivals,
            inFlight: () => total,
            maxInFlight: () => maxTotal,
            maxInFlightAt: (path) => most.get(path) ?? 0,
            close: () =>
              new Promise<void>((done) => {
                server.closeAllConnections()
                server.close(() => done())
              })
          })
        })
      })
    ),
    (receiver) => Effect.promise(() => receiver.close())
  )
