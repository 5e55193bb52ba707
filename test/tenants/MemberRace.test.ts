/**
 * A member change racing a change of its caller's own membership, on both databases, with the
 * interleaving held in place: an owner's demotion (or removal) of an admin has written its change
 * and holds the tenant's row lock, uncommitted, while the admin's own member change is already past
 * the route's role check. The admin's change must see the demotion once it gets the lock, and be
 * refused with the full rule (403 as a developer, 404 when removed), never applied.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Result } from "effect"
import { SqlClient } from "effect/sql"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import { makeId, type TenantId, type UserId } from "../../src/domain/Ids.js"
import type { Role } from "../../src/domain/Principal.js"
import { PublicUser } from "../../src/domain/User.js"
import { MemberService } from "../../src/tenants/MemberService.js"
import { TenantRepo } from "../../src/tenants/TenantRepo.js"
import { UserDirectory } from "../../src/tenants/UserDirectory.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"

const joined = new Date("2026-03-01T12:00:00Z")

/** Where the test holds the owner's change: after it has written, before it commits. */
const hooks: {
  afterWrite: (userId: UserId) => Effect.Effect<void>
  beforeLock: () => Effect.Effect<void>
} = { afterWrite: () => Effect.void, beforeLock: () => Effect.void }

/** The real repository, with the test's hooks after each membership write and before each lock. */
const HookedTenantRepo = Layer.effect(
  TenantRepo,
  Effect.map(TenantRepo.make, (repo) => ({
    ...repo,
    lock: (tenantId: TenantId) => Effect.andThen(Effect.suspend(() => hooks.beforeLock()), repo.lock(tenantId)),
    setRole: (tenantId: TenantId, userId: UserId, role: Role) =>
      Effect.andThen(repo.setRole(tenantId, userId, role), Effect.suspend(() => hooks.afterWrite(userId))),
    removeMember: (tenantId: TenantId, userId: UserId) =>
      Effect.andThen(repo.removeMember(tenantId, userId), Effect.suspend(() => hooks.afterWrite(userId)))
  }))
)

const publicUser = (id: string) =>
  new PublicUser({ id, email: `${id}@example.com`, name: null, created_at: joined, email_verified: true })

/** Users are the auth module's: the directory answers from the ids alone. */
const Directory = Layer.succeed(UserDirectory, {
  findByEmail: (email) =>
    Effect.succeed(Option.some({ id: email.split("@")[0] as UserId, user: publicUser(email.split("@")[0]!) })),
  findByIds: (ids) => Effect.succeed(ids.map(publicUser)),
  emailVerified: () => Effect.succeed(true)
})

/** A tenant with an owner, an admin and a developer, and a registered user who is not a member. */
const tenantWithMembers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* TenantRepo
  const tenantId = yield* makeId("tenant")
  const [owner, admin, developer, outsider] = yield* Effect.all(Array.from({ length: 4 }, () => makeId("user")))
  for (const id of [owner!, admin!, developer!, outsider!]) {
    yield* sql`
      INSERT INTO users (id, email, email_normalized, name, password_hash, created_at)
      VALUES (${id}, ${`${id}@example.com`}, ${`${id}@example.com`}, NULL, 'unused', ${joined})`
  }
  yield* repo.insert({ id: tenantId, name: "Race Ltda", taxId: "11222333000181", monthlyQuota: 100, createdAt: joined })
  for (const [userId, role] of [[owner!, "owner"], [admin!, "admin"], [developer!, "developer"]] as const) {
    yield* repo.addMember({ tenantId, userId, role, createdAt: joined })
  }
  return { tenantId, owner: owner!, admin: admin!, developer: developer!, outsider: outsider! }
})

type Tenant = Effect.Success<typeof tenantWithMembers>

