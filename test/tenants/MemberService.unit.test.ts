/**
 * MemberService alone: memberships from a mocked TenantRepo, users from a mocked UserDirectory
 * (Layer.mock). The HTTP suite (Tenants.test.ts) covers the contract on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Transaction } from "../../src/db/Repository.js"
import { asId } from "../../src/domain/Ids.js"
import { PublicUser } from "../../src/domain/User.js"
import { MemberService } from "../../src/tenants/MemberService.js"
import { TenantRepo } from "../../src/tenants/TenantRepo.js"
import { UserDirectory } from "../../src/tenants/UserDirectory.js"

type Mock<S extends { readonly Service: object }> = Layer.PartialEffectful<S["Service"]>

const serviceWith = (repo: Mock<typeof TenantRepo>, directory: Mock<typeof UserDirectory>) =>
  MemberService.layerNoDeps.pipe(
    Layer.provide([Layer.mock(TenantRepo)(repo), Layer.mock(UserDirectory)(directory), Transaction.layerTest])
  )

const user = (id: string) =>
  new PublicUser({
    id,
    email: `${id}@example.com`,
    name: null,
    email_verified: true,
    created_at: new Date("2026-01-01T00:00:00Z")
  })

describe("MemberService (neighbours mocked)", () => {
  it.effect("lists a page of memberships in their order with the directory's users, asking only for that page", () => {
    const asked: Array<ReadonlyArray<string>> = []
    const joined = (day: number) => new Date(Date.UTC(2026, 1, day))
    const layer = serviceWith(
      {
        // limit + 1 rows: the third only says that more exist.
        listMembers: (_tenantId, limit) =>
          Effect.succeed([
            { userId: asId("user", "usr_a"), role: "owner" as const, createdAt: joined(1) },
            { userId: asId("user", "usr_b"), role: "developer" as const, createdAt: joined(2) },
            { userId: asId("user", "usr_c"), role: "admin" as const, createdAt: joined(3) }
          ].slice(0, limit + 1))
      },
      {
        findByIds: (ids) => Effect.sync(() => asked.push(ids)).pipe(Effect.as([...ids].reverse().map(user)))
      }
    )
    return Effect.gen(function*() {
      const members = yield* MemberService
      const page = yield* members.listMembers(asId("tenant", "ten_1"), { limit: 2 })
      expect(page.data.map((member) => [member.user.id, member.role, member.created_at])).toEqual([
        ["usr_a", "owner", joined(1)],
        ["usr_b", "developer", joined(2)]
      ])
      expect(page.has_more).toBe(true)
      expect(page.next_cursor).toBe("usr_b")
      expect(asked).toEqual([["usr_a", "usr_b"]])
    }).pipe(Effect.provide(layer))
  })
})
