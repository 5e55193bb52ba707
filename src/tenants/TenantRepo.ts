/**
 * SQL for tenants and their memberships. It also reads `quota_usage`, which the documents module
 * owns and writes (DocumentRepo.takeQuota): the month's usage is part of every tenant the API
 * shows, and joining it here keeps a list of tenants one statement instead of a call per tenant.
 */
import { Array as Arr, Context, Effect, Layer, Option, Schema, SchemaTransformation } from "effect"
import { SqlClient } from "effect/sql"
import { isUniqueViolation } from "../db/errors.js"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository } from "../db/Repository.js"
import { Conflict } from "../domain/Errors.js"
import { TenantId, UserId } from "../domain/Ids.js"
import type { Cursor } from "../domain/Pagination.js"
import { Role } from "../domain/Principal.js"
import { emptyRegistration, Registration, RegistrationChanges } from "../domain/Registration.js"
import { SimplesNacional, TenantStatus } from "../domain/Tenant.js"
import { quotaPeriod } from "../domain/Time.js"
import { normalizeEmail } from "../domain/User.js"

/**
 * The `registration` column: the API's JSON of the fields declared so far (an update merges its keys
 * in), read back as the whole registration with null for the others.
 */
const StoredRegistration = Schema.toCodecJson(RegistrationChanges).pipe(
  Schema.decodeTo(
    Schema.toType(Registration),
    SchemaTransformation.transform({
      // Every field shown, null when not declared, the address's complement included.
      decode: (stored): Registration => ({
        ...emptyRegistration,
        ...stored,
        address: stored.address == null ? null : { complement: null, ...stored.address }
      }),
      encode: (registration) => registration
    })
  )
)
const registrationJson = (changes: RegistrationChanges) =>
  JSON.stringify(Schema.encodeSync(Schema.toCodecJson(RegistrationChanges))(changes))

/** A row of `tenants` (camelCase, as the SQL client maps result names). */
const TenantRecord = Schema.Struct({
  id: TenantId,
  name: Schema.String,
  taxId: Schema.String,
  verified: Schema.Boolean,
  /** Whether another tenant has proven this tenant's tax id. */
  taxIdVerifiedByAnother: Schema.Boolean,
  status: TenantStatus,
  plan: Schema.String,
  monthlyQuota: Schema.Number,
  simplesNacional: SimplesNacional,
  registration: StoredRegistration,
  noteMailEnabled: Schema.Boolean,
  noteMailSenderName: Schema.NullOr(Schema.String),
  createdAt: Schema.Date
})

/** A tenant with its usage of a month's quota (null: nothing issued that month). */
const TenantUsageRecord = Schema.Struct({ ...TenantRecord.fields, used: Schema.NullOr(Schema.Number) })
export type TenantUsageRecord = typeof TenantUsageRecord.Type

/** A row of `memberships`. */
const MembershipRecord = Schema.Struct({ userId: UserId, role: Role, createdAt: Schema.Date })

export type NewTenantRecord = {
  readonly id: TenantId
  readonly name: string
  readonly taxId: string
  readonly monthlyQuota: number
  readonly createdAt: Date
}

/** What an owner or admin changes of a tenant (absent: unchanged). */
export interface TenantChange {
  readonly name?: string | undefined
  readonly simplesNacional?: SimplesNacional | undefined
  /** Merged into the stored registration, key by key. */
  readonly registration?: RegistrationChanges | undefined
  readonly noteMailEnabled?: boolean | undefined
  /** null: back to the default name; undefined: unchanged. */
  readonly noteMailSenderName?: string | null | undefined
}

export interface BillingChange {
  readonly status: TenantStatus
  readonly billingEventAt: Date
  readonly plan?: string | undefined
  readonly monthlyQuota?: number | undefined
}

/**
 * A tenant with its usage read by another module's statement with these very columns and names
 * (the authentication's, src/keys/KeyRepo.ts): decoded as `findById` decodes its row.
 */
export const decodeTenantUsage = (row: unknown) => Effect.orDie(decodeUsageRow(row))

// Made once, and synchronous (the schema has no asynchronous step): every key-authenticated read
// of a tenant decodes its row here, and an Exit is already the effect's result.
const decodeUsageRow = Schema.decodeUnknownExit(TenantUsageRecord)

