/** SQL for `api_keys`. Only a token's SHA-256 is stored, never the token. */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository } from "../db/Repository.js"
import { ExposureSource } from "../domain/Events.js"
import { ApiKeyId, TenantId, type UserId } from "../domain/Ids.js"
import type { Cursor } from "../domain/Pagination.js"
import { allScopes, Environment, Scope } from "../domain/Principal.js"

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

/**
 * A key found by its token's hash, with its tenant: the `key*` columns are the key's, the others
 * the tenant's with its usage of the month asked for (`used`), named and typed as `TenantRepo` reads
 * a tenant (`TenantUsageRecord`), so the tenants module decodes them as its own when a request reads
 * that tenant. Checked here field by field, not decoded: every authenticated request reads one.
 */
export interface KeyWithTenant {
  readonly keyId: ApiKeyId
  readonly keyEnvironment: Environment
  readonly keyScopes: ReadonlyArray<Scope>
  readonly keyExpiresAt: Date | null
  readonly keyRevokedAt: Date | null
  readonly id: TenantId
  readonly [column: string]: unknown
}

/**
 * Camel-case names in the SQL itself, so the rows need no renaming by the client; `$1` the token's
 * hash, `$2` the quota period. The tenant's columns are TenantRepo's (`tenantColumns`, `used`).
 */
const KEY_WITH_TENANT = `
  SELECT k.id AS "keyId", k.environment AS "keyEnvironment", k.scopes AS "keyScopes",
    k.expires_at AS "keyExpiresAt", k.revoked_at AS "keyRevokedAt",
    t.id, t.name, t.tax_id AS "taxId", t.verified,
    EXISTS (SELECT 1 FROM tenants o WHERE o.tax_id = t.tax_id AND o.verified AND o.id <> t.id)
      AS "taxIdVerifiedByAnother",
    t.status, t.plan, t.monthly_quota AS "monthlyQuota", t.simples_nacional AS "simplesNacional",
    t.registration, t.note_mail_enabled AS "noteMailEnabled", t.note_mail_sender_name AS "noteMailSenderName",
    t.created_at AS "createdAt", q.used
  FROM api_keys k
  JOIN tenants t ON t.id = k.tenant_id
  LEFT JOIN quota_usage q ON q.tenant_id = k.tenant_id AND q.period = $2
  WHERE k.token_hash = $1`

const isDateOrNull = (value: unknown) => value === null || value instanceof Date
const isScopes = (value: unknown): value is ReadonlyArray<Scope> =>
  Array.isArray(value) && value.every((scope) => allScopes.includes(scope))

/** Whether a row of KEY_WITH_TENANT holds what authentication relies on (the tenant's part is decoded by its reader). */
const isKeyWithTenant = (row: Record<string, unknown>): row is Record<string, unknown> & KeyWithTenant =>
  typeof row["keyId"] === "string" && typeof row["id"] === "string" &&
  (row["keyEnvironment"] === "live" || row["keyEnvironment"] === "test") && isScopes(row["keyScopes"]) &&
  isDateOrNull(row["keyExpiresAt"]) && isDateOrNull(row["keyRevokedAt"])

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

    /**
     * The key of a token's hash and its tenant with the usage of `period`, in one statement (None:
     * no such key). Outside the repository wrapper: no span of its own around the statement's, and
     * no schema decoding, on the path of every authenticated request.
     */
    const findWithTenant = (tokenHash: string, period: string) =>
      Effect.flatMap(
        Effect.orDie(sql.unsafe<Record<string, unknown>>(KEY_WITH_TENANT, [tokenHash, period]).withoutTransform),
        (rows) => {
          const row = rows[0]
          if (row === undefined) return Effect.succeedNone
          return isKeyWithTenant(row)
            ? Effect.succeedSome(row)
            : Effect.die(new Error(`api_keys row ${String(row["keyId"])} is not a key as stored`))
        }
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

    const methods = repository("KeyRepo", {
      insert,
      findForUpdate,
      list,
      exposureOf,
      markRotated,
      revoke,
      touch
    })
    return { ...methods, findWithTenant }
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
