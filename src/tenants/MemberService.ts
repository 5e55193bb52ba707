/**
 * A tenant's members: adding a registered user with a role, and listing them. Memberships are the
 * tenants module's; the users behind them come from the `UserDirectory` the auth module provides.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Forbidden, NotFound } from "../domain/Errors.js"
import { type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import type { Role } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { Member } from "./Api.js"
import { TenantRepo } from "./TenantRepo.js"
import { UserDirectory } from "./UserDirectory.js"

export class MemberService extends Context.Service<MemberService>()("etd/MemberService", {
  make: Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const directory = yield* UserDirectory

    const addMember = Effect.fn("MemberService.addMember")(function*(
      tenantId: string,
      actorRole: Role,
      input: { email: string; role: Role }
    ) {
      if (input.role === "owner" && actorRole !== "owner") {
        return yield* new Forbidden({ message: "Only an owner can add another owner." })
      }
      const user = yield* directory.findByEmail(input.email)
      if (Option.isNone(user)) {
        return yield* new NotFound({ message: "No registered user has this email. Ask them to register first." })
      }
      const createdAt = yield* now
      yield* tenants.addMember({ tenantId, userId: user.value.id, role: input.role, createdAt })
      return new Member({ user: user.value, role: input.role, created_at: createdAt })
    })

    const listMembers = Effect.fn("MemberService.listMembers")(function*(tenantId: string, page: PageParams) {
      const memberships = yield* tenants.listMembers(tenantId, pageSize(page.limit), page.starting_after)
      const result = toPage(memberships.map((membership) => ({ ...membership, id: membership.userId })), pageSize(page.limit))
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

    return { addMember, listMembers } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs a `UserDirectory`: the auth module provides it (src/auth/Directory.ts). */
  static readonly layer = this.layerNoDeps.pipe(Layer.provide(TenantRepo.layer))
}
