/**
 * Idempotency-Key (SPEC §6): scoped to tenant and environment, kept 24 hours. The first request
 * claims the key in a short transaction of its own, so concurrent duplicates see the claim at
 * once; its outcome is stored with the claim and replayed to later requests with the same body.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Context, Effect, Layer, Schedule, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { decodeRows, makeTransaction, repository, Transaction } from "../db/Repository.js"
import { IdempotencyConflict } from "../domain/Errors.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"

const RETENTION_MS = 24 * 60 * 60 * 1000
/** A claim whose request died without an answer (a crash) can be taken over after this. */
const STALE_CLAIM_MS = 60 * 1000

export type Claim =
  | { readonly _tag: "Claimed"; readonly token: string }
  | { readonly _tag: "InFlight" }
  | { readonly _tag: "Reused" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: unknown }

export interface IdempotencyScope {
  readonly tenantId: string
  readonly environment: Environment
  readonly key: string
}

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

const storedKeys = decodeRows(Schema.Struct({
  requestHash: Schema.String,
  responseStatus: Schema.NullOr(Schema.Number),
  responseBody: Schema.Unknown,
  lockedUntil: Schema.NullOr(Schema.Date),
  expiresAt: Schema.Date
}))

export class Idempotency extends Context.Service<Idempotency>()("etd/Idempotency", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inTransaction = yield* makeTransaction

    const claim = Effect.fn("Idempotency.claim")(function*(scope: IdempotencyScope, hash: string) {
      const at = yield* now
      // Fences the outcome: a request whose claim was taken over (it looked dead) cannot store one.
      const token = randomUUID()
      const expiresAt = new Date(at.getTime() + RETENTION_MS)
      const lockedUntil = new Date(at.getTime() + STALE_CLAIM_MS)
      return yield* Effect.gen(function*() {
        const inserted = yield* sql`
          INSERT INTO idempotency_keys
            (tenant_id, environment, key, request_hash, claim_token, locked_until, created_at, expires_at)
          VALUES (${scope.tenantId}, ${scope.environment}, ${scope.key}, ${hash}, ${token}, ${lockedUntil}, ${at}, ${expiresAt})
          ON CONFLICT (tenant_id, environment, key) DO NOTHING
          RETURNING key`
        if (inserted.length > 0) return { _tag: "Claimed", token } as Claim
        const [existing] = yield* storedKeys(sql`
          SELECT request_hash, response_status, response_body, locked_until, expires_at FROM idempotency_keys
          WHERE tenant_id = ${scope.tenantId} AND environment = ${scope.environment} AND key = ${scope.key}
          FOR UPDATE`)
        if (existing === undefined) return { _tag: "InFlight" } as Claim
        const expired = existing.expiresAt <= at
        const abandoned = existing.responseStatus === null && existing.lockedUntil !== null && existing.lockedUntil <= at
        if (expired || abandoned) {
          yield* sql`
            UPDATE idempotency_keys
            SET request_hash = ${hash}, response_status = NULL, response_body = NULL, claim_token = ${token},
                locked_until = ${lockedUntil},
                created_at = ${at}, expires_at = ${expiresAt}
            WHERE tenant_id = ${scope.tenantId} AND environment = ${scope.environment} AND key = ${scope.key}`
          return { _tag: "Claimed", token } as Claim
        }
        if (existing.requestHash !== hash) return { _tag: "Reused" } as Claim
        if (existing.responseStatus === null) return { _tag: "InFlight" } as Claim
        return { _tag: "Replay", status: existing.responseStatus, body: existing.responseBody } as Claim
      }).pipe(inTransaction)
    })

    /**
     * Stores the outcome; call it in the transaction that produced a success. Fails with
     * `IdempotencyConflict` (rolling that transaction back) when another request took the key over.
     */
    const complete = (scope: IdempotencyScope, token: string, status: number, body: unknown) =>
      sql`
        UPDATE idempotency_keys SET response_status = ${status}, response_body = ${JSON.stringify(body)}::jsonb,
          locked_until = NULL
        WHERE tenant_id = ${scope.tenantId} AND environment = ${scope.environment} AND key = ${scope.key}
          AND claim_token = ${token}
        RETURNING key`.pipe(
        Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : Effect.fail(new IdempotencyConflict()))),
        Effect.withSpan("Idempotency.complete")
      )

    /** Gives the key back when the request ended without an answer worth replaying. */
    const release = (scope: IdempotencyScope, token: string) =>
      sql`
        DELETE FROM idempotency_keys
        WHERE tenant_id = ${scope.tenantId} AND environment = ${scope.environment} AND key = ${scope.key}
          AND response_status IS NULL AND claim_token = ${token}`.pipe(Effect.asVoid, Effect.withSpan("Idempotency.release"))

    const purgeExpired = Effect.flatMap(now, (at) => sql`DELETE FROM idempotency_keys WHERE expires_at <= ${at}`).pipe(
      Effect.asVoid,
      Effect.withSpan("Idempotency.purgeExpired")
    )

    return repository({ claim, complete, release, purgeExpired })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide(Transaction.layer))
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
