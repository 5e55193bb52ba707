/**
 * Changing a member's role and removing a member over HTTP (SPEC §5): who may do what, the last
 * owner, unknown and malformed user ids, access ending at once, and owners acting on each other
 * at the same moment.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Role } from "../../src/domain/Principal.js"
import { addMember, expectError, registerUser } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const UNKNOWN_USER_ID = `usr_${"0".repeat(26)}`

const memberUrl = (tenantId: string, userId: string) => `/v1/tenants/${tenantId}/members/${userId}`

type Owner = Effect.Success<ReturnType<typeof registerOwner>>

const changeRole = (session: string, tenantId: string, userId: string, role: Role) =>
  rawRequest("PATCH", memberUrl(tenantId, userId), { token: session, body: { role } })

const remove = (session: string, tenantId: string, userId: string) =>
  rawRequest("DELETE", memberUrl(tenantId, userId), { token: session })

/** Every member's role, by user id. */
const rolesOf = (owner: Owner) =>
  Effect.gen(function*() {
    const api = yield* client(owner.session)
    const page = yield* api.tenants.listMembers({ params: { tenantId: owner.tenantId }, query: { limit: 100 } })
    return new Map(page.data.map((member) => [member.user.id, member.role]))
  })

/** How many owners the tenant has, read with the first of `sessions` that is still a member's. */
const ownersSeenBy = (tenantId: string, sessions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (const session of sessions) {
      const response = yield* rawRequest("GET", `/v1/tenants/${tenantId}/members?limit=100`, { token: session })
      if (response.status !== 200) continue
      const members: ReadonlyArray<{ readonly role: Role }> = response.json?.["data"] ?? []
      return members.filter((member) => member.role === "owner").length
    }
    return 0
  })

/** A tenant with two owners (its creator and a co-owner), both logged in. */
const twoOwners = Effect.gen(function*() {
  const owner = yield* registerOwner("first")
  const second = yield* addMember(owner, "owner", "second")
  return { owner, second }
})

