/**
 * Idempotency-Key (SPEC §6): scoped to tenant and environment, kept 24 hours. The first request
 * claims the key in a statement (or, for a key that exists, a short transaction) of its own, so
 * concurrent duplicates see the claim at once; its outcome is stored with the claim and replayed to
 * later requests with the same body.
 *
 * A claim is a lease the request keeps alive while it runs (`hold`: renewed every half second, valid
 * two). An instance that dies mid-request stops renewing, and its claim can be taken over within
 * two seconds rather than blocking the client's retries. Two requests never both
 * commit: the outcome is stored, fenced by the claim's token, in the statement (or transaction) that
 * did the work, so a request whose claim was taken over writes nothing. A request that fails without an answer worth
 * replaying gives the key back, retrying in the background while the database is unreachable.
 */
import { Context, Duration, Effect, Fiber, FiberSet, Layer, Option, Schedule } from "effect"
import { hash, randomUUID } from "node:crypto"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { IdempotencyConflict } from "../domain/Errors.js"
import { now } from "../domain/Time.js"
import { untraced } from "../telemetry/TraceContext.js"
import { IdempotencyRepo, type IdempotencyScope } from "./IdempotencyRepo.js"

const RETENTION_MS = 24 * 60 * 60 * 1000
/**
 * A claim not renewed for this long belongs to a request that died (a crash) and can be taken over.
 * It is most of what a client's retry after a crash waits (docs/operations.md): short enough that
 * the retry is answered within 5 s even when a second instance dies in between, long enough that a
 * live request misses three renewals (a stalled event loop, a saturated pool) before it can lose
 * the key, and losing it is safe: `complete` is fenced by the claim's token.
 */
export const CLAIM_LEASE = Duration.seconds(2)
/** How often a running request renews its claim: four renewals fit in one lease. */
const CLAIM_RENEWAL_INTERVAL = Duration.millis(500)
/** How often a request waiting for a key in flight looks again. */
const IN_FLIGHT_POLL = Duration.millis(100)
/** Giving a key back after a failure, while the database may still be out of reach. */
const RELEASE_RETRIES = { schedule: Schedule.exponential("200 millis"), times: 10 }

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
  // Node's one-shot native SHA-256: every request with a key hashes its body, ~5× cheaper than in JavaScript.
  return hash("sha256", JSON.stringify(canonical(value)), "hex")
}

export class Idempotency extends Context.Service<Idempotency>()("etd/Idempotency", {
  make: Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const inTransaction = yield* makeTransaction
    const releases = yield* FiberSet.make()

    const claim = Effect.fn("Idempotency.claim")(function*(scope: IdempotencyScope, hash: string) {
      const at = yield* now
      const lease = {
        hash,
        // Fences the outcome: a request whose claim was taken over (it looked dead) cannot store one.
        token: randomUUID(),
        lockedUntil: new Date(at.getTime() + Duration.toMillis(CLAIM_LEASE)),
        at,
        expiresAt: new Date(at.getTime() + RETENTION_MS)
      }
      const claimed: Claim = { _tag: "Claimed", token: lease.token }
      // A new key, the common case, is one statement on its own: the insert either takes it or
      // finds it taken, atomically. Only a key that exists needs the row lock, so a transaction.
      if (yield* repo.insertClaim(scope, lease)) return claimed
      return yield* Effect.gen(function*(): Effect.fn.Return<Claim> {
        const found = yield* repo.findForUpdate(scope)
        if (Option.isNone(found)) return { _tag: "InFlight" }
        const existing = found.value
        const expired = existing.expiresAt <= at
        const abandoned = existing.responseStatus === null && existing.lockedUntil !== null &&
          existing.lockedUntil <= at
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
     * `claim`, but a key in flight is waited for, up to one lease, rather than answered at once: by
     * then its request has finished (its answer is replayed), given the key back, or died (its
     * lease ran out and the key is taken over). Only a request still running after a whole lease
     * makes this one `InFlight`. This is what serves a client's retry right after an outage, when
     * the failed request could not give its key back yet.
     */
    const claimPatiently = (scope: IdempotencyScope, hash: string) =>
      claim(scope, hash).pipe(
        Effect.repeat({
          while: (result) => result._tag === "InFlight",
          schedule: Schedule.spaced(IN_FLIGHT_POLL).pipe(
            Schedule.upTo({ duration: Duration.sum(CLAIM_LEASE, IN_FLIGHT_POLL) })
          )
        })
      )

    /**
     * Stores the outcome; call it in the transaction that produced a success. Fails with
     * `IdempotencyConflict` (rolling that transaction back) when another request took the key over.
     */
    const complete = (scope: IdempotencyScope, token: string, status: number, body: unknown) =>
      Effect.flatMap(
        repo.complete(scope, token, status, body),
        (stored) => stored ? Effect.void : Effect.fail(new IdempotencyConflict())
      )

    /**
     * `complete` as parts of the statement that does the work (IdempotencyRepo.answering): that
     * statement writes nothing when the claim is lost, and its caller fails with `IdempotencyConflict`.
     */
    const answering = repo.answering

    /**
     * A key not seen yet, taken and answered by the statement that does the work (a CTE of it): see
     * `IdempotencyRepo.inserting`. That statement fails with `IdempotencyConflict`, writing nothing,
     * when the key exists.
     */
    const storing = (
      scope: IdempotencyScope,
      hash: string,
      at: Date,
      status: number,
      body: unknown,
      filled: Parameters<typeof repo.inserting>[4]
    ) => repo.inserting(scope, { hash, at, expiresAt: new Date(at.getTime() + RETENTION_MS) }, status, body, filled)

    /** Keeps the claim alive while `effect` runs. */
    const hold = (scope: IdempotencyScope, token: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const renewOnce = Effect.flatMap(
          now,
          (at) => repo.renew(scope, token, new Date(at.getTime() + Duration.toMillis(CLAIM_LEASE)))
        ).pipe(
          // A renewal lost to an outage is not fatal: the lease simply runs down.
          Effect.catchDefect(() => Effect.succeed(true))
        )
        // Stops by itself once the claim is no longer this request's (completed or taken over).
        const renewal = yield* Effect.forkChild(
          Effect.andThen(Effect.sleep(CLAIM_RENEWAL_INTERVAL), renewOnce).pipe(
            Effect.repeat({ while: (alive) => alive })
          )
        )
        return yield* Effect.ensuring(effect, Fiber.interrupt(renewal))
      })

    /**
     * Gives the key back when the request ended without an answer worth replaying, so the
     * client's retry is served. When the database is out of reach the request answers at once and
     * the release goes on in the background on the service's fibers (if the database stays away
     * longer than that, the lease runs out instead).
     */
    const release = (scope: IdempotencyScope, token: string) =>
      repo.release(scope, token).pipe(
        Effect.catchDefect(() =>
          FiberSet.run(
            releases,
            repo.release(scope, token).pipe(Effect.sandbox, Effect.retry(RELEASE_RETRIES), Effect.ignore)
          )
        ),
        Effect.asVoid
      )

    const purgeExpired = Effect.flatMap(now, repo.purgeExpired)

    return { claim, claimPatiently, hold, complete, answering, storing, release, purgeExpired } as const
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
      ).pipe(untraced)
    ))
)