for (const database of testDatabases) {
  const services = MemberService.layerNoDeps.pipe(
    Layer.provideMerge(Layer.mergeAll(HookedTenantRepo, Directory, Transaction.layer)),
    Layer.provideMerge(Layer.provideMerge(MigrationsLive, databaseLayer(database)))
  )

  layer(services, { timeout: 60_000, excludeTestServices: true })(
    `member changes under the lock (${database})`,
    (it) => {
      /**
       * Runs `ownerChange` on the admin until it has written, then starts `adminChange` (already past
       * the route's check, which saw an admin), then lets the owner's change commit. The admin's
       * change's outcome, and the roles afterwards.
       */
      const race = <A, E extends { readonly _tag: string }>(
        ownerChange: (members: MemberService["Service"], tenant: Tenant) => Effect.Effect<unknown, unknown>,
        adminChange: (members: MemberService["Service"], tenant: Tenant) => Effect.Effect<A, E>
      ) =>
        Effect.gen(function*() {
          const members = yield* MemberService
          const tenant = yield* tenantWithMembers
          const written = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const adminAtLock = yield* Deferred.make<void>()
          let locks = 0
          hooks.afterWrite = (userId) =>
            userId === tenant.admin
              ? Deferred.succeed(written, undefined).pipe(Effect.andThen(Deferred.await(release)))
              : Effect.void
          hooks.beforeLock = () => (++locks === 2 ? Deferred.succeed(adminAtLock, undefined) : Effect.void)

          const owner = yield* Effect.forkChild(ownerChange(members, tenant))
          yield* Deferred.await(written)
          const attempt = yield* Effect.forkChild(Effect.result(adminChange(members, tenant)))
          // On PostgreSQL the admin's transaction reaches the lock the owner's holds and waits there; the
          // embedded database runs one transaction at a time, so there it waits for the owner's to end.
          if (database === "postgres") yield* Deferred.await(adminAtLock)
          else yield* Effect.sleep("20 millis")
          expect(attempt.pollUnsafe(), "the admin's change waits for the owner's").toBeUndefined()
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(owner)
          const outcome = yield* Fiber.join(attempt)
          hooks.afterWrite = () => Effect.void
          hooks.beforeLock = () => Effect.void

          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ userId: string; role: Role }>`
          SELECT user_id, role FROM memberships WHERE tenant_id = ${tenant.tenantId}`
          return { tenant, outcome, roles: Object.fromEntries(rows.map((row) => [row.userId, row.role])) }
        })

      const demote = (members: MemberService["Service"], tenant: Tenant) =>
        members.changeRole(tenant.tenantId, tenant.owner, tenant.admin, "developer")
      const remove = (members: MemberService["Service"], tenant: Tenant) =>
        members.removeMember(tenant.tenantId, tenant.owner, tenant.admin)

      const refusal = (outcome: Result.Result<unknown, { readonly _tag: string }>) =>
        Result.isFailure(outcome) ? outcome.failure._tag : "succeeded"

      it.effect("an admin demoted meanwhile promotes no one: 403 forbidden, the developer stays a developer", () =>
        Effect.gen(function*() {
          const { tenant, outcome, roles } = yield* race(
            demote,
            (members, t) => members.changeRole(t.tenantId, t.admin, t.developer, "admin")
          )
          expect(refusal(outcome)).toBe("Forbidden")
          expect(roles).toEqual({
            [tenant.owner]: "owner",
            [tenant.admin]: "developer",
            [tenant.developer]: "developer"
          })
        }))

      it.effect("an admin removed meanwhile changes no role: 404 not_found", () =>
        Effect.gen(function*() {
          const { tenant, outcome, roles } = yield* race(
            remove,
            (members, t) => members.changeRole(t.tenantId, t.admin, t.developer, "admin")
          )
          expect(refusal(outcome)).toBe("NotFound")
          expect(roles).toEqual({ [tenant.owner]: "owner", [tenant.developer]: "developer" })
        }))

      it.effect("an admin demoted meanwhile removes no one: 403 forbidden", () =>
        Effect.gen(function*() {
          const removal = yield* race(
            demote,
            (members, t) => members.removeMember(t.tenantId, t.admin, t.developer)
          )
          expect(refusal(removal.outcome)).toBe("Forbidden")
          expect(removal.roles[removal.tenant.developer]).toBe("developer")
        }))

      it.effect("a demoted admin may still leave; an admin whose change commits first keeps it", () =>
        Effect.gen(function*() {
          const leaving = yield* race(demote, (members, t) => members.removeMember(t.tenantId, t.admin, t.admin))
          expect(refusal(leaving.outcome)).toBe("succeeded")
          expect(Object.keys(leaving.roles)).not.toContain(leaving.tenant.admin)

          // The other order: the admin's promotion holds the lock first, the owner's demotion waits.
          const members = yield* MemberService
          const tenant = yield* tenantWithMembers
          const promoted = yield* members.changeRole(tenant.tenantId, tenant.admin, tenant.developer, "admin")
          expect(promoted.role).toBe("admin")
          yield* demote(members, tenant)
          const again = yield* Effect.flip(
            members.changeRole(tenant.tenantId, tenant.admin, tenant.developer, "developer")
          )
          expect(again._tag).toBe("Forbidden")
        }))
    }
  )
}
