/** SQL for Idempotency-Keys (`idempotency_keys`); the rules they follow are in Idempotency.ts. */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import type { TenantId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"

export interface IdempotencyScope {
  readonly tenantId: TenantId
  readonly environment: Environment
  readonly key: string
}

/** A claim on a key: who holds it (`token`) and until when it counts as alive. */
export interface KeyClaim {
  readonly hash: string
  readonly token: string
  readonly lockedUntil: Date
  readonly at: Date
  readonly expiresAt: Date
}

/** A value of an answer only the statement storing it knows (a document's number), and its path. */
type Filled = readonly [path: string, value: Statement.Fragment]

const StoredKey = Schema.Struct({
  requestHash: Schema.String,
  responseStatus: Schema.NullOr(Schema.Number),
  responseBody: Schema.Unknown,
  lockedUntil: Schema.NullOr(Schema.Date),
  expiresAt: Schema.Date
})
const storedKeys = decodeRows(StoredKey)

export class IdempotencyRepo extends Context.Service<IdempotencyRepo>()("etd/IdempotencyRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const where = (scope: IdempotencyScope) =>
      sql`tenant_id = ${scope.tenantId} AND environment = ${scope.environment} AND key = ${scope.key}`

    /** The answer as jsonb, with `filled`'s values (known only to the statement) set at their paths. */
    const answerBody = (body: unknown, filled: ReadonlyArray<Filled>) =>
      filled.reduce(
        (json, [path, value]) => sql`jsonb_set(${json}, ${`{${path}}`}::text[], to_jsonb(${value}))`,
        sql`${JSON.stringify(body)}::jsonb`
      )

    /** Takes a key nobody holds; false when it exists already. */
    const insertClaim = (scope: IdempotencyScope, claim: KeyClaim) =>
      sql`
        INSERT INTO idempotency_keys
          (tenant_id, environment, key, request_hash, claim_token, locked_until, created_at, expires_at)
        VALUES (${scope.tenantId}, ${scope.environment}, ${scope.key}, ${claim.hash}, ${claim.token}, ${claim.lockedUntil},
                ${claim.at}, ${claim.expiresAt})
        ON CONFLICT (tenant_id, environment, key) DO NOTHING
        RETURNING key`.pipe(Effect.map((rows) => rows.length > 0))

    const findForUpdate = (scope: IdempotencyScope) =>
      storedKeys(sql`
        SELECT request_hash, response_status, response_body, locked_until, expires_at FROM idempotency_keys
        WHERE ${where(scope)}
        FOR UPDATE`).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

    /** Takes over an expired or abandoned key (locked by `findForUpdate`). */
    const retake = (scope: IdempotencyScope, claim: KeyClaim) =>
      sql`
        UPDATE idempotency_keys
        SET request_hash = ${claim.hash}, response_status = NULL, response_body = NULL, claim_token = ${claim.token},
            locked_until = ${claim.lockedUntil}, created_at = ${claim.at}, expires_at = ${claim.expiresAt}
        WHERE ${where(scope)}`.pipe(Effect.asVoid)

    /** Stores the outcome if `token` still holds the key; false when another request took it over. */
    const complete = (scope: IdempotencyScope, token: string, status: number, body: unknown) =>
      sql`
        UPDATE idempotency_keys SET response_status = ${status}, response_body = ${JSON.stringify(body)}::jsonb,
          locked_until = NULL
        WHERE ${where(scope)} AND claim_token = ${token}
        RETURNING key`.pipe(Effect.map((rows) => rows.length === 1))

    /**
     * `complete` as an UPDATE the statement that does the work carries (a CTE; it returns the key
     * when `token` still held it, else no row): the answer is written with the work, in one round
     * trip. `filled` sets values only that statement knows (a document's number) at their paths.
     * `held` (a SELECT for another CTE) is the key's row, locked, while `token` holds it, else no row:
     * that statement makes its writes only when it returned one, so a lost claim writes nothing
     * without a transaction to roll back.
     */
    const answering = (
      scope: IdempotencyScope,
      token: string,
      status: number,
      body: unknown,
      filled: ReadonlyArray<Filled>
    ) => ({
      held: sql`SELECT 1 FROM idempotency_keys WHERE ${where(scope)} AND claim_token = ${token} FOR UPDATE`,
      store: sql`
        UPDATE idempotency_keys SET response_status = ${status}, locked_until = NULL, response_body = ${
        answerBody(body, filled)
      }
        WHERE ${where(scope)} AND claim_token = ${token}
        RETURNING key`
    })

    /**
     * A new key with its answer, as an INSERT the statement that does the work carries (a CTE): the
     * key is taken and answered in that one statement. When the key exists (another request's, in
     * flight or done), the INSERT fails on the key's primary key and the whole statement with it, so
     * nothing is written; the caller then claims the key the usual way (`answering`'s path).
     */
    const inserting = (
      scope: IdempotencyScope,
      key: Pick<KeyClaim, "hash" | "at" | "expiresAt">,
      status: number,
      body: unknown,
      filled: ReadonlyArray<Filled>
    ) => ({
      store: sql`
        INSERT INTO idempotency_keys
          (tenant_id, environment, key, request_hash, response_status, response_body, created_at, expires_at)
        VALUES (${scope.tenantId}, ${scope.environment}, ${scope.key}, ${key.hash}, ${status},
                ${answerBody(body, filled)}, ${key.at}, ${key.expiresAt})
        RETURNING key`
    })

    /** Extends a live claim held by `token`; false when it was completed, released or taken over. */
    const renew = (scope: IdempotencyScope, token: string, lockedUntil: Date) =>
      sql`
        UPDATE idempotency_keys SET locked_until = ${lockedUntil}
        WHERE ${where(scope)} AND claim_token = ${token} AND response_status IS NULL
        RETURNING key`.pipe(Effect.map((rows) => rows.length === 1))

    const release = (scope: IdempotencyScope, token: string) =>
      sql`
        DELETE FROM idempotency_keys
        WHERE ${where(scope)} AND response_status IS NULL AND claim_token = ${token}`.pipe(
        Effect.asVoid
      )

    const purgeExpired = (at: Date) => sql`DELETE FROM idempotency_keys WHERE expires_at <= ${at}`.pipe(Effect.asVoid)

    return repository("IdempotencyRepo", {
      insertClaim,
      findForUpdate,
      retake,
      complete,
      answering,
      inserting,
      renew,
      release,
      purgeExpired
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
