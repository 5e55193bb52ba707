/**
 * SQL for credentials. Metadata columns are plain; the key material is only ever in `envelope`.
 * Reads that feed API responses never select the envelope.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { CredentialStatus } from "./Api.js"

export interface CredentialRow {
  readonly id: string
  readonly tenantId: string
  readonly kind: "a1_certificate"
  readonly subject: string
  readonly issuer: string
  readonly serialNumber: string
  readonly taxId: string
  readonly notBefore: Date
  readonly notAfter: Date
  readonly fingerprintSha256: string
  readonly status: CredentialStatus
  readonly createdAt: Date
}

export interface NewCredentialRow extends CredentialRow {
  readonly envelope: string
  readonly masterKeyId: string
  readonly updatedAt: Date
}

export interface SealedRow {
  readonly id: string
  readonly tenantId: string
  readonly envelope: string
  readonly masterKeyId: string
}

const metadata = (sql: SqlClient.SqlClient) =>
  sql`id, tenant_id, kind, subject, issuer, serial_number, tax_id, not_before, not_after, fingerprint_sha256, status, created_at`

export class CredentialRepo extends Context.Service<CredentialRepo>()("etd/CredentialRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = metadata(sql)

    /** Marks the tenant's active credential `replaced`; call in the transaction that inserts the new one. */
    const replaceActive = (tenantId: string, at: Date) =>
      sql`
        UPDATE credentials SET status = 'replaced', updated_at = ${at}
        WHERE tenant_id = ${tenantId} AND status = 'active'`.pipe(Effect.asVoid, Effect.withSpan("CredentialRepo.replaceActive"))

    const insert = (row: NewCredentialRow) =>
      sql`INSERT INTO credentials ${sql.insert({ ...row })}`.pipe(Effect.asVoid, Effect.withSpan("CredentialRepo.insert"))

    const findById = (tenantId: string, id: string) =>
      sql<CredentialRow>`SELECT ${columns} FROM credentials WHERE tenant_id = ${tenantId} AND id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("CredentialRepo.findById")
      )

    const list = (tenantId: string, limit: number, startingAfter: string | undefined) =>
      sql<CredentialRow>`
        SELECT ${columns} FROM credentials
        WHERE tenant_id = ${tenantId} ${startingAfter ? sql`AND id < ${startingAfter}` : sql``}
        ORDER BY id DESC
        LIMIT ${limit + 1}`.pipe(Effect.withSpan("CredentialRepo.list"))

    const activeSealed = (tenantId: string) =>
      sql<SealedRow & { notAfter: Date }>`
        SELECT id, tenant_id, envelope, master_key_id, not_after FROM credentials
        WHERE tenant_id = ${tenantId} AND status = 'active'`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("CredentialRepo.activeSealed")
      )

    /** Envelopes not yet under the current master key, a batch at a time. */
    const sealedNotUnder = (masterKeyId: string, limit: number, after: string) =>
      sql<SealedRow>`
        SELECT id, tenant_id, envelope, master_key_id FROM credentials
        WHERE master_key_id <> ${masterKeyId} AND id > ${after}
        ORDER BY id LIMIT ${limit}`.pipe(Effect.withSpan("CredentialRepo.sealedNotUnder"))

    /** Compare-and-set, so a concurrent re-wrap or upload is never overwritten with a stale envelope. */
    const updateEnvelope = (id: string, previous: string, envelope: string, masterKeyId: string, at: Date) =>
      sql`
        UPDATE credentials SET envelope = ${envelope}, master_key_id = ${masterKeyId}, updated_at = ${at}
        WHERE id = ${id} AND envelope = ${previous}
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.withSpan("CredentialRepo.updateEnvelope"))

    const expireDue = (at: Date) =>
      sql<{ id: string; tenantId: string }>`
        UPDATE credentials SET status = 'expired', updated_at = ${at}
        WHERE status = 'active' AND not_after < ${at}
        RETURNING id, tenant_id`.pipe(Effect.withSpan("CredentialRepo.expireDue"))

    /** Active credentials whose `not_after` is at or before `horizon`. */
    const activeExpiringBefore = (horizon: Date) =>
      sql<CredentialRow & { lastExpiryWarningDays: number | null }>`
        SELECT ${columns}, last_expiry_warning_days FROM credentials
        WHERE status = 'active' AND not_after <= ${horizon}
        ORDER BY not_after`.pipe(Effect.withSpan("CredentialRepo.activeExpiringBefore"))

    /**
     * Records the warning for `days` as sent, unless it (or a later one) already was, e.g. by
     * another instance: true when this call claimed it, so the event is recorded exactly once.
     */
    const claimWarning = (id: string, days: number, at: Date) =>
      sql`
        UPDATE credentials SET last_expiry_warning_days = ${days}, updated_at = ${at}
        WHERE id = ${id} AND status = 'active'
          AND (last_expiry_warning_days IS NULL OR last_expiry_warning_days > ${days})
        RETURNING id`.pipe(Effect.map((rows) => rows.length === 1), Effect.withSpan("CredentialRepo.claimWarning"))

    return {
      replaceActive,
      insert,
      findById,
      list,
      activeSealed,
      sealedNotUnder,
      updateEnvelope,
      expireDue,
      activeExpiringBefore,
      claimWarning
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
