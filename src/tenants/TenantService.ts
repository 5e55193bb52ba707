import { Context, Effect, Layer, Option } from "effect"
import { UserRepo, toPublicUser } from "../auth/UserRepo.js"
import { isUniqueViolation } from "../db/errors.js"
import { Conflict, Forbidden, NotFound } from "../domain/Errors.js"
import { type PageParams, toPage, pageSize } from "../domain/Pagination.js"
import type { Role } from "../domain/Principal.js"
import { now, quotaPeriod } from "../domain/Time.js"
import { TenantMembership } from "../auth/Api.js"
import { Member } from "./Api.js"
import { TenantRepo, toTenant } from "./TenantRepo.js"

export class TenantService extends Context.Service<TenantService>()("etd/TenantService", {
  make: Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const users = yield* UserRepo

    const get = Effect.fn("TenantService.get")(function*(tenantId: string) {
      const at = yield* now
      const row = yield* Effect.orDie(tenants.findById(tenantId, at))
      return toTenant(yield* Option.match(row, { onNone: () => Effect.fail(new NotFound()), onSome: Effect.succeed }), quotaPeriod(at))
    })

    /** The issuer's name, tax id, status and quota: None for an unknown tenant. */
    const issuer = (tenantId: string) => Effect.orDie(tenants.findIssuer(tenantId))

    /** Serializes per-tenant limits (call inside the transaction that checks the limit). */
    const lock = (tenantId: string) => Effect.orDie(tenants.lock(tenantId))

    /** For the payment provider's events: the last applied event's time (None: no such tenant), row locked. */
    const lockBillingState = (tenantId: string) => Effect.orDie(tenants.lockBillingState(tenantId))

    /** Applies a payment provider's event to the tenant's status, plan and quota. */
    const applyBilling = (tenantId: string, change: Parameters<typeof tenants.applyBilling>[1]) =>
      Effect.orDie(tenants.applyBilling(tenantId, change))

    const roleOf = Effect.fn("TenantService.roleOf")(function*(tenantId: string, userId: string) {
      return yield* Effect.orDie(tenants.roleOf(tenantId, userId))
    })

    const addMember = Effect.fn("TenantService.addMember")(function*(
      tenantId: string,
      actorRole: Role,
      input: { email: string; role: Role }
    ) {
      if (input.role === "owner" && actorRole !== "owner") {
        return yield* new Forbidden({ message: "Only an owner can add another owner." })
      }
      const user = yield* Effect.orDie(users.findByEmail(input.email))
      if (Option.isNone(user)) {
        return yield* new NotFound({ message: "No registered user has this email. Ask them to register first." })
      }
      const createdAt = yield* now
      yield* tenants.addMember({ tenantId, userId: user.value.id, role: input.role, createdAt }).pipe(
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new Conflict({ message: "This user is already a member of the tenant." }))
            : Effect.die(error))
      )
      return new Member({ user: toPublicUser(user.value), role: input.role, created_at: createdAt })
    })

    const listMembers = Effect.fn("TenantService.listMembers")(function*(tenantId: string, page: PageParams) {
      const rows = yield* Effect.orDie(tenants.listMembers(tenantId, pageSize(page.limit), page.starting_after))
      const members = rows.map((row) => ({
        id: row.userId,
        member: new Member({
          user: toPublicUser({ id: row.userId, email: row.email, name: row.name, createdAt: row.userCreatedAt }),
          role: row.role,
          created_at: row.createdAt
        })
      }))
      const result = toPage(members, pageSize(page.limit))
      return { ...result, data: result.data.map((entry) => entry.member) }
    })

    const tenantsOfUser = Effect.fn("TenantService.tenantsOfUser")(function*(userId: string, page: PageParams) {
      const at = yield* now
      const rows = yield* Effect.orDie(tenants.tenantsOfUser(userId, at, pageSize(page.limit), page.starting_after))
      const result = toPage(rows, pageSize(page.limit))
      return {
        ...result,
        data: result.data.map((row) => new TenantMembership({ tenant: toTenant(row, quotaPeriod(at)), role: row.role }))
      }
    })

    return { get, issuer, lock, lockBillingState, applyBilling, roleOf, addMember, listMembers, tenantsOfUser } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide([TenantRepo.layer, UserRepo.layer]))
}
