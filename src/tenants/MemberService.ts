/**
 * A tenant's members: listing them, changing a role and removing a member (SPEC §5); people join
 * by accepting an invitation (InvitationAcceptanceService). Memberships are the tenants module's; the users behind them come
 * from the `UserDirectory` the auth module provides.
 *
 * Every member change runs under the tenant's row lock and applies the whole rule of who may do it
 * (MemberRules.ts) to the caller's role read again under that lock: the route checked the role
 * before, and a demotion or removal committed since must count. Two owners demoting or removing each
 * other at once are serialized too, so the second sees the first's outcome (it is no longer an
 * owner, or the other is the last one) and the tenant never ends up without an owner.
 */
import { Context, Effect, Layer, Option } from "effect"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { InvalidState, NotFound } from "../domain/Errors.js"
import type { TenantId, UserId } from "../domain/Ids.js"
import { cursorOf, type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import type { Role } from "../domain/Principal.js"
import { Member } from "./Api.js"
import { checkMemberChange } from "./MemberRules.js"
import { TenantRepo } from "./TenantRepo.js"
import { UserDirectory } from "./UserDirectory.js"

export class MemberService extends Context.Service<MemberService>()("etd/MemberService", {
  make: Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const directory = yield* UserDirectory
    const inTransaction = yield* makeTransaction

    const noSuchMember = new NotFound({ message: "No such member." })

    /**
     * Locks the tenant's row for the surrounding transaction and reads the caller's role under it:
     * `NotFound` when the caller is no longer a member. Every member change starts with it and then
     * applies `checkMemberChange` to the role it returns.
     */
    const lockForChange = (tenantId: TenantId, actorId: UserId) =>
      Effect.andThen(
        tenants.lock(tenantId),
        Effect.flatMap(
          tenants.roleOf(tenantId, actorId),
          Option.match({
            onNone: () => Effect.fail(new NotFound()),
            onSome: Effect.succeed
          })
        )
      )

    const listMembers = Effect.fn("MemberService.listMembers")(function*(tenantId: TenantId, page: PageParams) {
      const cursor = cursorOf(page)
      const memberships = yield* tenants.listMembers(tenantId, pageSize(page.limit), cursor)
      const result = toPage(
        memberships.map((membership) => ({ ...membership, id: membership.userId })),
        pageSize(page.limit),
        cursor
      )
      const found = yield* directory.findByIds(result.data.map((membership) => membership.userId))
      const users = new Map(found.map((user) => [user.id, user]))
      const data = yield* Effect.forEach(result.data, (membership) => {
        const user = users.get(membership.userId)
        // A membership references its user (foreign key), and users are never deleted.
        return user === undefined
          ? Effect.die(new Error(`member ${membership.userId} of ${tenantId} is not a registered user`))
          : Effect.succeed(new Member({ user, role: membership.role, created_at: membership.createdAt }))
      })
      return { ...result, data }
    })

    /** Fails when the owner about to be demoted or removed is the tenant's only one (call under the tenant's lock). */
    const keepAnOwner = (tenantId: TenantId, action: string) =>
      Effect.flatMap(tenants.countOwners(tenantId), (owners) =>
        owners > 1
          ? Effect.void
          : Effect.fail(
            new InvalidState({ message: `The last owner cannot be ${action}; make another member an owner first.` })
          ))

    const changeRole = Effect.fn("MemberService.changeRole")(function*(
      tenantId: TenantId,
      actorId: UserId,
      userId: UserId,
      role: Role
    ) {
      const membership = yield* Effect.gen(function*() {
        const actorRole = yield* lockForChange(tenantId, actorId)
        // A developer changes no role, and learns nothing of user ids: refused before the lookup.
        if (actorRole === "developer") yield* checkMemberChange(actorRole, { _tag: "ChangeRole", from: role, to: role })
        // A malformed user id names no membership either: the same 404 (SPEC §2).
        const found = yield* tenants.findMember(tenantId, userId)
        if (Option.isNone(found)) return yield* noSuchMember
        const current = found.value
        yield* checkMemberChange(actorRole, { _tag: "ChangeRole", from: current.role, to: role })
        if (current.role === role) return current
        if (current.role === "owner") yield* keepAnOwner(tenantId, "demoted")
        yield* tenants.setRole(tenantId, userId, role)
        return { ...current, role }
      }).pipe(inTransaction)
      const [user] = yield* directory.findByIds([userId])
      // A membership references its user (foreign key), and users are never deleted.
      if (user === undefined) {
        return yield* Effect.die(new Error(`member ${userId} of ${tenantId} is not a registered user`))
      }
      return new Member({ user, role: membership.role, created_at: membership.createdAt })
    })

    /** Removes a member: an owner or admin removes others, every member may remove themselves. */
    const removeMember = Effect.fn("MemberService.removeMember")(
      function*(tenantId: TenantId, actorId: UserId, userId: UserId) {
        yield* Effect.gen(function*() {
          const actorRole = yield* lockForChange(tenantId, actorId)
          const self = actorId === userId
          // A developer learns nothing of other user ids: refused before the lookup.
          if (!self && actorRole === "developer") {
            yield* checkMemberChange(actorRole, { _tag: "Remove", role: "developer", self })
          }
          const target = yield* tenants.roleOf(tenantId, userId)
          if (Option.isNone(target)) return yield* noSuchMember
          yield* checkMemberChange(actorRole, { _tag: "Remove", role: target.value, self })
          if (target.value === "owner") yield* keepAnOwner(tenantId, "removed")
          yield* tenants.removeMember(tenantId, userId)
        }).pipe(inTransaction)
      }
    )

    return { listMembers, changeRole, removeMember, lockForChange } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs a `UserDirectory`: the auth module provides it (src/auth/Directory.ts). */
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([TenantRepo.layer, Transaction.layer]))
}
