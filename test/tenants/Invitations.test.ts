/**
 * Invitations over HTTP (SPEC §5), managed by owners and admins and accepted signed in: who may
 * invite which role, listing with its filter, resend and revoke, expiry, declining, and the rules
 * checked under the tenant's lock at acceptance (single use, the inviter's right at that moment).
 * Accepting by the mailed link is tested with a real mailbox in InvitationMail.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { addMember, expectError, field, registerUser } from "../support/accounts.js"
import { registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const UNKNOWN_INVITATION_ID = `inv_${"0".repeat(26)}`
const INVITATION_FIELDS = [
  "accepted_at",
  "created_at",
  "email",
  "expires_at",
  "id",
  "invited_by",
  "locale",
  "object",
  "revoked_at",
  "role",
  "status",
  "tenant"
]

const invitationsUrl = (tenantId: string) => `/v1/tenants/${tenantId}/invitations`
const invitationUrl = (tenantId: string, id: string, action: "resend" | "revoke") =>
  `${invitationsUrl(tenantId)}/${id}/${action}`

const invite = (session: string, tenantId: string, email: string, role = "developer") =>
  rawRequest("POST", invitationsUrl(tenantId), { token: session, body: { email, role } })

const acceptMine = (session: string, id: string) =>
  rawRequest("POST", `/v1/me/invitations/${id}/accept`, { token: session })

const idOf = (response: { readonly json: unknown }) => String(field(response.json, "id"))

const rolesOf = (session: string, tenantId: string) =>
  Effect.gen(function*() {
    const page = yield* (yield* client(session)).tenants.listMembers({ params: { tenantId }, query: { limit: 100 } })
    return new Map(page.data.map((member) => [member.user.email, member.role]))
  })

for (const database of testDatabases) {
  const app = makeTestApp(database, { loginRateLimit: { perMinute: 100_000 } })

  layer(app, { timeout: 120_000, excludeTestServices: true })(`invitations (${database})`, (it) => {
    it.effect("an owner invites: 201 with the invitation, no token anywhere; the person joins only by accepting", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("inviter")
        const user = yield* registerUser("invitee")
        const response = yield* rawRequest("POST", invitationsUrl(owner.tenantId), {
          token: owner.session,
          body: { email: user.email.toUpperCase(), role: "admin", locale: "en" }
        })
        expect(response.status, response.text).toBe(201)
        expect(Object.keys(response.json ?? {}).sort()).toEqual(INVITATION_FIELDS)
        expect(response.json).toMatchObject({
          object: "invitation",
          tenant: { id: owner.tenantId, name: "inviter Ltda" },
          role: "admin",
          status: "pending",
          locale: "en",
          invited_by: { id: owner.userId, name: "inviter" },
          accepted_at: null,
          revoked_at: null
        })
        expect(idOf(response)).toMatch(/^inv_[0-9a-hjkmnp-tv-z]{26}$/)
        const lifetime = Date.parse(String(field(response.json, "expires_at"))) -
          Date.parse(String(field(response.json, "created_at")))
        expect(lifetime).toBe(Duration.toMillis(Duration.days(7)))
        expect(response.text).not.toContain("etd_inv_")
        expect((yield* rolesOf(owner.session, owner.tenantId)).has(user.email)).toBe(false)

        const mine = yield* rawRequest("GET", "/v1/me/invitations", { token: user.session })
        expect(mine.status, mine.text).toBe(200)
        expect(mine.text).not.toContain("etd_inv_")
        expect(field(mine.json, "data")).toMatchObject([{ id: idOf(response), role: "admin" }])

        const accepted = yield* acceptMine(user.session, idOf(response))
        expect(accepted.status, accepted.text).toBe(200)
        expect(accepted.json).toMatchObject({
          object: "invitation_acceptance",
          role: "admin",
          tenant: { id: owner.tenantId },
          user: { id: user.userId },
          token: null
        })
        expect((yield* rolesOf(owner.session, owner.tenantId)).get(user.email)).toBe("admin")
        const listed = yield* (yield* client(owner.session)).invitations.list({
          params: { tenantId: owner.tenantId },
          query: { status: "accepted" }
        })
        expect(listed.data.map((invitation) => [invitation.id, invitation.status])).toEqual([
          [idOf(response), "accepted"]
        ])
        expect(listed.data[0]!.accepted_at).not.toBeNull()
        // Used: it is no longer the person's to accept.
        expectError(yield* acceptMine(user.session, idOf(response)), 409, "invalid_state")
        expect(field((yield* rawRequest("GET", "/v1/me/invitations", { token: user.session })).json, "data")).toEqual(
          []
        )
      }))

    it.effect("who may invite: a developer nobody (403), an admin no owner (403), an owner anyone; any member lists", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        expectError(yield* invite(developer.session, owner.tenantId, "someone@example.com"), 403, "forbidden")
        expectError(yield* invite(admin.session, owner.tenantId, "boss@example.com", "owner"), 403, "forbidden")
        expect((yield* invite(admin.session, owner.tenantId, "helper@example.com", "admin")).status).toBe(201)
        expect((yield* invite(owner.session, owner.tenantId, "boss@example.com", "owner")).status).toBe(201)
        for (const session of [owner.session, admin.session, developer.session]) {
          const list = yield* rawRequest("GET", invitationsUrl(owner.tenantId), { token: session })
          expect(list.status, list.text).toBe(200)
          expect((field(list.json, "data") as ReadonlyArray<unknown>).length).toBe(2)
        }
        // Not a member: the tenant is not there.
        const stranger = yield* registerOwner("stranger")
        expectError(yield* invite(stranger.session, owner.tenantId, "x@example.com"), 404, "not_found")
        expectError(
          yield* rawRequest("GET", invitationsUrl(owner.tenantId), { token: stranger.session }),
          404,
          "not_found"
        )
        expectError(yield* rawRequest("GET", invitationsUrl(owner.tenantId)), 401, "missing_credentials")
      }))

    it.effect("a second invitation to a pending address is 409 conflict; the first one is resent instead", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser()
        const first = yield* invite(owner.session, owner.tenantId, user.email)
        expectError(yield* invite(owner.session, owner.tenantId, user.email.toUpperCase(), "admin"), 409, "conflict")
        const resent = yield* rawRequest("POST", invitationUrl(owner.tenantId, idOf(first), "resend"), {
          token: owner.session
        })
        expect(resent.status, resent.text).toBe(200)
        expect(idOf(resent)).toBe(idOf(first))
        expect(Date.parse(String(field(resent.json, "expires_at")))).toBeGreaterThanOrEqual(
          Date.parse(String(field(first.json, "expires_at")))
        )
        // Another tenant may invite the same address.
        const other = yield* registerOwner("other")
        expect((yield* invite(other.session, other.tenantId, user.email)).status).toBe(201)
        const mine = yield* (yield* client(user.session)).invitationAcceptance.listMine({ query: {} })
        expect(mine.data.map((invitation) => invitation.tenant.id).sort()).toEqual(
          [owner.tenantId, other.tenantId].sort()
        )
      }))

    it.effect("revoke: the invitation ends at once; revoking or resending it again is 409 invalid_state", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser()
        const created = yield* invite(owner.session, owner.tenantId, user.email)
        const revoked = yield* rawRequest("POST", invitationUrl(owner.tenantId, idOf(created), "revoke"), {
          token: owner.session
        })
        expect(revoked.status, revoked.text).toBe(200)
        expect(revoked.json).toMatchObject({ status: "revoked" })
        expect(field(revoked.json, "revoked_at")).not.toBeNull()
        expectError(yield* acceptMine(user.session, idOf(created)), 409, "invalid_state")
        for (const action of ["revoke", "resend"] as const) {
          expectError(
            yield* rawRequest("POST", invitationUrl(owner.tenantId, idOf(created), action), { token: owner.session }),
            409,
            "invalid_state"
          )
        }
        const api = yield* client(owner.session)
        const pending = yield* api.invitations.list({ params: { tenantId: owner.tenantId }, query: {} })
        expect(pending.data).toEqual([])
        const listed = yield* api.invitations.list({
          params: { tenantId: owner.tenantId },
          query: { status: "revoked" }
        })
        expect(listed.data.map((invitation) => invitation.id)).toEqual([idOf(created)])
        // A revoked invitation no longer blocks a new one.
        expect((yield* invite(owner.session, owner.tenantId, user.email, "admin")).status).toBe(201)
      }))

    it.effect("an admin neither resends nor revokes an invitation to the owner role (403); unknown ids are 404", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        const toOwner = yield* invite(owner.session, owner.tenantId, "future-owner@example.com", "owner")
        for (const action of ["resend", "revoke"] as const) {
          const url = invitationUrl(owner.tenantId, idOf(toOwner), action)
          expectError(yield* rawRequest("POST", url, { token: admin.session }), 403, "forbidden")
          expectError(yield* rawRequest("POST", url, { token: developer.session }), 403, "forbidden")
          for (const id of [UNKNOWN_INVITATION_ID, "not-an-id"]) {
            expectError(
              yield* rawRequest("POST", invitationUrl(owner.tenantId, id, action), { token: owner.session }),
              404,
              "not_found"
            )
          }
        }
        // Another tenant's invitation is not there.
        const other = yield* registerOwner("other")
        expectError(
          yield* rawRequest("POST", invitationUrl(other.tenantId, idOf(toOwner), "revoke"), { token: other.session }),
          404,
          "not_found"
        )
        const still = yield* (yield* client(owner.session)).invitations.list({
          params: { tenantId: owner.tenantId },
          query: {}
        })
        expect(still.data.map((invitation) => invitation.status)).toEqual(["pending"])
      }))

    it.effect("invitations list newest first, a page at a time; an unknown status is 400", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) {
          ids.push(idOf(yield* invite(owner.session, owner.tenantId, `page-${i}@example.com`)))
        }
        const api = yield* client(owner.session)
        const first = yield* api.invitations.list({ params: { tenantId: owner.tenantId }, query: { limit: 3 } })
        expect(first.data.map((invitation) => invitation.id)).toEqual(ids.slice(2).reverse())
        expect(first.has_more).toBe(true)
        const second = yield* api.invitations.list({
          params: { tenantId: owner.tenantId },
          query: { limit: 3, starting_after: first.next_cursor! }
        })
        expect(second.data.map((invitation) => invitation.id)).toEqual(ids.slice(0, 2).reverse())
        expect(second.has_more).toBe(false)
        expectError(
          yield* rawRequest("GET", `${invitationsUrl(owner.tenantId)}?status=maybe`, { token: owner.session }),
          400,
          "invalid_request"
        )
      }))

    it.effect("a person sees and accepts only invitations to their own address (404 otherwise), and may decline", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const ana = yield* registerUser("ana")
        const bruno = yield* registerUser("bruno")
        const forAna = yield* invite(owner.session, owner.tenantId, ana.email)
        expect(field((yield* rawRequest("GET", "/v1/me/invitations", { token: bruno.session })).json, "data")).toEqual(
          []
        )
        expectError(yield* acceptMine(bruno.session, idOf(forAna)), 404, "not_found")
        expectError(yield* acceptMine(bruno.session, UNKNOWN_INVITATION_ID), 404, "not_found")
        expectError(
          yield* rawRequest("POST", `/v1/me/invitations/${idOf(forAna)}/decline`, { token: bruno.session }),
          404,
          "not_found"
        )
        const declined = yield* rawRequest("POST", `/v1/me/invitations/${idOf(forAna)}/decline`, {
          token: ana.session
        })
        expect(declined.status, declined.text).toBe(200)
        expect(declined.json).toMatchObject({ status: "declined" })
        expectError(yield* acceptMine(ana.session, idOf(forAna)), 409, "invalid_state")
        expect((yield* rolesOf(owner.session, owner.tenantId)).has(ana.email)).toBe(false)
        expectError(yield* rawRequest("GET", "/v1/me/invitations"), 401, "missing_credentials")
      }))

    it.effect("an inviter demoted or removed before the acceptance no longer vouches: 409 invalid_state until resent", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const demotedFor = yield* registerUser("demoted-for")
        const removedFor = yield* registerUser("removed-for")
        const byDemoted = yield* invite(admin.session, owner.tenantId, demotedFor.email, "admin")
        const ownerApi = yield* client(owner.session)
        yield* ownerApi.tenants.changeMemberRole({
          params: { tenantId: owner.tenantId, userId: admin.userId },
          payload: { role: "developer" }
        })
        expectError(yield* acceptMine(demotedFor.session, idOf(byDemoted)), 409, "invalid_state")
        expect((yield* rolesOf(owner.session, owner.tenantId)).has(demotedFor.email)).toBe(false)

        const other = yield* addMember(owner, "admin", "other-admin")
        const byRemoved = yield* invite(other.session, owner.tenantId, removedFor.email)
        yield* ownerApi.tenants.removeMember({ params: { tenantId: owner.tenantId, userId: other.userId } })
        expectError(yield* acceptMine(removedFor.session, idOf(byRemoved)), 409, "invalid_state")

        // The owner resends: now the owner vouches, and the invitation is good again.
        yield* ownerApi.invitations.resend({ params: { tenantId: owner.tenantId, invitationId: idOf(byDemoted) } })
        expect((yield* acceptMine(demotedFor.session, idOf(byDemoted))).status).toBe(200)
        expect((yield* rolesOf(owner.session, owner.tenantId)).get(demotedFor.email)).toBe("admin")
      }))

    it.effect("accepting is single use: concurrent acceptances join once, the rest are refused", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser()
        const created = yield* invite(owner.session, owner.tenantId, user.email, "admin")
        const responses = yield* Effect.all(
          Array.from({ length: 5 }, () => acceptMine(user.session, idOf(created))),
          { concurrency: "unbounded" }
        )
        expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409, 409, 409])
        for (const response of responses.filter((r) => r.status === 409)) expectError(response, 409, "invalid_state")
        expect((yield* rolesOf(owner.session, owner.tenantId)).get(user.email)).toBe("admin")
      }))

    it.effect("a revoked invitation makes way for another; once a member, the address cannot be invited (409)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser()
        const first = yield* invite(owner.session, owner.tenantId, user.email, "developer")
        yield* (yield* client(owner.session)).invitations.revoke({
          params: { tenantId: owner.tenantId, invitationId: idOf(first) }
        })
        const second = yield* invite(owner.session, owner.tenantId, user.email, "admin")
        expect((yield* acceptMine(user.session, idOf(second))).status).toBe(200)
        expectError(yield* invite(owner.session, owner.tenantId, user.email), 409, "conflict")
        expect((yield* rolesOf(owner.session, owner.tenantId)).get(user.email)).toBe("admin")
      }))
  })

  const shortLived = makeTestApp(database, {
    loginRateLimit: { perMinute: 100_000 },
    invitationTtl: Duration.millis(800)
  })

  layer(shortLived, { timeout: 60_000, excludeTestServices: true })(`invitation expiry (${database})`, (it) => {
    it.effect("an invitation expires (INVITATION_TTL): not acceptable, listed as expired; resending or inviting again renews", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const ana = yield* registerUser("ana")
        const bruno = yield* registerUser("bruno")
        const forAna = yield* invite(owner.session, owner.tenantId, ana.email)
        const forBruno = yield* invite(owner.session, owner.tenantId, bruno.email)
        yield* Effect.sleep(Duration.millis(1_000))

        expectError(yield* acceptMine(ana.session, idOf(forAna)), 409, "invalid_state")
        expect(field((yield* rawRequest("GET", "/v1/me/invitations", { token: ana.session })).json, "data")).toEqual([])
        const api = yield* client(owner.session)
        expect((yield* api.invitations.list({ params: { tenantId: owner.tenantId }, query: {} })).data).toEqual([])
        const expired = yield* api.invitations.list({
          params: { tenantId: owner.tenantId },
          query: { status: "expired" }
        })
        expect(expired.data.map((invitation) => invitation.status)).toEqual(["expired", "expired"])

        // Resent: a fresh expiry, acceptable again.
        yield* api.invitations.resend({ params: { tenantId: owner.tenantId, invitationId: idOf(forAna) } })
        expect((yield* acceptMine(ana.session, idOf(forAna))).status).toBe(200)
        // Invited again: the lapsed one makes way (stays listed as expired), the new one is acceptable.
        const again = yield* invite(owner.session, owner.tenantId, bruno.email)
        expect(again.status, again.text).toBe(201)
        expect((yield* acceptMine(bruno.session, idOf(again))).status).toBe(200)
        expectError(yield* acceptMine(bruno.session, idOf(forBruno)), 409, "invalid_state")
        const after = yield* api.invitations.list({
          params: { tenantId: owner.tenantId },
          query: { status: "expired" }
        })
        expect(after.data.map((invitation) => invitation.id)).toEqual([idOf(forBruno)])
      }))
  })
}
