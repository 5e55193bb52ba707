/** The one rule of who may change a tenant's memberships (SPEC §5), for every role and change. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Role } from "../../src/domain/Principal.js"
import { checkMemberChange, type MemberChange, memberChangeRefusal } from "../../src/tenants/MemberRules.js"

const roles: ReadonlyArray<Role> = ["owner", "admin", "developer"]

/** Every change the API can ask for, with each role on either side. */
const changes: ReadonlyArray<MemberChange> = [
  ...roles.map((role): MemberChange => ({ _tag: "Add", role })),
  ...roles.flatMap((from) => roles.map((to): MemberChange => ({ _tag: "ChangeRole", from, to }))),
  ...roles.flatMap((role) => [true, false].map((self): MemberChange => ({ _tag: "Remove", role, self })))
]

/** The rule as SPEC §5 states it, written the other way round: the changes each role may make. */
const allowed = (actor: Role, change: MemberChange) => {
  if (change._tag === "Remove" && change.self) return true
  if (actor === "owner") return true
  if (actor === "developer") return false
  switch (change._tag) {
    case "Add":
      return change.role !== "owner"
    case "ChangeRole":
      return change.from !== "owner" && change.to !== "owner"
    case "Remove":
      return change.role !== "owner"
  }
}

describe("member change rule", () => {
  it("owners may make every change; admins every one that does not touch an owner; developers only leave", () => {
    for (const actor of roles) {
      for (const change of changes) {
        expect(memberChangeRefusal(actor, change) === undefined, `${actor} ${JSON.stringify(change)}`).toBe(
          allowed(actor, change)
        )
      }
    }
  })

  it("the refusals say why", () => {
    expect(memberChangeRefusal("admin", { _tag: "Add", role: "owner" })).toBe("Only an owner can add another owner.")
    expect(memberChangeRefusal("admin", { _tag: "ChangeRole", from: "owner", to: "admin" })).toBe(
      "Only an owner can grant or take away the owner role."
    )
    expect(memberChangeRefusal("admin", { _tag: "Remove", role: "owner", self: false })).toBe(
      "Only an owner can remove an owner."
    )
    expect(memberChangeRefusal("developer", { _tag: "Remove", role: "developer", self: false })).toBe(
      "A developer may remove only themselves."
    )
    // The case the route's check alone missed: a caller demoted to developer promoting someone.
    expect(memberChangeRefusal("developer", { _tag: "ChangeRole", from: "developer", to: "admin" })).toBe(
      "A developer cannot change the tenant's members."
    )
  })

  it.effect("checkMemberChange fails with 403 forbidden carrying the reason, and succeeds when allowed", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(checkMemberChange("developer", { _tag: "Add", role: "developer" }))
      expect(refused._tag).toBe("Forbidden")
      expect(refused.code).toBe("forbidden")
      expect(refused.message).toBe("A developer cannot change the tenant's members.")
      yield* checkMemberChange("admin", { _tag: "ChangeRole", from: "developer", to: "admin" })
    }))
})