const tenants = decodeRows(TenantRecord)
const tenantsWithUsage = decodeRows(TenantUsageRecord)
const tenantsOfMember = decodeRows(Schema.Struct({ ...TenantUsageRecord.fields, role: Role }))
const Issuer = Schema.Struct({
  name: Schema.String,
  taxId: Schema.String,
  status: TenantStatus,
  monthlyQuota: Schema.Number,
  verified: Schema.Boolean,
  simplesNacional: SimplesNacional,
  registration: StoredRegistration,
  taxIdVerifiedByAnother: Schema.Boolean,
  noteMailEnabled: Schema.Boolean
})
const issuers = decodeRows(Issuer)
const decodeIssuerRow = Schema.decodeUnknownExit(Issuer)
/** What issuing needs of a tenant (`findIssuer`), from a row that holds its columns (the key's). */
export const decodeIssuer = (row: unknown) => Effect.orDie(decodeIssuerRow(row))
const issuersWithIds = decodeRows(Schema.Struct({ id: TenantId, ...Issuer.fields }))
const memberships = decodeRows(MembershipRecord)
const roles = decodeRows(Schema.Struct({ role: Role }))
const owners = decodeRows(Schema.Struct({ owners: Schema.Number }))
const flags = decodeRows(Schema.Struct({ found: Schema.Boolean }))
const ids = decodeRows(Schema.Struct({ id: TenantId }))
const taxIds = decodeRows(Schema.Struct({ taxId: Schema.String }))
const verifications = decodeRows(Schema.Struct({ taxId: Schema.String, verified: Schema.Boolean }))
const named = decodeRows(Schema.Struct({ id: TenantId, name: Schema.String }))
const owned = decodeRows(Schema.Struct({ tenantId: TenantId, userId: UserId }))
const pairs = decodeRows(Schema.Struct({ tenantId: TenantId, emailNormalized: Schema.String }))
const billingStates = decodeRows(Schema.Struct({ billingEventAt: Schema.NullOr(Schema.Date) }))

