/**
 * Tenants: creation (at registration, with its owner), the tenant as the API shows it, the
 * caller's role, and what other modules need of a tenant (issuer data, a per-tenant lock, billing).
 */
import { type Array as Arr, Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { Conflict, invalidField, NotFound } from "../domain/Errors.js"
import { makeId, type TenantId, type UserId } from "../domain/Ids.js"
import { cursorOf, type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import { addressProblem } from "../domain/Registration.js"
import { type NewTenant, taxIdStatusOf, Tenant, type TenantChanges, TenantMembership } from "../domain/Tenant.js"
import { now, quotaPeriod } from "../domain/Time.js"
import {
  type BillingChange,
  decodeIssuer,
  decodeTenantUsage,
  TenantRepo,
  type TenantUsageRecord
} from "./TenantRepo.js"

/**
 * The tenant of the request's API key as the authentication read it, in the statement that found
 * the key: its columns as `TenantRepo` reads a tenant with its usage of the month of `at`. Reading
 * that tenant in the same request then costs no second statement.
 */
export class AuthenticatedTenant extends Context.Service<AuthenticatedTenant, {
  readonly at: Date
  readonly row: { readonly id: TenantId }
}>()("etd/AuthenticatedTenant") {}

/** The one mapping from a stored tenant to the API's. */
const toTenant = (row: TenantUsageRecord, period: string) =>
  new Tenant({
    id: row.id,
    name: row.name,
    tax_id: row.taxId,
    verified: row.verified,
    tax_id_status: taxIdStatusOf(row),
    status: row.status,
    plan: row.plan,
    quota: { period, limit: row.monthlyQuota, used: row.used ?? 0 },
    simples_nacional: row.simplesNacional,
    registration: row.registration,
    note_mail: { enabled: row.noteMailEnabled, sender_name: row.noteMailSenderName },
    created_at: row.createdAt
  })

export class TenantService extends Context.Service<TenantService>()("etd/TenantService", {
  make: Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const config = yield* AppConfig
    const inTransaction = yield* makeTransaction

    /** A new tenant with `ownerId` as its owner, created at `at` (registration's own time). */
    const create = Effect.fn("TenantService.create")(function*(input: NewTenant, ownerId: UserId, at: Date) {
      const id = yield* makeId("tenant")
      return yield* Effect.gen(function*() {
        // A registration racing the verification sees the tax id as it was at its own statement:
        // it may still land, unverified, and has no claim on the tax id for live issuing either.
        if (yield* tenants.isTaxIdVerified(input.tax_id)) {
          return yield* new Conflict({
            message: "Another tenant has proven this tax id with its certificate.",
            issues: [{ path: ["tenant", "tax_id"], message: "was proven by another tenant with its certificate" }]
          })
        }
        const row = yield* tenants.insert({
          id,
          name: input.name,
          taxId: input.tax_id,
          monthlyQuota: config.defaultMonthlyQuota,
          createdAt: at
        })
        yield* tenants.addMember({ tenantId: id, userId: ownerId, role: "owner", createdAt: at })
        return toTenant({ ...row, used: null }, quotaPeriod(at))
      }).pipe(inTransaction)
    })

    /** The tenant as stored now, with the usage of this month. */
    const read = (tenantId: TenantId) =>
      Effect.gen(function*() {
        const at = yield* now
        const row = yield* tenants.findById(tenantId, at)
        if (Option.isNone(row)) return yield* new NotFound()
        return toTenant(row.value, quotaPeriod(at))
      })

    /**
     * The tenant; as the request's key authentication read it when it is that tenant's key. A chain
     * without a span of its own on that path: every key's read of its tenant runs it, and it reads
     * nothing (the authentication's statement, traced, did). A read from the database is traced.
     */
    const get = (tenantId: TenantId) =>
      Effect.flatMap(
        Effect.serviceOption(AuthenticatedTenant),
        (authenticated) =>
          Option.isSome(authenticated) && authenticated.value.row.id === tenantId
            ? Effect.map(
              decodeTenantUsage(authenticated.value.row),
              (row) => toTenant(row, quotaPeriod(authenticated.value.at))
            )
            : Effect.withSpan(read(tenantId), "TenantService.get")
      )

    /**
     * Changes the tenant's name, Simples Nacional option, registration or note mail settings (the route allows owners and
     * admins); the tenant as changed. The registration's fields given replace the stored ones (one
     * statement: concurrent updates of different fields both land), `address` as a whole.
     */
    const update = Effect.fn("TenantService.update")(function*(tenantId: TenantId, changes: TenantChanges) {
      const address = changes.registration?.address
      const problem = address == null ? undefined : addressProblem(address)
      if (problem !== undefined) return yield* invalidField(["registration", "address", problem.field], problem.message)
      const found = yield* tenants.update(tenantId, {
        name: changes.name,
        simplesNacional: changes.simples_nacional,
        registration: changes.registration,
        noteMailEnabled: changes.note_mail?.enabled,
        noteMailSenderName: changes.note_mail?.sender_name
      })
      if (!found) return yield* new NotFound()
      // As changed: never a row read before the change.
      return yield* read(tenantId)
    })

    /**
     * The issuer's name, tax id, status, quota, Simples Nacional option, whether it proved its tax id and
     * whether another tenant did: None for an unknown tenant. As the request's key authentication
     * read it when it is that tenant's key: every document a key issues would otherwise read its
     * tenant a second time.
     */
    const issuer = (tenantId: TenantId) =>
      Effect.flatMap(
        Effect.serviceOption(AuthenticatedTenant),
        (authenticated) =>
          Option.isSome(authenticated) && authenticated.value.row.id === tenantId
            ? Effect.map(decodeIssuer(authenticated.value.row), Option.some)
            : tenants.findIssuer(tenantId)
      )

    /** `issuer` for several tenants at once, by id (a tenant that does not exist is absent). */
    const issuers = (tenantIds: Arr.NonEmptyReadonlyArray<TenantId>) =>
      Effect.map(tenants.findIssuers(tenantIds), (rows) => new Map(rows.map(({ id, ...issuer }) => [id, issuer])))

    /** Serializes per-tenant limits (call inside the transaction that checks the limit). */
    const lock = (tenantId: TenantId) => tenants.lock(tenantId)

    /** For the payment provider's events: the last applied event's time (None: no such tenant), row locked. */
    const lockBillingState = (tenantId: TenantId) => tenants.lockBillingState(tenantId)

    /** Applies a payment provider's event to the tenant's status, plan and quota. */
    const applyBilling = (tenantId: TenantId, change: BillingChange) => tenants.applyBilling(tenantId, change)

    const roleOf = Effect.fn("TenantService.roleOf")(function*(tenantId: TenantId, userId: UserId) {
      return yield* tenants.roleOf(tenantId, userId)
    })

    const hasVerifiedMember = Effect.fn("TenantService.hasVerifiedMember")(
      function*(tenantId: TenantId, email: string) {
        return yield* tenants.hasVerifiedMember(tenantId, email)
      }
    )

    /** Which of several tenants' addresses are a verified member's (a test note is e-mailed to no one else). */
    const verifiedRecipients = tenants.verifiedMembersAmong

    const tenantsOfUser = Effect.fn("TenantService.tenantsOfUser")(function*(userId: UserId, page: PageParams) {
      const at = yield* now
      const cursor = cursorOf(page)
      const rows = yield* tenants.tenantsOfUser(userId, at, pageSize(page.limit), cursor)
      const result = toPage(rows, pageSize(page.limit), cursor)
      return {
        ...result,
        data: result.data.map((row) => new TenantMembership({ tenant: toTenant(row, quotaPeriod(at)), role: row.role }))
      }
    })

    return {
      create,
      get,
      update,
      issuer,
      issuers,
      lock,
      lockBillingState,
      applyBilling,
      roleOf,
      hasVerifiedMember,
      verifiedRecipients,
      tenantsOfUser
    } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([TenantRepo.layer, Transaction.layer]))
}
