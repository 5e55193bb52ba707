/** SQL for `invitations`. Addresses compare normalized; a link's token is kept only as its SHA-256. */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { isUniqueViolation } from "../db/errors.js"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository } from "../db/Repository.js"
import { Conflict } from "../domain/Errors.js"
import { InvitationId, TenantId, UserId } from "../domain/Ids.js"
import { InvitationLocale } from "../domain/Invitation.js"
import type { Cursor } from "../domain/Pagination.js"
import { Role } from "../domain/Principal.js"
import { normalizeEmail } from "../domain/User.js"

/** A row of `invitations` with its tenant's name (camelCase, as the SQL client maps result names). */
const InvitationRecord = Schema.Struct({
  id: InvitationId,
  tenantId: TenantId,
  tenantName: Schema.String,
  email: Schema.String,
  role: Role,
  locale: InvitationLocale,
  invitedBy: UserId,
  status: Schema.Literals(["pending", "accepted", "revoked", "declined", "expired"]),
  expiresAt: Schema.Date,
  createdAt: Schema.Date,
  acceptedAt: Schema.NullOr(Schema.Date),
  revokedAt: Schema.NullOr(Schema.Date)
})
export type InvitationRecord = typeof InvitationRecord.Type

export interface NewInvitationRecord {
  readonly id: InvitationId
  readonly tenantId: TenantId
  readonly email: string
  readonly role: Role
  readonly locale: InvitationLocale
  readonly invitedBy: UserId
  readonly tokenHash: string
  readonly expiresAt: Date
  readonly createdAt: Date
}

/** Which invitations a tenant's list shows: `expired` is read from `expires_at`. */
export type InvitationFilter = "pending" | "accepted" | "revoked" | "declined" | "expired"

const invitations = decodeRows(InvitationRecord)
const ids = decodeRows(Schema.Struct({ id: InvitationId }))

export class InvitationRepo extends Context.Service<InvitationRepo>()("etd/InvitationRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`
      i.id, i.tenant_id, t.name AS tenant_name, i.email, i.role, i.locale, i.invited_by, i.status,
      i.expires_at, i.created_at, i.accepted_at, i.revoked_at`
    const from = sql`invitations i JOIN tenants t ON t.id = i.tenant_id`

    const insert = (invitation: NewInvitationRecord) =>
      sql`INSERT INTO invitations ${
        sql.insert({ ...invitation, emailNormalized: normalizeEmail(invitation.email), status: "pending" })
      }`.pipe(
        Effect.asVoid,
        Effect.catchIf(
          (error) => isUniqueViolation(error, "invitations_one_pending"),
          () =>
            Effect.fail(
              new Conflict({ message: "This address already has a pending invitation: resend it instead." })
            )
        )
      )

    const findById = (id: InvitationId) =>
      invitations(sql`SELECT ${columns} FROM ${from} WHERE i.id = ${id}`).pipe(Effect.map(Arr.head))

    /** Only an invitation that can still be accepted has a token. */
    const findByTokenHash = (tokenHash: string) =>
      invitations(sql`SELECT ${columns} FROM ${from} WHERE i.token_hash = ${tokenHash}`).pipe(Effect.map(Arr.head))

    /** The tenant's pending invitation to this address (lapsed or not), if any. */
    const findPending = (tenantId: TenantId, email: string) =>
      invitations(sql`
        SELECT ${columns} FROM ${from}
        WHERE i.tenant_id = ${tenantId} AND i.email_normalized = ${normalizeEmail(email)} AND i.status = 'pending'`)
        .pipe(Effect.map(Arr.head))

    /** A page of the tenant's invitations, newest first, `limit + 1` rows. */
    const listByTenant = (
      tenantId: TenantId,
      filter: InvitationFilter,
      at: Date,
      limit: number,
      cursor: Cursor | undefined
    ) => {
      const page = keyset(sql, sql`i.id`, "desc", cursor)
      const status = filter === "pending"
        ? sql`i.status = 'pending' AND i.expires_at > ${at}`
        : filter === "expired"
        ? sql`(i.status = 'expired' OR (i.status = 'pending' AND i.expires_at <= ${at}))`
        : sql`i.status = ${filter}`
      return invitations(sql`
        SELECT ${columns} FROM ${from}
        WHERE ${sql.and([sql`i.tenant_id = ${tenantId}`, status, ...page.where])}
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`)
    }

    /** A page of the invitations an address can still accept, newest first, `limit + 1` rows. */
    const listPendingFor = (email: string, at: Date, limit: number, cursor: Cursor | undefined) => {
      const page = keyset(sql, sql`i.id`, "desc", cursor)
      return invitations(sql`
        SELECT ${columns} FROM ${from}
        WHERE ${
        sql.and([
          sql`i.email_normalized = ${normalizeEmail(email)}`,
          sql`i.status = 'pending'`,
          sql`i.expires_at > ${at}`,
          ...page.where
        ])
      }
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`)
    }

    /**
     * Takes a pending, unexpired invitation out of reach of any other acceptance: whether this call
     * was the one that did (the row lock makes a concurrent claim wait, then find it taken).
     */
    const claim = (id: InvitationId, userId: UserId, at: Date) =>
      ids(sql`
        UPDATE invitations SET status = 'accepted', accepted_at = ${at}, accepted_by = ${userId}, token_hash = NULL
        WHERE id = ${id} AND status = 'pending' AND expires_at > ${at}
        RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))

    /** A new token and expiry for a pending invitation, vouched for by whoever resent it; whether it was pending. */
    const renew = (id: InvitationId, change: { tokenHash: string; expiresAt: Date; invitedBy: UserId }) =>
      ids(sql`
        UPDATE invitations
        SET token_hash = ${change.tokenHash}, expires_at = ${change.expiresAt}, invited_by = ${change.invitedBy}
        WHERE id = ${id} AND status = 'pending'
        RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))

    /** Ends a pending invitation (`revoked`, `declined`, or `expired` when a new one replaces it); whether it was pending. */
    const end = (id: InvitationId, status: "revoked" | "declined" | "expired", at: Date) =>
      ids(sql`
        UPDATE invitations SET status = ${status}, token_hash = NULL,
          revoked_at = ${status === "revoked" ? at : null}, declined_at = ${status === "declined" ? at : null}
        WHERE id = ${id} AND status = 'pending'
        RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))

    return repository("InvitationRepo", {
      insert,
      findById,
      findByTokenHash,
      findPending,
      listByTenant,
      listPendingFor,
      claim,
      renew,
      end
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