export class TenantRepo extends Context.Service<TenantRepo>()("etd/TenantRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /** Whether another tenant proved `t`'s tax id: one probe of the verified tax ids' index. */
    const verifiedByAnother =
      sql`EXISTS (SELECT 1 FROM tenants o WHERE o.tax_id = t.tax_id AND o.verified AND o.id <> t.id)`
    const tenantColumns = sql`
      t.id, t.name, t.tax_id, t.verified, ${verifiedByAnother} AS tax_id_verified_by_another, t.status, t.plan,
      t.monthly_quota, t.simples_nacional, t.registration, t.note_mail_enabled, t.note_mail_sender_name, t.created_at`

    /** The tenant as stored, with the defaults the table gives a new one (status, plan, unverified). */
    const insert = (tenant: NewTenantRecord) =>
      tenants(sql`INSERT INTO tenants AS t ${sql.insert(tenant)} RETURNING ${tenantColumns}`).pipe(
        // An insert returns its row.
        Effect.map((rows) => rows[0]!)
      )

    /** Whether a tenant has proven this tax id (SPEC §5: then no other tenant may register with it). */
    const isTaxIdVerified = (taxId: string) =>
      flags(sql`SELECT EXISTS (SELECT 1 FROM tenants WHERE tax_id = ${taxId} AND verified) AS found`).pipe(
        Effect.map((rows) => rows[0]?.found === true)
      )

    /**
     * Marks the tenant as the proven holder of its tax id: the tax id when it was not already (None
     * when it was, or there is no such tenant). The unique index on verified tax ids makes a
     * concurrent verification by another tenant wait for this transaction and fail if it commits.
     */
    const markVerified = (id: TenantId) =>
      taxIds(sql`UPDATE tenants SET verified = true WHERE id = ${id} AND NOT verified RETURNING tax_id`).pipe(
        Effect.map((rows) => Option.map(Arr.head(rows), (row) => row.taxId)),
        Effect.catchIf(
          (error) => isUniqueViolation(error, "tenants_verified_tax_id"),
          () =>
            Effect.fail(
              new Conflict({ message: "Another tenant has already proven this tax id with its certificate." })
            )
        )
      )

    /** The tenant's tax id and whether it proved it, locking the row for the caller's transaction (None: no such tenant). */
    const lockVerification = (id: TenantId) =>
      verifications(sql`SELECT tax_id, verified FROM tenants WHERE id = ${id} FOR NO KEY UPDATE`).pipe(
        Effect.map(Arr.head)
      )

    /** Takes the proof of its tax id away from the tenant: the tax id is open to every tenant that names it. */
    const unmarkVerified = (id: TenantId) =>
      sql`UPDATE tenants SET verified = false WHERE id = ${id}`.pipe(Effect.asVoid)

    /** The other tenants that name this tax id (ids and names), in id order. */
    const namingTaxId = (taxId: string, except: TenantId) =>
      named(sql`SELECT id, name FROM tenants WHERE tax_id = ${taxId} AND id <> ${except} ORDER BY id`)

    /** The owners of these tenants, as (tenant, user) pairs in that order. */
    const ownersOf = (tenantIds: Arr.NonEmptyReadonlyArray<TenantId>) =>
      owned(sql`
        SELECT tenant_id, user_id FROM memberships
        WHERE tenant_id IN ${sql.in(tenantIds)} AND role = 'owner'
        ORDER BY tenant_id, user_id`)

    const findById = (id: TenantId, at: Date) =>
      tenantsWithUsage(sql`
        SELECT ${tenantColumns}, q.used FROM tenants t
        LEFT JOIN quota_usage q ON q.tenant_id = t.id AND q.period = ${quotaPeriod(at)}
        WHERE t.id = ${id}`).pipe(Effect.map(Arr.head))

    /**
     * What issuing a document needs of its tenant (read inside the acceptance transaction), with
     * whether another tenant has proven its tax id (one probe of the verified tax ids' index).
     */
    const issuerColumns = sql`
      t.name, t.tax_id, t.status, t.monthly_quota, t.verified, t.simples_nacional, t.registration,
      ${verifiedByAnother} AS tax_id_verified_by_another, t.note_mail_enabled`

    const findIssuer = (id: TenantId) =>
      issuers(sql`SELECT ${issuerColumns} FROM tenants t WHERE t.id = ${id}`).pipe(Effect.map(Arr.head))

    /** `findIssuer` for several tenants (those that exist), in one statement, with their ids. */
    const findIssuers = (ids: Arr.NonEmptyReadonlyArray<TenantId>) =>
      issuersWithIds(sql`SELECT t.id, ${issuerColumns} FROM tenants t WHERE t.id IN ${sql.in(ids)}`)

    /** Applies the change; whether the tenant exists. */
    const update = (id: TenantId, change: TenantChange) =>
      ids(sql`
        UPDATE tenants SET
          name = COALESCE(${change.name ?? null}, name),
          simples_nacional = COALESCE(${change.simplesNacional ?? null}, simples_nacional),
          note_mail_enabled = COALESCE(${change.noteMailEnabled ?? null}, note_mail_enabled)
          ${
        change.noteMailSenderName === undefined ? sql`` : sql`, note_mail_sender_name = ${change.noteMailSenderName}`
      }
          ${
        change.registration === undefined
          ? sql``
          : sql`, registration = registration || ${registrationJson(change.registration)}::jsonb`
      }
        WHERE id = ${id} RETURNING id`).pipe(Effect.map((rows) => rows.length > 0))

    /**
     * Locks the tenant row for the surrounding transaction, to serialize writes that must respect a
     * per-tenant limit. NO KEY: rows that reference the tenant can still be inserted meanwhile.
     */
    const lock = (id: TenantId) => sql`SELECT id FROM tenants WHERE id = ${id} FOR NO KEY UPDATE`.pipe(Effect.asVoid)

    /** The time of the last billing event applied to the tenant, locking the row for the caller's transaction. */
    const lockBillingState = (id: TenantId) =>
      billingStates(sql`SELECT billing_event_at FROM tenants WHERE id = ${id} FOR NO KEY UPDATE`).pipe(
        Effect.map(Arr.head)
      )

    const applyBilling = (id: TenantId, change: BillingChange) =>
      sql`
        UPDATE tenants SET status = ${change.status}, billing_event_at = ${change.billingEventAt}
          ${change.plan === undefined ? sql`` : sql`, plan = ${change.plan}`}
          ${change.monthlyQuota === undefined ? sql`` : sql`, monthly_quota = ${change.monthlyQuota}`}
        WHERE id = ${id}`.pipe(Effect.asVoid)

    const addMember = (member: { tenantId: TenantId; userId: UserId; role: Role; createdAt: Date }) =>
      sql`INSERT INTO memberships ${sql.insert(member)}`.pipe(
        Effect.asVoid,
        Effect.catchIf(
          (error) => isUniqueViolation(error),
          () => Effect.fail(new Conflict({ message: "This user is already a member of the tenant." }))
        )
      )

    const roleOf = (tenantId: TenantId, userId: UserId) =>
      roles(sql`SELECT role FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId}`).pipe(
        Effect.map((rows) => Option.map(Arr.head(rows), (row) => row.role))
      )

    /**
     * Which of `candidates` (a tenant and an address) are the verified address of one of that
     * tenant's members (compared as sign-in compares them), in one statement: a predicate.
     */
    const verifiedMembersAmong = (candidates: Arr.NonEmptyReadonlyArray<{ tenantId: TenantId; email: string }>) =>
      pairs(sql`
        SELECT DISTINCT m.tenant_id, u.email_normalized FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.tenant_id IN ${sql.in(Arr.dedupe(candidates.map((c) => c.tenantId)))}
          AND u.email_normalized IN ${sql.in(Arr.dedupe(candidates.map((c) => normalizeEmail(c.email))))}
          AND u.email_verified_at IS NOT NULL`).pipe(
        Effect.map((rows) => {
          const found = new Set(rows.map((row) => `${row.tenantId} ${row.emailNormalized}`))
          return (tenantId: TenantId, email: string) => found.has(`${tenantId} ${normalizeEmail(email)}`)
        })
      )

    /** Whether `email` is the verified address of one of the tenant's members. */
    const hasVerifiedMember = (tenantId: TenantId, email: string) =>
      Effect.map(verifiedMembersAmong([{ tenantId, email }]), (isMember) => isMember(tenantId, email))

    const findMember = (tenantId: TenantId, userId: UserId) =>
      memberships(
        sql`SELECT user_id, role, created_at FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId}`
      ).pipe(
        Effect.map(Arr.head)
      )

    const countOwners = (tenantId: TenantId) =>
      owners(sql`SELECT count(*)::int AS owners FROM memberships WHERE tenant_id = ${tenantId} AND role = 'owner'`)
        .pipe(
          Effect.map((rows) => rows[0]?.owners ?? 0)
        )

    const setRole = (tenantId: TenantId, userId: UserId, role: Role) =>
      sql`UPDATE memberships SET role = ${role} WHERE tenant_id = ${tenantId} AND user_id = ${userId}`.pipe(
        Effect.asVoid
      )

    const removeMember = (tenantId: TenantId, userId: UserId) =>
      sql`DELETE FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId}`.pipe(Effect.asVoid)

    /**
     * A page of the tenant's memberships in user id order, `limit + 1` rows so the caller can tell
     * whether more exist (the users themselves belong to the auth module).
     */
    const listMembers = (tenantId: TenantId, limit: number, cursor: Cursor | undefined) => {
      const page = keyset(sql, sql`user_id`, "asc", cursor)
      return memberships(sql`
        SELECT user_id, role, created_at FROM memberships
        WHERE ${sql.and([sql`tenant_id = ${tenantId}`, ...page.where])}
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`)
    }

    /** A page of the user's tenants with the user's role in each, in tenant id order, `limit + 1` rows. */
    const tenantsOfUser = (userId: UserId, at: Date, limit: number, cursor: Cursor | undefined) => {
      const page = keyset(sql, sql`t.id`, "asc", cursor)
      return tenantsOfMember(sql`
        SELECT ${tenantColumns}, q.used, m.role FROM memberships m
        JOIN tenants t ON t.id = m.tenant_id
        LEFT JOIN quota_usage q ON q.tenant_id = t.id AND q.period = ${quotaPeriod(at)}
        WHERE ${sql.and([sql`m.user_id = ${userId}`, ...page.where])}
        ORDER BY ${page.orderBy}
        LIMIT ${limit + 1}`)
    }

    return repository("TenantRepo", {
      insert,
      isTaxIdVerified,
      markVerified,
      lockVerification,
      unmarkVerified,
      namingTaxId,
      ownersOf,
      findById,
      findIssuer,
      findIssuers,
      update,
      lock,
      lockBillingState,
      applyBilling,
      addMember,
      roleOf,
      hasVerifiedMember,
      verifiedMembersAmong,
      findMember,
      countOwners,
      setRole,
      removeMember,
      listMembers,
      tenantsOfUser
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
