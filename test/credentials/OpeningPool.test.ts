/**
 * Uploads against a busy PKCS#12 pool, over HTTP (SPEC §11: "a bounded wait for the opening pool
 * (503/429 with Retry-After, never a long hang)"; issue: four costly files of one tenant moved
 * another tenant's upload from 78 ms to 2.8 s). The pool has one thread; a file at the edge of the
 * derivation budget holds it for a second or more, and each step below waits for the pool's own
 * count of running and waiting openings rather than for a clock. The queue's rules themselves are
 * in OpeningTurns.test.ts; these check that uploads are held to them and what a client sees.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { performance } from "node:perf_hooks"
import type { OpeningLoad } from "../../src/credentials/OpeningTurns.js"
import { Pkcs12Opener } from "../../src/credentials/Pkcs12Opener.js"
import { expectError } from "../support/accounts.js"
import { makePkcs12, reexportWithIterations } from "../support/certificates.js"
import { registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest } from "../support/TestApp.js"

const PASSWORD = "opening-pool-pass"
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

/** An owner with an ordinary certificate of their tenant's, and a costly one (100,000 iterations per bag). */
const tenantWithFiles = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    const tenant = yield* (yield* client(owner.session)).tenants.get({ params: { tenantId: owner.tenantId } })
    const ordinary = makePkcs12({ cn: `${label} LTDA:${tenant.tax_id}`, cnpjOid: tenant.tax_id, password: PASSWORD })
    return { ...owner, ordinary: ordinary.pfx, costly: () => reexportWithIterations(ordinary, PASSWORD, 100_000) }
  })

const upload = (owner: { session: string; tenantId: string }, pfx: Uint8Array) =>
  Effect.gen(function*() {
    const started = performance.now()
    const response = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/credentials`, {
      token: owner.session,
      body: { pkcs12: base64(pfx), password: PASSWORD }
    })
    return { ...response, ms: performance.now() - started }
  })

/** Waits (a few seconds at most) until the pool runs and queues exactly this many openings. */
const untilLoad = (expected: OpeningLoad) =>
  Effect.gen(function*() {
    const opener = yield* Pkcs12Opener
    for (let i = 0; i < 500; i++) {
      if (JSON.stringify(yield* opener.load) === JSON.stringify(expected)) return
      yield* Effect.sleep(Duration.millis(10))
    }
    expect(yield* opener.load).toEqual(expected)
  })

const expectRetryAfter = (response: { headers: Record<string, string>; json?: Record<string, unknown> }) => {
  const retryAfter = Number(response.headers["retry-after"])
  expect(Number.isInteger(retryAfter) && retryAfter >= 1, JSON.stringify(response.headers)).toBe(true)
  expect(response.json?.["retry_after"]).toBe(retryAfter)
}

// Generous for a loaded machine; the costly file holds the thread for well over a second.
const QUICK_MS = 1000

layer(
  makeTestApp("embedded", {
    pkcs12Pool: { threads: 1, queue: 1, maxWait: Duration.seconds(60), timeLimit: Duration.seconds(60) }
  }),
  { timeout: 120_000, excludeTestServices: true }
)("a one-thread opening pool with a queue of one", (it) => {
  it.effect("a tenant's second upload meanwhile is 429, a full queue 503, both at once; another tenant's upload is served", () =>
    Effect.gen(function*() {
      const [heavy, patient, late] = [
        yield* tenantWithFiles("HEAVY"),
        yield* tenantWithFiles("PATIENT"),
        yield* tenantWithFiles("LATE")
      ]
      const costly = heavy.costly()
      yield* untilLoad({ running: 0, waiting: 0 })

      const first = yield* Effect.forkChild(upload(heavy, costly))
      yield* untilLoad({ running: 1, waiting: 0 })

      // The same tenant again, while its first file is being opened: refused at once, not queued.
      const again = yield* upload(heavy, costly)
      expectError(again, 429, "rate_limited")
      expectRetryAfter(again)
      expect(again.ms).toBeLessThan(QUICK_MS)

      // Another tenant's ordinary file takes the one place in the queue …
      const queued = yield* Effect.forkChild(upload(patient, patient.ordinary))
      yield* untilLoad({ running: 1, waiting: 1 })

      // … so a third tenant's is refused at once rather than left hanging.
      const full = yield* upload(late, late.ordinary)
      expectError(full, 503, "service_unavailable")
      expectRetryAfter(full)
      expect(full.ms).toBeLessThan(QUICK_MS)
      // Still the costly file on the thread: the refusals above came while it ran.
      expect(yield* (yield* Pkcs12Opener).load).toEqual({ running: 1, waiting: 1 })

      expect((yield* Fiber.join(first)).status).toBe(201)
      // The waiting tenant came right after the one costly file: the second one never got in line.
      expect((yield* Fiber.join(queued)).status).toBe(201)
      // Nothing of the refused uploads was held: the third tenant is served now.
      expect((yield* upload(late, late.ordinary)).status).toBe(201)
      yield* untilLoad({ running: 0, waiting: 0 })
    }))
})

layer(
  makeTestApp("embedded", {
    pkcs12Pool: { threads: 1, queue: 4, maxWait: Duration.millis(300), timeLimit: Duration.seconds(60) }
  }),
  { timeout: 120_000, excludeTestServices: true }
)("an opening pool with a short wait", (it) => {
  it.effect("an upload that waits past the bound is answered 503 with Retry-After, long before the thread frees", () =>
    Effect.gen(function*() {
      const [heavy, patient] = [yield* tenantWithFiles("HEAVY"), yield* tenantWithFiles("PATIENT")]
      const costly = heavy.costly()
      yield* untilLoad({ running: 0, waiting: 0 })
      const first = yield* Effect.forkChild(upload(heavy, costly))
      yield* untilLoad({ running: 1, waiting: 0 })

      const waited = yield* upload(patient, patient.ordinary)
      expectError(waited, 503, "service_unavailable")
      expectRetryAfter(waited)
      expect(waited.ms).toBeGreaterThanOrEqual(300)
      expect(waited.ms).toBeLessThan(300 + QUICK_MS)
      expect(yield* (yield* Pkcs12Opener).load).toEqual({ running: 1, waiting: 0 })

      expect((yield* Fiber.join(first)).status).toBe(201)
      expect((yield* upload(patient, patient.ordinary)).status).toBe(201)
    }))
})
