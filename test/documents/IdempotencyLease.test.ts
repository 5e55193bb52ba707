/**
 * An Idempotency-Key claim is a lease its request keeps alive (issue 16 item 10): a holder that
 * died (its process was killed, so nothing renews the claim) is taken over within one lease (two
 * seconds, so a client's retry across a crash is answered within 5 s even if a second instance dies
 * meanwhile), by a retry that waits for it rather than failing with 409, and a holder that is alive
 * keeps the key however long it runs.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Schema } from "effect"
import { NewDocument } from "../../src/documents/Api.js"
import { CLAIM_LEASE, Idempotency, requestHash } from "../../src/documents/Idempotency.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const documentBody = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 1000, iss_rate: "2.00" }
}

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `idempotency leases (${database})`,
    (it) => {
      it.effect("the claim of a request whose instance died is taken over within one 2 s lease", () =>
        Effect.gen(function*() {
          expect(Duration.toMillis(CLAIM_LEASE)).toBeLessThanOrEqual(2_000)
          const owner = yield* registerOwner("lease-dead")
          const { token } = yield* createKey(owner, "test", ["documents:write"])
          const idempotency = yield* Idempotency
          // The claim as a request makes it, then nothing: its instance was killed.
          const scope = { tenantId: owner.tenantId, environment: "test" as const, key: "order-crashed" }
          const claimed = yield* idempotency.claim(
            scope,
            requestHash(Schema.decodeUnknownSync(NewDocument)(documentBody))
          )
          expect(claimed._tag).toBe("Claimed")

          // The client's retry waits for the dead claim's lease to run out, then is served.
          const started = Date.now()
          const retried = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: documentBody,
            headers: { "idempotency-key": "order-crashed" }
          })
          expect(retried.status, retried.text).toBe(202)
          // The lease, a poll and the request's own work; a longer lease would take longer.
          expect(Date.now() - started).toBeLessThan(Duration.toMillis(CLAIM_LEASE) + 1_500)
          // Afterwards the key replays that one answer.
          const replayed = yield* rawRequest("POST", "/v1/documents", {
            token,
            body: documentBody,
            headers: { "idempotency-key": "order-crashed" }
          })
          expect(replayed.json?.["id"]).toBe(retried.json?.["id"])
        }).pipe(Effect.provide(Idempotency.layer)))

      it.effect("a live request keeps its claim past the lease: a duplicate is still 409", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("lease-alive")
          const idempotency = yield* Idempotency
          const scope = { tenantId: owner.tenantId, environment: "test" as const, key: "order-slow" }
          const claimed = yield* idempotency.claim(scope, "same body")
          if (claimed._tag !== "Claimed") throw new Error(`expected a claim, got ${claimed._tag}`)
          // A request that runs twice as long as the lease, renewing as it goes.
          const slow = yield* Effect.forkChild(
            idempotency.hold(scope, claimed.token)(Effect.sleep(Duration.times(CLAIM_LEASE, 2)))
          )
          yield* Effect.sleep(Duration.sum(CLAIM_LEASE, Duration.seconds(1)))
          expect((yield* idempotency.claim(scope, "same body"))._tag).toBe("InFlight")
          yield* Fiber.join(slow)
        }).pipe(Effect.provide(Idempotency.layer)))
    }
  )
}
