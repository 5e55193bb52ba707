/**
 * The Idempotency-Key claim itself: claims, replays, reuse, and the fence that keeps a request
 * whose claim was taken over (it looked dead) from storing an answer.
 */
import { expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { MigrationsLive } from "../../src/db/Database.js"
import { Idempotency, requestHash } from "../../src/documents/Idempotency.js"
import { asId } from "../../src/domain/Ids.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"

const START = Date.parse("2026-11-10T12:00:00Z")

const newTenant = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const id = asId("tenant", `ten_idem${Math.random().toString(36).slice(2, 12)}`)
  yield* sql`INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at)
             VALUES (${id}, ${"T"}, ${cnpj()}, ${10}, ${new Date(START)})`
  return id
})

// Stored keys keep their hash for 24 hours, across deployments: the digest of a body must never change.
it("a request's hash is the hex SHA-256 of its JSON with sorted keys", () => {
  expect(requestHash({ c: "é", b: [1, 2], a: 1 })).toBe(
    "21cba296ebfd5bdbb11add92da68725d0143d6e06156d7812fc428900eaae0d9"
  )
})

for (const database of testDatabases) {
  layer(Layer.provideMerge(Idempotency.layer, Layer.provideMerge(MigrationsLive, databaseLayer(database))), {
    timeout: 60_000
  })(`idempotency keys (${database})`, (it) => {
    it.effect("claim, in flight, replay, reuse", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const idempotency = yield* Idempotency
        const scope = { tenantId: yield* newTenant, environment: "test" as const, key: "k1" }
        const hash = requestHash({ a: 1, b: [1, 2] })
        expect(requestHash({ b: [1, 2], a: 1 })).toBe(hash)
        const first = yield* idempotency.claim(scope, hash)
        expect(first._tag).toBe("Claimed")
        expect((yield* idempotency.claim(scope, hash))._tag).toBe("InFlight")
        expect((yield* idempotency.claim(scope, requestHash({ a: 2 })))._tag).toBe("Reused")
        if (first._tag !== "Claimed") return
        yield* idempotency.complete(scope, first.token, 202, { id: "doc_x" })
        expect(yield* idempotency.claim(scope, hash)).toEqual({ _tag: "Replay", status: 202, body: { id: "doc_x" } })
        // After 24 hours the key is free again.
        yield* TestClock.adjust("25 hours")
        expect((yield* idempotency.claim(scope, hash))._tag).toBe("Claimed")
      }))

    it.effect("a claim taken over after it went stale can no longer store its answer", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const idempotency = yield* Idempotency
        const scope = { tenantId: yield* newTenant, environment: "live" as const, key: "slow" }
        const hash = requestHash({ n: 1 })
        const slow = yield* idempotency.claim(scope, hash)
        yield* TestClock.adjust("61 seconds")
        const fresh = yield* idempotency.claim(scope, hash)
        expect(fresh._tag).toBe("Claimed")
        if (slow._tag !== "Claimed" || fresh._tag !== "Claimed") return
        const late = yield* Effect.flip(idempotency.complete(scope, slow.token, 202, { id: "doc_slow" }))
        expect(late._tag).toBe("IdempotencyConflict")
        yield* idempotency.complete(scope, fresh.token, 202, { id: "doc_fresh" })
        expect(yield* idempotency.claim(scope, hash)).toEqual({
          _tag: "Replay",
          status: 202,
          body: { id: "doc_fresh" }
        })
        // Nor can the stale request give the key back.
        yield* idempotency.release(scope, slow.token)
        expect((yield* idempotency.claim(scope, hash))._tag).toBe("Replay")
      }))

    it.effect("the answer the work's own statement writes: fenced by the claim, with the values only it knows", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const idempotency = yield* Idempotency
        const sql = yield* SqlClient.SqlClient
        const scope = { tenantId: yield* newTenant, environment: "test" as const, key: "in-statement" }
        const hash = requestHash({ n: 2 })
        const slow = yield* idempotency.claim(scope, hash)
        yield* TestClock.adjust("61 seconds")
        const fresh = yield* idempotency.claim(scope, hash)
        if (slow._tag !== "Claimed" || fresh._tag !== "Claimed") return expect.fail("both claims should hold")
        const answer = (token: string) =>
          sql<{ written: number }>`
            WITH answered AS (${
            idempotency.answering(scope, token, 202, { id: "doc_n", number: 0 }, [["number", sql`${41}::int + 1`]])
              .store
          })
            SELECT count(*)::int AS written FROM answered`
        // The request whose claim was taken over writes no answer (its statement then rolls back).
        expect(yield* answer(slow.token)).toEqual([{ written: 0 }])
        expect(yield* answer(fresh.token)).toEqual([{ written: 1 }])
        expect(yield* idempotency.claim(scope, hash)).toEqual({
          _tag: "Replay",
          status: 202,
          body: { id: "doc_n", number: 42 }
        })
      }))
  })
}
