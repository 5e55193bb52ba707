import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Role } from "../domain/Principal.js"
import { quotaPeriod } from "../domain/Time.js"
import { type PublicUser, Tenant, type TenantStatus } from "./Api.js"

export interface TenantRow {
  readonly id: string
  readonly name: string
  readonly taxId: string
  readonly status: typeof TenantStatus.Type
  readonly plan: string
  readonly monthlyQuota: number
  readonly createdAt: Date
  readonly used: number | null
}

export const toTenant = (row: TenantRow, period: string) =>
  new Tenant({
    id: row.id,
    name: row.name,
    tax_id: row.taxId,
    status: row.status,
    plan: row.plan,
    quota: { period, limit: row.monthlyQuota, used: row.used ?? 0 },
    created_at: row.createdAt
  })

export interface MemberRow {
  readonly userId: string
  readonly email: string
  readonly name: string | null
  readonly userCreatedAt: Date
  readonly role: Role
  readonly createdAt: Date
}

export type UserShape = Pick<PublicUser, "id" | "email" | "name" | "created_at">

export class TenantRepo extends Context.Service<TenantRepo>()("etd/TenantRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (tenant: { id: string; name: string; taxId: string; monthlyQuota: number; createdAt: Date }) =>
      sql`INSERT INTO tenants ${sql.insert(tenant)}`.pipe(Effect.asVoid, Effect.withSpan("TenantRepo.insert"))

    const findById = (id: string, at: Date) =>
      sql<TenantRow>`
        SELECT t.*, q.used FROM tenants t
        LEFT JOIN quota_usage q ON q.tenant_id = t.id AND q.period = ${quotaPeriod(at)}
        WHERE t.id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("TenantRepo.findById")
      )

    /** What issuing a document needs of its tenant (read inside the acceptance transaction). */
    const findIssuer = (id: string) =>
      sql<{ name: string; taxId: string; status: typeof TenantStatus.Type; monthlyQuota: number }>`
        SELECT name, tax_id, status, monthly_quota FROM tenants WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("TenantRepo.findIssuer")
      )

    /**
     * Locks the tenant row for the surrounding transaction, to serialize writes that must respect a
     * per-tenant limit. NO KEY: rows that reference the tenant can still be inserted meanwhile.
     */
    const lock = (id: string) =>
      sql`SELECT id FROM tenants WHERE id = ${id} FOR NO KEY UPDATE`.pipe(Effect.asVoid, Effect.withSpan("TenantRepo.lock"))

    /** The time of the last billing event applied to the tenant, locking the row for the caller's transaction. */
    const lockBillingState = (id: string) =>
      sql<{ billingEventAt: Date | null }>`
        SELECT billing_event_at FROM tenants WHERE id = ${id} FOR NO KEY UPDATE`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("TenantRepo.lockBillingState")
      )

    const applyBilling = (id: string, change: {
      readonly status: typeof TenantStatus.Type
      readonly billingEventAt: Date
      readonly plan?: string | undefined
      readonly monthlyQuota?: number | undefined
    }) =>
      sql`
        UPDATE tenants SET status = ${change.status}, billing_event_at = ${change.billingEventAt}
          ${change.plan === undefined ? sql`` : sql`, plan = ${change.plan}`}
          ${change.monthlyQuota === undefined ? sql`` : sql`, monthly_quota = ${change.monthlyQuota}`}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.withSpan("TenantRepo.applyBilling"))

    const addMember = (member: { tenantId: string; userId: string; role: Role; createdAt: Date }) =>
      sql`INSERT INTO memberships ${sql.insert(member)}`.pipe(Effect.asVoid, Effect.withSpan("TenantRepo.addMember"))

    const roleOf = (tenantId: string, userId: string) =>
      sql<{ role: Role }>`SELECT role FROM memberships WHERE tenant_id = ${tenantId} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row.role)),
        Effect.withSpan("TenantRepo.roleOf")
      )

    const listMembers = (tenantId: string, limit: number, startingAfter: string | undefined) =>
      sql<MemberRow>`
        SELECT m.user_id, u.email, u.name, u.created_at AS user_created_at, m.role, m.created_at
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.tenant_id = ${tenantId} ${startingAfter ? sql`AND m.user_id > ${startingAfter}` : sql``}
        ORDER BY m.user_id
        LIMIT ${limit + 1}`.pipe(Effect.withSpan("TenantRepo.listMembers"))

    const tenantsOfUser = (userId: string, at: Date, limit: number, startingAfter: string | undefined) =>
      sql<TenantRow & { role: Role }>`
        SELECT t.*, q.used, m.role FROM memberships m
        JOIN tenants t ON t.id = m.tenant_id
        LEFT JOIN quota_usage q ON q.tenant_id = t.id AND q.period = ${quotaPeriod(at)}
        WHERE m.user_id = ${userId} ${startingAfter ? sql`AND t.id > ${startingAfter}` : sql``}
        ORDER BY t.id
        LIMIT ${limit + 1}`.pipe(Effect.withSpan("TenantRepo.tenantsOfUser"))

    return { insert, findById, findIssuer, lock, lockBillingState, applyBilling, addMember, roleOf, listMembers, tenantsOfUser } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
