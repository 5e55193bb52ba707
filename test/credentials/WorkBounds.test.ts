/**
 * Opening a PKCS#12 file costs bounded work and never holds the event loop (SPEC §8, issue 16
 * item 1): the derivation budget sees iteration counts however the file encodes them and sums
 * them over every bag; the opener runs forge on a worker thread with a time limit; and `/healthz`
 * keeps answering while an upload is being opened.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { performance } from "node:perf_hooks"
import { iterationCounts, MAX_PKCS12_TOTAL_ITERATIONS } from "../../src/credentials/Pkcs12Limits.js"
import { defaultOpenerOptions, Pkcs12Opener } from "../../src/credentials/Pkcs12Opener.js"
import { expectError, field } from "../support/accounts.js"
import { makePkcs12, reexportWithIterations } from "../support/certificates.js"
import { registerOwner } from "../support/fixtures.js"
import { chunkedWithIterations, repeatedKeyBags } from "../support/pkcs12Bombs.js"
import { client, makeTestApp, rawRequest } from "../support/TestApp.js"

const PASSWORD = "work-bounds-pass"
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

// One real bundle, reshaped into each hostile form.
let bundle: ReturnType<typeof makePkcs12> | undefined
const realBundle =
  () => (bundle ??= makePkcs12({ cn: "EMPRESA LTDA:11222333000181", password: PASSWORD, encryption: "3des" }))

describe("the derivation budget", () => {
  it("sees iteration counts inside a constructed (chunked) OCTET STRING", () => {
    const hidden = chunkedWithIterations(realBundle().pfx, 2_000_000)
    expect(iterationCounts(hidden)).toMatchObject({ largest: 2_000_000 })
  })

  it("adds up the counts of every bag, not just the largest", () => {
    const counts = iterationCounts(repeatedKeyBags(100, 100_000, PASSWORD))
    expect(counts).toEqual({ largest: 100_000, total: 10_000_000 })
    expect(counts!.total).toBeGreaterThan(MAX_PKCS12_TOTAL_ITERATIONS)
  })
})

describe("Pkcs12Opener", () => {
  it.live("terminates a thread past its time limit and answers too_costly; the next file gets a fresh thread", () =>
    Effect.gen(function*() {
      const opener = yield* Pkcs12Opener
      const slow = yield* Effect.flip(opener.open(realBundle().pfx, Redacted.make(PASSWORD)))
      expect(slow.reason).toBe("too_costly")
    }).pipe(
      Effect.provide(Pkcs12Opener.layerWith({ ...defaultOpenerOptions, threads: 1, timeLimit: Duration.millis(1) }))
    ))

  it.live("queues uploads beyond its threads and reuses them", () =>
    Effect.gen(function*() {
      const opener = yield* Pkcs12Opener
      const opened = yield* Effect.all(
        Array.from({ length: 3 }, () => opener.open(realBundle().pfx, Redacted.make(PASSWORD))),
        { concurrency: "unbounded" }
      )
      expect(opened.map((c) => c.fingerprintSha256)).toEqual(Array(3).fill(realBundle().fingerprintSha256))
      const wrong = yield* Effect.flip(opener.open(realBundle().pfx, Redacted.make("not the password")))
      expect(wrong.reason).toBe("wrong_password")
    }).pipe(Effect.provide(Pkcs12Opener.layerWith({
      ...defaultOpenerOptions,
      threads: 1,
      timeLimit: Duration.seconds(10),
      // The third waits for both others: on a loaded machine longer than the default bound.
      maxWait: Duration.seconds(60)
    }))))
})

/** Runs `work` while polling /healthz; answers its result and the slowest health check in ms. */
const whilePollingHealth = <A, E, R>(work: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let slowest = 0
    let done = false
    const poll = Effect.gen(function*() {
      while (!done) {
        const started = performance.now()
        const health = yield* rawRequest("GET", "/healthz")
        expect(health.status).toBe(200)
        slowest = Math.max(slowest, performance.now() - started)
        yield* Effect.sleep("10 millis")
      }
    })
    const [result] = yield* Effect.all(
      [Effect.ensuring(work, Effect.sync(() => (done = true))), poll],
      { concurrency: "unbounded" }
    )
    return { result, slowest }
  })

const upload = (session: string, tenantId: string, pfx: Uint8Array, password: string) =>
  rawRequest("POST", `/v1/tenants/${tenantId}/credentials`, { token: session, body: { pkcs12: base64(pfx), password } })

layer(makeTestApp("embedded"), { timeout: 120_000, excludeTestServices: true })("uploads of hostile files", (it) => {
  // On the embedded database every query of the upload runs on this event loop too, so a loaded
  // two-core machine stretches a health check to a few hundred milliseconds (298 ms seen in CI).
  // The bound only has to tell that apart from forge on the event loop, which the costly file
  // below makes last seconds.
  const HEALTH_BOUND_MS = 1_000

  it.effect("a 2,000,000-iteration count hidden in a chunked OCTET STRING is refused at once; /healthz keeps answering", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner("bomb")
      const started = performance.now()
      const { result, slowest } = yield* whilePollingHealth(
        upload(owner.session, owner.tenantId, chunkedWithIterations(realBundle().pfx, 2_000_000), PASSWORD)
      )
      expectError(result, 422, "invalid_certificate")
      expect(field(result.json, "message")).toContain("too much work")
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(slowest).toBeLessThan(HEALTH_BOUND_MS)
    }))

  it.effect("a hundred bags of 100,000 iterations each is refused at once", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner("bags")
      const started = performance.now()
      const refused = yield* upload(owner.session, owner.tenantId, repeatedKeyBags(100, 100_000, PASSWORD), PASSWORD)
      expectError(refused, 422, "invalid_certificate")
      expect(field(refused.json, "message")).toContain("too much work")
      expect(performance.now() - started).toBeLessThan(3_000)
    }))

  it.effect("a costly but acceptable file is opened off the event loop: /healthz answers while it is parsed", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner("heavy")
      const tenant = yield* (yield* client(owner.session)).tenants.get({ params: { tenantId: owner.tenantId } })
      const ours = makePkcs12({ cn: `EMPRESA LTDA:${tenant.tax_id}`, cnpjOid: tenant.tax_id, password: PASSWORD })
      // 100,000 PBKDF2 iterations for the key and again for the certificates (within the budget):
      // seconds of forge, which would hold /healthz that long if it ran on the event loop.
      const heavy = reexportWithIterations(ours, PASSWORD, 100_000)
      const { result, slowest } = yield* whilePollingHealth(upload(owner.session, owner.tenantId, heavy, PASSWORD))
      expect(result.status, result.text).toBe(201)
      expect(slowest).toBeLessThan(HEALTH_BOUND_MS)
    }))
})
