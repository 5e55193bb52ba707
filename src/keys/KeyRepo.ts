/** SQL for `api_keys`. Only a token's SHA-256 is stored, never the token. */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository } from "../db/Repository.js"
import { ExposureSource } from "../domain/Events.js"
import { ApiKeyId, TenantId, type UserId } from "../domain/Ids.js"
import type { Cursor } from "../domain/Pagination.js"
import { Environment, Scope } from "../domain/Principal.js"

/** A row of `api_keys` without its hash (camelCase, as the SQL client maps result names). */
const ApiKeyRecord = Schema.Struct({
  id: ApiKeyId,
  tenantId: TenantId,
  name: Schema.String,
  environment: Environment,
  scopes: Schema.Array(Scope),
  hint: Schema.String,
  createdAt: Schema.Date,
  lastUsedAt: Schema.NullOr(Schema.Date),
  expiresAt: Schema.NullOr(Schema.Date),
  revokedAt: Schema.NullOr(Schema.Date),
  replacedBy: Schema.NullOr(ApiKeyId)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** The exposure alerts recorded for a key (SecurityAlertRepo writes them), summed up. */
const ExposureRecord = Schema.Struct({
  exposureCount: Schema.Number,
  exposureLastAt: Schema.NullOr(Schema.Date),
  exposureLastSource: Schema.NullOr(ExposureSource)
})
export type ExposureRecord = typeof ExposureRecord.Type

const KeyWithExposure = Schema.Struct({ ...ApiKeyRecord.fields, ...ExposureRecord.fields })
export type KeyWithExposure = typeof KeyWithExposure.Type

export interface NewApiKey {
  readonly id: ApiKeyId
  readonly tenantId: TenantId
  readonly name: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
  readonly tokenHash: string
  readonly hint: string
  readonly createdBy: UserId | null
  readonly createdAt: Date
}

const keys = decodeRows(ApiKeyRecord)
const keysWithExposure = decodeRows(KeyWithExposure)
const exposures = decodeRows(ExposureRecord)

const columns =
  "id, tenant_id, name, environment, scopes, hint, created_at, last_used_at, expires_at, revoked_at, replaced_by"
const qualifiedColumns = columns.split(", ").map((column) => `k.${column}`).join(", ")

export class KeyRepo extends Context.Service<KeyRepo>()("etd/KeyRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const selectColumns = sql.unsafe(columns)

    const insert = (key: NewApiKey) =>
      sql`
        INSERT INTO api_keys (id, tenant_id, name, environment, scopes, token_hash, hint, created_by, created_at)
        VALUES (${key.id}, ${key.tenantId}, ${key.name}, ${key.environment}, ${JSON.stringify(key.scopes)}::jsonb,
                ${key.tokenHash}, ${key.hint}, ${key.createdBy}, ${key.createdAt})`.pipe(
        Effect.asVoid
      )

    const findByTokenHash = (tokenHash: string) =>
      keys(sql`SELECT ${selectColumns} FROM api_keys WHERE token_hash = ${tokenHash}`).pipe(
        Effect.map(Arr.head)
      )

    /** Locks the row for the rest of the transaction (rotation and revocation race each other). */
    const findForUpdate = (tenantId: TenantId, id: ApiKeyId) =>
      keys(sql`SELECT ${selectColumns} FROM api_keys WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`).pipe(
        Effect.map(Arr.head)
      )

    /**
     * A key's exposure alerts in one aggregate (count, latest time, latest source), read through the
     * alerts' index by key: zero rows give a count of 0 and nulls.
     */
    const exposureOfKey = (keyId: Statement.Fragment) =>
      sql`
        SELECT count(*)::int AS exposure_count, max(a.created_at) AS exposure_last_at,
          (array_agg(a.detail ORDER BY a.created_at DESC, a.id DESC))[1] AS exposure_last_source
        FROM security_alerts a
        WHERE a.api_key_id = ${keyId} AND a.kind = 'api_key.exposed'`

    /** Newest first, each with its exposure alerts (one statement); `limit + 1` rows, so the caller can tell whether more exist. */
    const list = (tenantId: TenantId, limit: number, cursor: Cursor | undefined) => {
      const page = keyset(sql, sql`k.id`, "desc", cursor)
      return keysWithExposure(sql`
        SELECT ${sql.unsafe(qualifiedColumns)}, e.exposure_count, e.exposure_last_at, e.exposure_last_source
        FROM api_keys k
        CROSS JOIN LATERAL (${exposureOfKey(sql`k.id`)}) e
        WHERE ${sql.and([sql`k.tenant_id = ${tenantId}`, ...page.where])}
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`)
    }

    const exposureOf = (keyId: ApiKeyId) =>
      exposures(exposureOfKey(sql`${keyId}`)).pipe(
        // An aggregate without GROUP BY returns exactly one row.
        Effect.map((rows) => rows[0]!)
      )

    const markRotated = (id: ApiKeyId, expiresAt: Date, replacedBy: ApiKeyId) =>
      sql`UPDATE api_keys SET expires_at = ${expiresAt}, replaced_by = ${replacedBy} WHERE id = ${id}`.pipe(
        Effect.asVoid
      )

    const revoke = (id: ApiKeyId, at: Date) =>
      sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(
        Effect.asVoid
      )

    /** One statement per key that was used since the last flush, never one per request. */
    const touch = (usage: ReadonlyArray<readonly [id: ApiKeyId, at: Date]>) =>
      Effect.forEach(usage, ([id, at]) =>
        sql`
          UPDATE api_keys SET last_used_at = ${at}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`, { discard: true })

    return repository("KeyRepo", {
      insert,
      findByTokenHash,
      findForUpdate,
      list,
      exposureOf,
      markRotated,
      revoke,
      touch
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
