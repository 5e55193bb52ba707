/**
 * SQL for credentials. Metadata columns are plain; the key material is only ever in `envelope`.
 * Reads that feed API responses never select the envelope.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { isUniqueViolation } from "../db/errors.js"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository } from "../db/Repository.js"
import { ActiveCredentialTaken, CredentialKind, CredentialStatus } from "../domain/Credential.js"
import { TenantId } from "../domain/Ids.js"
import type { Cursor } from "../domain/Pagination.js"

/** A credential's metadata (camelCase, as the SQL client maps result names). */
export const CredentialRecord = Schema.Struct({
  id: Schema.String,
  tenantId: TenantId,
  kind: CredentialKind,
  subject: Schema.String,
  issuer: Schema.String,
  serialNumber: Schema.String,
  taxId: Schema.String,
  notBefore: Schema.Date,
  notAfter: Schema.Date,
  fingerprintSha256: Schema.String,
  verifiedChain: Schema.Boolean,
  status: CredentialStatus,
  createdAt: Schema.Date
})
export type CredentialRecord = typeof CredentialRecord.Type

export interface NewCredential extends CredentialRecord {
  readonly envelope: string
  readonly masterKeyId: string
  readonly updatedAt: Date
}

/** A credential's envelope with what binds it to its row. */
export const SealedCredential = Schema.Struct({
  id: Schema.String,
  tenantId: TenantId,
  envelope: Schema.String,
  masterKeyId: Schema.String
})
export type SealedCredential = typeof SealedCredential.Type

const ActiveSealed = Schema.Struct({ ...SealedCredential.fields, notAfter: Schema.Date, verifiedChain: Schema.Boolean })

const ExpiringCredential = Schema.Struct({
  ...CredentialRecord.fields,
  lastExpiryWarningDays: Schema.NullOr(Schema.Number)
})

const CredentialRef = Schema.Struct({ id: Schema.String, tenantId: TenantId })
const TenantExpiry = Schema.Struct({ tenantId: TenantId, notAfter: Schema.Date })

const Updated = Schema.Struct({ id: Schema.String })

const ONE_ACTIVE = "credentials_one_active"

const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

export class CredentialRepo extends Context.Service<CredentialRepo>()("etd/CredentialRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns =
      sql`id, tenant_id, kind, subject, issuer, serial_number, tax_id, not_before, not_after, fingerprint_sha256, verified_chain, status, created_at`

    /** Marks the tenant's active credential `replaced`; call in the transaction that inserts the new one. */
    const replaceActive = (tenantId: TenantId, at: Date) =>
      sql`
        UPDATE credentials SET status = 'replaced', updated_at = ${at}
        WHERE tenant_id = ${tenantId} AND status = 'active'`.pipe(Effect.asVoid)

    /** Fails with `ActiveCredentialTaken` when another active credential of the tenant committed first. */
    const insert = (credential: NewCredential) =>
      sql`INSERT INTO credentials ${sql.insert({ ...credential })}`.pipe(
        Effect.asVoid,
        Effect.catchIf(
          (error) => isUniqueViolation(error, ONE_ACTIVE),
          () => Effect.fail(new ActiveCredentialTaken({ tenantId: credential.tenantId }))
        )
      )

    const findById = (tenantId: TenantId, id: string) =>
      sql`SELECT ${columns} FROM credentials WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
        decodeRows(CredentialRecord),
        Effect.map(first)
      )

    const list = (tenantId: TenantId, limit: number, cursor: Cursor | undefined) => {
      const page = keyset(sql, sql`id`, "desc", cursor)
      return sql`
        SELECT ${columns} FROM credentials
        WHERE ${sql.and([sql`tenant_id = ${tenantId}`, ...page.where])}
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`.pipe(decodeRows(CredentialRecord))
    }

    const activeSealed = (tenantId: TenantId) =>
      sql`
        SELECT id, tenant_id, envelope, master_key_id, not_after, verified_chain FROM credentials
        WHERE tenant_id = ${tenantId} AND status = 'active'`.pipe(
        decodeRows(ActiveSealed),
        Effect.map(first)
      )

    /** Envelopes not yet under the current master key, a batch at a time. */
    const sealedNotUnder = (masterKeyId: string, limit: number, after: string) =>
      sql`
        SELECT id, tenant_id, envelope, master_key_id FROM credentials
        WHERE master_key_id <> ${masterKeyId} AND id > ${after}
        ORDER BY id LIMIT ${limit}`.pipe(decodeRows(SealedCredential))

    /** Compare-and-set, so a concurrent re-wrap or upload is never overwritten with a stale envelope. */
    const updateEnvelope = (id: string, previous: string, envelope: string, masterKeyId: string, at: Date) =>
      sql`
        UPDATE credentials SET envelope = ${envelope}, master_key_id = ${masterKeyId}, updated_at = ${at}
        WHERE id = ${id} AND envelope = ${previous}
        RETURNING id`.pipe(
        decodeRows(Updated),
        Effect.map((rows) => rows.length === 1)
      )

    const expireDue = (at: Date) =>
      sql`
        UPDATE credentials SET status = 'expired', updated_at = ${at}
        WHERE status = 'active' AND not_after < ${at}
        RETURNING id, tenant_id`.pipe(decodeRows(CredentialRef))

    /** Active credentials whose `not_after` is at or before `horizon`. */
    const activeExpiringBefore = (horizon: Date) =>
      sql`
        SELECT ${columns}, last_expiry_warning_days FROM credentials
        WHERE status = 'active' AND not_after <= ${horizon}
        ORDER BY not_after`.pipe(decodeRows(ExpiringCredential))

    /**
     * Per tenant with a certificate, when its certificate stops working: the earliest `not_after`
     * of its active ones, or, when none is active, the latest of its expired ones, if after `since`.
     */
    const expiryByTenant = (since: Date) =>
      sql`
        SELECT tenant_id, not_after FROM (
          SELECT tenant_id, COALESCE(min(not_after) FILTER (WHERE status = 'active'), max(not_after)) AS not_after
          FROM credentials WHERE status IN ('active', 'expired') GROUP BY tenant_id
        ) AS latest WHERE not_after > ${since}`.pipe(decodeRows(TenantExpiry))

    /**
     * Records the warning for `days` as sent, unless it (or a later one) already was, e.g. by
     * another instance: true when this call claimed it, so the event is recorded exactly once.
     */
    const claimWarning = (id: string, days: number, at: Date) =>
      sql`
        UPDATE credentials SET last_expiry_warning_days = ${days}, updated_at = ${at}
        WHERE id = ${id} AND status = 'active'
          AND (last_expiry_warning_days IS NULL OR last_expiry_warning_days > ${days})
        RETURNING id`.pipe(
        decodeRows(Updated),
        Effect.map((rows) => rows.length === 1)
      )

    return repository("CredentialRepo", {
      replaceActive,
      insert,
      findById,
      list,
      activeSealed,
      sealedNotUnder,
      updateEnvelope,
      expireDue,
      activeExpiringBefore,
      expiryByTenant,
      claimWarning
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Its only dependency is the `SqlClient`, which the application (or a test) provides. */
  static readonly layer = this.layerNoDeps
}