for (const database of testDatabases) {
  const app = makeTestApp(database, { loginRateLimit: { perMinute: 100_000 } })

  layer(app, { timeout: 120_000, excludeTestServices: true })(`member roles and removal (${database})`, (it) => {
    it.effect("an owner changes a role: 200 with the member, and the new role applies to the next request", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const member = yield* addMember(owner, "developer", "promoted")
        const candidate = yield* registerUser("candidate")
        const addCandidate = rawRequest("POST", `/v1/tenants/${owner.tenantId}/members`, {
          token: member.session,
          body: { email: candidate.email, role: "developer" }
        })
        expectError(yield* addCandidate, 403, "forbidden")

        const response = yield* changeRole(owner.session, owner.tenantId, member.userId, "admin")
        expect(response.status, response.text).toBe(200)
        expect(response.json).toMatchObject({
          object: "member",
          role: "admin",
          user: { id: member.userId, email: member.email }
        })
        expect(Object.keys(response.json ?? {}).sort()).toEqual(["created_at", "object", "role", "user"])
        // Now an admin: the same request is allowed.
        expect((yield* addCandidate).status).toBe(201)

        // Through the typed client, and back down.
        const api = yield* client(owner.session)
        const demoted = yield* api.tenants.changeMemberRole({
          params: { tenantId: owner.tenantId, userId: member.userId },
          payload: { role: "developer" }
        })
        expect(demoted.role).toBe("developer")
        expect((yield* rolesOf(owner)).get(member.userId)).toBe("developer")
        // The same role again changes nothing and answers the member.
        const same = yield* changeRole(owner.session, owner.tenantId, member.userId, "developer")
        expect(same.status, same.text).toBe(200)
        expect(same.json).toMatchObject({ role: "developer" })
      }))

    it.effect("a developer cannot change roles; an admin changes admins and developers but never owner (403 forbidden)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        const other = yield* addMember(owner, "developer", "other")

        expectError(yield* changeRole(developer.session, owner.tenantId, other.userId, "admin"), 403, "forbidden")
        expectError(yield* changeRole(developer.session, owner.tenantId, developer.userId, "admin"), 403, "forbidden")

        // An admin may not grant owner, nor take it away.
        expectError(yield* changeRole(admin.session, owner.tenantId, other.userId, "owner"), 403, "forbidden")
        expectError(yield* changeRole(admin.session, owner.tenantId, admin.userId, "owner"), 403, "forbidden")
        expectError(yield* changeRole(admin.session, owner.tenantId, owner.userId, "admin"), 403, "forbidden")
        const adminApi = yield* client(admin.session)
        const typed = yield* Effect.flip(adminApi.tenants.changeMemberRole({
          params: { tenantId: owner.tenantId, userId: owner.userId },
          payload: { role: "developer" }
        }))
        expect(typed._tag).toBe("Forbidden")
        expect(Object.fromEntries(yield* rolesOf(owner))).toEqual({
          [owner.userId]: "owner",
          [admin.userId]: "admin",
          [developer.userId]: "developer",
          [other.userId]: "developer"
        })

        // What an admin may do.
        expect((yield* changeRole(admin.session, owner.tenantId, other.userId, "admin")).status).toBe(200)
        expect((yield* changeRole(admin.session, owner.tenantId, other.userId, "developer")).status).toBe(200)
        expect((yield* rolesOf(owner)).get(other.userId)).toBe("developer")

        // An invalid role is a 400.
        const invalid = yield* rawRequest("PATCH", memberUrl(owner.tenantId, other.userId), {
          token: owner.session,
          body: { role: "superuser" }
        })
        expectError(invalid, 400, "invalid_request")
      }))

    it.effect("only an owner grants owner; the last owner cannot be demoted (409 invalid_state)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")

        const last = yield* changeRole(owner.session, owner.tenantId, owner.userId, "admin")
        expectError(last, 409, "invalid_state")
        const api = yield* client(owner.session)
        const typed = yield* Effect.flip(api.tenants.changeMemberRole({
          params: { tenantId: owner.tenantId, userId: owner.userId },
          payload: { role: "developer" }
        }))
        expect(typed._tag).toBe("InvalidState")
        expect((yield* rolesOf(owner)).get(owner.userId)).toBe("owner")

        // A second owner first; then the first may step down, and the second is the last one.
        expect((yield* changeRole(owner.session, owner.tenantId, admin.userId, "owner")).status).toBe(200)
        expect((yield* changeRole(owner.session, owner.tenantId, owner.userId, "admin")).status).toBe(200)
        expectError(yield* changeRole(admin.session, owner.tenantId, admin.userId, "developer"), 409, "invalid_state")
        expect(Object.fromEntries(yield* rolesOf(owner))).toEqual({ [owner.userId]: "admin", [admin.userId]: "owner" })
      }))

    it.effect("unknown, malformed and non-member user ids are 404 not_found on PATCH and DELETE", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const stranger = yield* registerUser("stranger")
        const elsewhere = yield* registerOwner("elsewhere")
        const userIds = [UNKNOWN_USER_ID, "acme", "usr_123", stranger.userId, elsewhere.userId, `ten_${"0".repeat(26)}`]
        for (const userId of userIds) {
          expectError(yield* changeRole(owner.session, owner.tenantId, userId, "developer"), 404, "not_found")
          expectError(yield* remove(owner.session, owner.tenantId, userId), 404, "not_found")
        }
        const api = yield* client(owner.session)
        const typed = yield* Effect.flip(
          api.tenants.removeMember({ params: { tenantId: owner.tenantId, userId: UNKNOWN_USER_ID } })
        )
        expect(typed._tag).toBe("NotFound")
        // The other tenant's owner is untouched.
        expect((yield* rolesOf(elsewhere)).get(elsewhere.userId)).toBe("owner")
      }))

    it.effect("removal: 204, and the removed user's next request to the tenant is 404 not_found", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        const tenantUrl = `/v1/tenants/${owner.tenantId}`
        expect((yield* rawRequest("GET", tenantUrl, { token: developer.session })).status).toBe(200)

        const response = yield* remove(admin.session, owner.tenantId, developer.userId)
        expect(response.status, response.text).toBe(204)
        expect(response.text).toBe("")
        expectError(yield* rawRequest("GET", tenantUrl, { token: developer.session }), 404, "not_found")
        expectError(yield* rawRequest("GET", `${tenantUrl}/members`, { token: developer.session }), 404, "not_found")
        const mine = yield* (yield* client(developer.session)).auth.myTenants({ query: { limit: 20 } })
        expect(mine.data).toEqual([])
        // Gone: a second removal is a 404; inviting the user again works once they accept.
        expectError(yield* remove(admin.session, owner.tenantId, developer.userId), 404, "not_found")
        expect([...(yield* rolesOf(owner)).keys()].sort()).toEqual([owner.userId, admin.userId].sort())
        const readded = yield* rawRequest("POST", `${tenantUrl}/members`, {
          token: owner.session,
          body: { email: developer.email, role: "developer" }
        })
        expect(readded.status, readded.text).toBe(201)
        yield* (yield* client(developer.session)).invitationAcceptance.acceptMine({
          params: { invitationId: String(readded.json?.["id"]) }
        })
        expect((yield* rawRequest("GET", tenantUrl, { token: developer.session })).status).toBe(200)

        // Through the typed client: an owner removes an admin, whose access ends too.
        yield* (yield* client(owner.session)).tenants.removeMember({
          params: { tenantId: owner.tenantId, userId: admin.userId }
        })
        expectError(yield* rawRequest("GET", tenantUrl, { token: admin.session }), 404, "not_found")
      }))

    it.effect("every member may leave; a developer removes no one else, an admin no owner (403 forbidden)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        const other = yield* addMember(owner, "developer", "other")

        expectError(yield* remove(developer.session, owner.tenantId, other.userId), 403, "forbidden")
        expectError(yield* remove(developer.session, owner.tenantId, owner.userId), 403, "forbidden")
        expectError(yield* remove(admin.session, owner.tenantId, owner.userId), 403, "forbidden")
        expect((yield* rolesOf(owner)).size).toBe(4)

        expect((yield* remove(developer.session, owner.tenantId, developer.userId)).status).toBe(204)
        expect((yield* remove(admin.session, owner.tenantId, admin.userId)).status).toBe(204)
        expect([...(yield* rolesOf(owner)).keys()].sort()).toEqual([owner.userId, other.userId].sort())
      }))

    it.effect("the last owner can be neither removed nor leave (409 invalid_state); one of two owners can", () =>
      Effect.gen(function*() {
        const { owner, second } = yield* twoOwners
        expect((yield* remove(owner.session, owner.tenantId, second.userId)).status).toBe(204)
        expectError(yield* remove(owner.session, owner.tenantId, owner.userId), 409, "invalid_state")
        expect(Object.fromEntries(yield* rolesOf(owner))).toEqual({ [owner.userId]: "owner" })

        // With a co-owner again, the first one may leave; the co-owner is then the last one.
        const third = yield* addMember(owner, "owner", "third")
        expect((yield* remove(owner.session, owner.tenantId, owner.userId)).status).toBe(204)
        expectError(yield* remove(third.session, third.tenantId, third.userId), 409, "invalid_state")
        expectError(
          yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: owner.session }),
          404,
          "not_found"
        )
      }))

    it.effect("two owners demoting or removing each other at once never leave the tenant without an owner", () =>
      Effect.gen(function*() {
        const rounds = yield* Effect.all(Array.from({ length: 4 }, () => twoOwners), { concurrency: "unbounded" })
        const outcomes = yield* Effect.all(
          rounds.flatMap(({ owner, second }, i) => {
            const tenantId = owner.tenantId
            // Demote each other, remove each other, or both leave: the same shape of race.
            switch (i % 3) {
              case 0:
                return [
                  changeRole(owner.session, tenantId, second.userId, "admin"),
                  changeRole(second.session, tenantId, owner.userId, "admin")
                ]
              case 1:
                return [remove(owner.session, tenantId, second.userId), remove(second.session, tenantId, owner.userId)]
              default:
                return [remove(owner.session, tenantId, owner.userId), remove(second.session, tenantId, second.userId)]
            }
          }),
          { concurrency: "unbounded" }
        )
        for (const [i, { owner }] of rounds.entries()) {
          const statuses = [outcomes[2 * i]!.status, outcomes[2 * i + 1]!.status].sort()
          // The loser is no longer an owner (403), no longer a member (404), or the last owner's exit (409).
          expect(statuses, `round ${i}: ${outcomes[2 * i]!.text} ${outcomes[2 * i + 1]!.text}`).toEqual(
            i % 3 === 0 ? [200, 403] : i % 3 === 1 ? [204, 404] : [204, 409]
          )
          const remaining = yield* ownersSeenBy(owner.tenantId, [owner.session, rounds[i]!.second.session])
          expect(remaining, `round ${i}`).toBe(1)
        }
      }))

    it.effect("API keys get 401 invalid_session on the member endpoints; non-members get 404", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const member = yield* addMember(owner, "developer")
        const key = yield* createKey(owner, "live")
        const stranger = yield* registerOwner("stranger")
        expectError(yield* changeRole(key.token, owner.tenantId, member.userId, "admin"), 401, "invalid_session")
        expectError(yield* remove(key.token, owner.tenantId, member.userId), 401, "invalid_session")
        expectError(yield* changeRole(stranger.session, owner.tenantId, member.userId, "admin"), 404, "not_found")
        expectError(yield* remove(stranger.session, owner.tenantId, member.userId), 404, "not_found")
        expectError(yield* remove(owner.session, `ten_${"0".repeat(26)}`, member.userId), 404, "not_found")
        expect((yield* rolesOf(owner)).get(member.userId)).toBe("developer")
      }))
  })
}
