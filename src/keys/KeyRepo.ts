/** SQL for `api_keys`. Only a token's SHA-256 is stored, never the token. */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository } from "../db/Repository.js"
import type { Cursor } from "../domain/Pagination.js"
import { Environment, Scope } from "../domain/Principal.js"

/** A row of `api_keys` without its hash (camelCase, as the SQL client maps result names). */
const ApiKeyRecord = Schema.Struct({
  id: Schema.String,
  tenantId: Schema.String,
  name: Schema.String,
  environment: Environment,
  scopes: Schema.Array(Scope),
  hint: Schema.String,
  createdAt: Schema.Date,
  lastUsedAt: Schema.NullOr(Schema.Date),
  expiresAt: Schema.NullOr(Schema.Date),
  revokedAt: Schema.NullOr(Schema.Date),
  replacedBy: Schema.NullOr(Schema.String)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

export interface NewApiKey {
  readonly id: string
  readonly tenantId: string
  readonly name: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
  readonly tokenHash: string
  readonly hint: string
  readonly createdBy: string | null
  readonly createdAt: Date
}

const keys = decodeRows(ApiKeyRecord)

const columns = "id, tenant_id, name, environment, scopes, hint, created_at, last_used_at, expires_at, revoked_at, replaced_by"

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
    const findForUpdate = (tenantId: string, id: string) =>
      keys(sql`SELECT ${selectColumns} FROM api_keys WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`).pipe(
        Effect.map(Arr.head)
      )

    /** Newest first; `limit + 1` rows, so the caller can tell whether more exist. */
    const list = (tenantId: string, limit: number, cursor: Cursor | undefined) => {
      const page = keyset(sql, sql`id`, "desc", cursor)
      return keys(sql`
        SELECT ${selectColumns} FROM api_keys
        WHERE ${sql.and([sql`tenant_id = ${tenantId}`, ...page.where])}
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`)
    }

    const markRotated = (id: string, expiresAt: Date, replacedBy: string) =>
      sql`UPDATE api_keys SET expires_at = ${expiresAt}, replaced_by = ${replacedBy} WHERE id = ${id}`.pipe(
        Effect.asVoid
      )

    const revoke = (id: string, at: Date) =>
      sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(
        Effect.asVoid
      )

    /** One statement per key that was used since the last flush, never one per request. */
    const touch = (usage: ReadonlyArray<readonly [id: string, at: Date]>) =>
      Effect.forEach(usage, ([id, at]) =>
        sql`
          UPDATE api_keys SET last_used_at = ${at}
          WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${at})`, { discard: true })

    return repository("KeyRepo", { insert, findByTokenHash, findForUpdate, list, markRotated, revoke, touch })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
