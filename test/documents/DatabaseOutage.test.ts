/**
 * A PostgreSQL outage under load (issue 16 items 12 and 13; SPEC §2 `503 service_unavailable`):
 * the app reaches PostgreSQL through a TCP proxy that the test cuts (every connection reset, new
 * ones refused, as when the server stops) and restores. Clients issuing documents with
 * Idempotency-Keys see only 202 or 503 with Retry-After, never a 500, never a 409 for their
 * retried key, and never wait much longer than the connect timeout; `/healthz` stays 200 and
 * `/readyz` says 503; after the outage every key ends as exactly one document.
 *
 * Needs a real PostgreSQL (TEST_DATABASE_URL): the embedded database cannot be cut off.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { makeApp } from "../../src/App.js"
import { postgresThroughProxy } from "../support/Databases.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.js"
import { httpServerTest, rawRequest, testConfig } from "../support/TestApp.js"

const postgresUrl = process.env["TEST_DATABASE_URL"]
const CONNECT_TIMEOUT = Duration.seconds(1)

let proxy: TcpProxy | undefined

const documentBody = (reference: string) => ({
  type: "service_invoice",
  reference,
  taker: { tax_id: "52998224725", name: "Maria" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 1000, iss_rate: "2.00" }
})

if (postgresUrl === undefined) {
  describe.skip("database outage (needs TEST_DATABASE_URL: the embedded database cannot be cut off)", () => {})
} else {
  const target = new URL(postgresUrl)
  const app = Layer.unwrap(
    Effect.promise(async () => {
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
      return makeApp(testConfig(), postgresThroughProxy(proxy.port, { connectTimeout: CONNECT_TIMEOUT })).pipe(
        Layer.provideMerge(httpServerTest)
      )
    })
  )

  layer(app, { timeout: 120_000, excludeTestServices: true })("database outage (postgres)", (it) => {
    it.effect("clients see 202 or 503 with Retry-After, no 500, no 409 on retry, and lose nothing", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("outage")
        const { token } = yield* createKey(owner, "test", ["documents:write", "documents:read"])
        const statuses = new Map<number, number>()
        let longestWaitMs = 0
        let missingRetryAfter = 0
        let running = true

        /** One client: each key is retried until it is served, as a careful integrator does. */
        const client = (id: number) =>
          Effect.gen(function*() {
            let n = 0
            while (running) {
              const key = `outage-${id}-${n++}`
              for (;;) {
                const started = Date.now()
                const response = yield* rawRequest("POST", "/v1/documents", {
                  token,
                  body: documentBody(key),
                  headers: { "idempotency-key": key }
                })
                longestWaitMs = Math.max(longestWaitMs, Date.now() - started)
                statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
                if (response.status === 503 && response.headers["retry-after"] === undefined) missingRetryAfter++
                if (response.status !== 503) break
                yield* Effect.sleep("100 millis")
              }
            }
            return n
          })

        const clients = yield* Effect.forkChild(Effect.all([0, 1, 2, 3].map(client), { concurrency: "unbounded" }))
        yield* Effect.sleep("1 second")
        yield* Effect.promise(() => proxy!.cut())
        yield* Effect.sleep("500 millis")
        const health = yield* rawRequest("GET", "/healthz")
        const ready = yield* rawRequest("GET", "/readyz")
        yield* Effect.sleep("2500 millis")
        yield* Effect.promise(() => proxy!.restore())
        yield* Effect.sleep("1500 millis")
        running = false
        const issued = yield* Fiber.await(clients)

        expect(health.status).toBe(200)
        expect(ready.status).toBe(503)
        const seen = Object.fromEntries(statuses)
        expect(Object.keys(seen).map(Number).sort(), JSON.stringify(seen)).toEqual([202, 503])
        expect(missingRetryAfter).toBe(0)
        // The connect timeout bounds every wait (plus the request's own work).
        expect(longestWaitMs).toBeLessThan(Duration.toMillis(CONNECT_TIMEOUT) * 4)

        // Exactly one document per key, none lost.
        expect(issued._tag).toBe("Success")
        const keys = issued._tag === "Success" ? issued.value.reduce((a: number, b: number) => a + b, 0) : 0
        const documents: Array<string> = []
        let cursor: string | undefined
        do {
          const page = yield* rawRequest("GET", `/v1/documents?limit=100${cursor ? `&starting_after=${cursor}` : ""}`, {
            token
          })
          const data = page.json?.["data"] as Array<{ id: string; reference: string }>
          documents.push(...data.map((d) => d.reference))
          cursor = page.json?.["has_more"] ? data[data.length - 1]?.id : undefined
        } while (cursor !== undefined)
        expect(new Set(documents).size).toBe(documents.length)
        expect(documents.length).toBe(keys)
      }))
  })
}
