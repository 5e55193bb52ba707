/**
 * Idempotency-Key (SPEC §6): scoped to tenant and environment, kept 24 hours. The first request
 * claims the key in a short transaction of its own, so concurrent duplicates see the claim at
 * once; its outcome is stored with the claim and replayed to later requests with the same body.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { IdempotencyConflict } from "../domain/Errors.js"
import { now } from "../domain/Time.js"
import { type IdempotencyScope, IdempotencyRepo } from "./IdempotencyRepo.js"

const RETENTION_MS = 24 * 60 * 60 * 1000
/** A claim whose request died without an answer (a crash) can be taken over after this. */
const STALE_CLAIM_MS = 60 * 1000

export type Claim =
  | { readonly _tag: "Claimed"; readonly token: string }
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Reused" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: unknown }

export type { IdempotencyScope }

/** A stable hash of the request: JSON with sorted keys, so key order does not matter. */
export const requestHash = (value: unknown): string => {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : typeof v === "object" && v !== null
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
      : v
  return bytesToHex(sha256(new TextEncoder().encode(JSON.stringify(canonical(value)))))
}

export class Idempotency extends Context.Service<Idempotency>()("etd/Idempotency", {
  make: Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const inTransaction = yield* makeTransaction

    const claim = Effect.fn("Idempotency.claim")(function*(scope: IdempotencyScope, hash: string) {
      const at = yield* now
      const lease = {
        hash,
        // Fences the outcome: a request whose claim was taken over (it looked dead) cannot store one.
        token: randomUUID(),
        lockedUntil: new Date(at.getTime() + STALE_CLAIM_MS),
        at,
        expiresAt: new Date(at.getTime() + RETENTION_MS)
      }
      const claimed: Claim = { _tag: "Claimed", token: lease.token }
      return yield* Effect.gen(function*(): Effect.fn.Return<Claim> {
        if (yield* repo.insertClaim(scope, lease)) return claimed
        const found = yield* repo.findForUpdate(scope)
        if (Option.isNone(found)) return { _tag: "InFlight" }
        const existing = found.value
        const expired = existing.expiresAt <= at
        const abandoned = existing.responseStatus === null && existing.lockedUntil !== null && existing.lockedUntil <= at
        if (expired || abandoned) {
          yield* repo.retake(scope, lease)
          return claimed
        }
        if (existing.requestHash !== hash) return { _tag: "Reused" }
        if (existing.responseStatus === null) return { _tag: "InFlight" }
        return { _tag: "Replay", status: existing.responseStatus, body: existing.responseBody }
      }).pipe(inTransaction)
    })

    /**
     * Stores the outcome; call it in the transaction that produced a success. Fails with
     * `IdempotencyConflict` (rolling that transaction back) when another request took the key over.
     */
    const complete = (scope: IdempotencyScope, token: string, status: number, body: unknown) =>
      Effect.flatMap(repo.complete(scope, token, status, body), (stored) =>
        stored ? Effect.void : Effect.fail(new IdempotencyConflict()))

    /** Gives the key back when the request ended without an answer worth replaying. */
    const release = (scope: IdempotencyScope, token: string) => repo.release(scope, token)

    const purgeExpired = Effect.flatMap(now, repo.purgeExpired)

    return { claim, complete, release, purgeExpired } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([IdempotencyRepo.layer, Transaction.layer]))
}

/** Expired keys are only reused when the same key returns; this sweeps the rest away hourly. */
export const IdempotencyPurgeLive = Layer.effectDiscard(
  Effect.flatMap(Idempotency, (idempotency) =>
    Effect.forkScoped(
      Effect.repeat(
        idempotency.purgeExpired.pipe(
          Effect.catchCause((cause) => Effect.logWarning("could not purge expired idempotency keys", cause))
        ),
        Schedule.spaced("1 hour")
      )
    ))
)
