/**
 * Tenants and membership over HTTP (SPEC §5): who may read a tenant, what it shows, how owners and
 * admins change it (name, Simples Nacional option) and how they invite members.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig, AppConfigTest } from "../../src/Config.js"
import type { Role } from "../../src/domain/Principal.js"
import { addMember, expectError, field, registerUser } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

// Not the default of 100, so the test shows the limit comes from the configuration.
const MONTHLY_QUOTA = 250
const UNKNOWN_TENANT_ID = `ten_${"0".repeat(26)}`
const USER_FIELDS = ["created_at", "email", "email_verified", "id", "name", "object"]

const tenantUrl = (tenantId: string) => `/v1/tenants/${tenantId}`
const membersUrl = (tenantId: string) => `/v1/tenants/${tenantId}/members`

const currentPeriod = () => new Date().toISOString().slice(0, 7)

for (const database of testDatabases) {
  const app = makeTestApp(database, { defaultMonthlyQuota: MONTHLY_QUOTA, loginRateLimit: { perMinute: 10_000 } })

  layer(app, { timeout: 60_000, excludeTestServices: true })(`tenants and members (${database})`, (it) => {
    it.effect("a member's session reads the tenant: fields, status, plan and this month's quota", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("acme")
        const before = Date.now()
        const response = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        expect(response.status, response.text).toBe(200)
        expect(Object.keys(response.json ?? {}).sort()).toEqual([
          "created_at",
          "id",
          "name",
          "note_mail",
          "object",
          "plan",
          "quota",
          "registration",
          "simples_nacional",
          "status",
          "tax_id",
          "tax_id_status",
          "verified"
        ])
        expect(response.json).toMatchObject({
          id: owner.tenantId,
          object: "tenant",
          name: "acme Ltda",
          verified: false,
          status: "active",
          plan: "free",
          quota: { period: currentPeriod(), limit: MONTHLY_QUOTA, used: 0 },
          simples_nacional: "not_opted",
          // A new tenant e-mails its notes to their takers, in its own name.
          note_mail: { enabled: true, sender_name: null }
        })
        expect(String(field(response.json, "tax_id"))).toMatch(/^[0-9]{14}$/)
        expect(String(field(field(response.json, "quota"), "period"))).toMatch(/^\d{4}-(0[1-9]|1[0-2])$/)
        const createdAt = Date.parse(String(field(response.json, "created_at")))
        expect(Math.abs(createdAt - before)).toBeLessThan(60_000)
        expect(String(field(response.json, "created_at"))).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/)
      }))

    it.effect("the configuration's default quota is 100", () =>
      Effect.gen(function*() {
        const config = yield* Effect.provide(AppConfig, AppConfigTest())
        expect(config.defaultMonthlyQuota).toBe(100)
      }))

    it.effect("every role may read the tenant, through the typed client too", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const role of ["admin", "developer", "owner"] as const) {
          const member = yield* addMember(owner, role)
          const api = yield* client(member.session)
          const tenant = yield* api.tenants.get({ params: { tenantId: owner.tenantId } })
          expect(tenant.id).toBe(owner.tenantId)
          expect(tenant.quota.limit).toBe(MONTHLY_QUOTA)
        }
      }))

    it.effect("live and test keys of the tenant read it with any scope", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const environment of ["live", "test"] as const) {
          const key = yield* createKey(owner, environment, ["webhooks:read"])
          const response = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token })
          expect(response.status, response.text).toBe(200)
          expect(response.json).toMatchObject({ id: owner.tenantId, status: "active", quota: { used: 0 } })
          // The alias without /v1 answers the same.
          const alias = yield* rawRequest("GET", `/tenants/${owner.tenantId}`, { token: key.token })
          expect(alias.status).toBe(200)
          expect(alias.json).toEqual(response.json)
        }
      }))

    it.effect("a key reads the tenant exactly as a member's session does, this month's usage and changes included", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "live", ["documents:read"])
        const sql = yield* SqlClient.SqlClient
        // Usage of this month and of an earlier one: only this month's shows.
        yield* sql`
          INSERT INTO quota_usage (tenant_id, period, used)
          VALUES (${owner.tenantId}, ${currentPeriod()}, 17), (${owner.tenantId}, '2001-01', 99)`
        const bySession = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        const byKey = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token })
        expect(byKey.status, byKey.text).toBe(200)
        expect(byKey.json).toEqual(bySession.json)
        expect(field(byKey.json, "quota")).toEqual({ period: currentPeriod(), limit: MONTHLY_QUOTA, used: 17 })

        // Read afresh on every request: a change and new usage show on the key's next read.
        const changed = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { name: "Renamed Ltda" }
        })
        expect(changed.status, changed.text).toBe(200)
        yield* sql`UPDATE quota_usage SET used = 18 WHERE tenant_id = ${owner.tenantId} AND period = ${currentPeriod()}`
        const again = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token })
        expect(again.json).toEqual({
          ...(changed.json as object),
          quota: { period: currentPeriod(), limit: MONTHLY_QUOTA, used: 18 }
        })
      }))

    it.effect("another tenant's key, a non-member's session and unknown or malformed ids are 404 not_found", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const other = yield* registerOwner("other")
        const loner = yield* registerUser("loner")
        const foreignKey = yield* createKey(other, "live", ["documents:read"])
        const ownKey = yield* createKey(owner, "test", ["documents:read"])

        const cases: ReadonlyArray<readonly [string, string, string]> = [
          ["another tenant's key", tenantUrl(owner.tenantId), foreignKey.token],
          ["another tenant's owner", tenantUrl(owner.tenantId), other.session],
          ["a user in no tenant", tenantUrl(owner.tenantId), loner.session],
          ["unknown tenant, session", tenantUrl(UNKNOWN_TENANT_ID), owner.session],
          ["unknown tenant, key", tenantUrl(UNKNOWN_TENANT_ID), ownKey.token],
          ["malformed id, session", tenantUrl("acme"), owner.session],
          ["malformed id, key", tenantUrl("ten_123"), ownKey.token],
          ["another id kind, session", tenantUrl(`usr_${"0".repeat(26)}`), owner.session]
        ]
        const bodies = new Set<string>()
        for (const [label, url, token] of cases) {
          const response = yield* rawRequest("GET", url, { token })
          expect(response.status, `${label}: ${response.text}`).toBe(404)
          expectError(response, 404, "not_found")
          bodies.add(JSON.stringify({ code: field(response.json, "code"), message: field(response.json, "message") }))
        }
        // Nothing tells an existing foreign tenant from one that does not exist.
        expect(bodies.size).toBe(1)
      }))

    it.effect("credentials that do not authenticate are 401 with their code", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const revoked = yield* createKey(owner, "live", ["documents:read"])
        const api = yield* client(owner.session)
        yield* api.apiKeys.revoke({ params: { tenantId: owner.tenantId, keyId: revoked.api_key.id } })
        const url = tenantUrl(owner.tenantId)
        expectError(yield* rawRequest("GET", url), 401, "missing_credentials")
        expectError(yield* rawRequest("GET", url, { headers: { authorization: "Bearer" } }), 401, "missing_credentials")
        expectError(yield* rawRequest("GET", url, { token: revoked.token }), 401, "api_key_revoked")
        expectError(yield* rawRequest("GET", url, { token: `etd_live_${"a".repeat(32)}` }), 401, "invalid_api_key")
        expectError(yield* rawRequest("GET", url, { token: "not-a-token" }), 401, "invalid_api_key")
        expectError(yield* rawRequest("GET", url, { token: `etd_sess_${"a".repeat(32)}` }), 401, "invalid_session")
      }))

    it.effect("owners and admins change the name and the Simples Nacional option: 200 with the tenant", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("regime")
        const admin = yield* addMember(owner, "admin")
        const before = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })

        const byOwner = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { simples_nacional: "me_epp" }
        })
        expect(byOwner.status, byOwner.text).toBe(200)
        // Only the option changed; the answer is the whole tenant, as GET shows it.
        expect(byOwner.json).toEqual({ ...before.json, simples_nacional: "me_epp" })
        expect((yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })).json).toEqual(
          byOwner.json
        )

        // An admin renames it (trimmed, as at registration); the option stays.
        const byAdmin = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: admin.session,
          body: { name: "  Regime Novo Serviços Ltda  " }
        })
        expect(byAdmin.status, byAdmin.text).toBe(200)
        expect(byAdmin.json).toMatchObject({ name: "Regime Novo Serviços Ltda", simples_nacional: "me_epp" })
        expect(byAdmin.json?.["tax_id"]).toBe(before.json?.["tax_id"])

        // Both at once, through the typed client; the change shows wherever the tenant does.
        const api = yield* client(admin.session)
        const both = yield* api.tenants.update({
          params: { tenantId: owner.tenantId },
          payload: { name: "Regime MEI", simples_nacional: "mei" }
        })
        expect([both.name, both.simples_nacional]).toEqual(["Regime MEI", "mei"])
        const mine = yield* (yield* client(owner.session)).auth.myTenants({ query: { limit: 20 } })
        expect(mine.data.map((m) => [m.tenant.name, m.tenant.simples_nacional])).toEqual([["Regime MEI", "mei"]])
        const key = yield* createKey(owner, "live", ["documents:read"])
        const byKey = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token })
        expect(byKey.json).toMatchObject({ name: "Regime MEI", simples_nacional: "mei" })

        // Back out of the Simples.
        const out = yield* api.tenants.update({
          params: { tenantId: owner.tenantId },
          payload: { simples_nacional: "not_opted" }
        })
        expect([out.name, out.simples_nacional]).toEqual(["Regime MEI", "not_opted"])
      }))

    it.effect("changing the tenant: a developer gets 403 forbidden, another tenant's session 404, a key 401; nothing changes", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("guarded")
        const developer = yield* addMember(owner, "developer")
        const other = yield* registerOwner("other")
        const key = yield* createKey(owner, "live")
        const change = { name: "Hijacked Ltda", simples_nacional: "mei" }

        expectError(
          yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: developer.session, body: change }),
          403,
          "forbidden"
        )
        const typed = yield* Effect.flip((yield* client(developer.session)).tenants.update({
          params: { tenantId: owner.tenantId },
          payload: { simples_nacional: "mei" }
        }))
        expect(typed._tag).toBe("Forbidden")
        // Another tenant's owner cannot tell the tenant exists.
        expectError(
          yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: other.session, body: change }),
          404,
          "not_found"
        )
        expectError(
          yield* rawRequest("PATCH", tenantUrl(UNKNOWN_TENANT_ID), { token: owner.session, body: change }),
          404,
          "not_found"
        )
        // Changing the tenant is for members' sessions, never for API keys.
        expectError(
          yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: key.token, body: change }),
          401,
          "invalid_session"
        )

        const after = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        expect(after.json).toMatchObject({ name: "guarded Ltda", simples_nacional: "not_opted" })
        // The other tenant is untouched too.
        const others = yield* rawRequest("GET", tenantUrl(other.tenantId), { token: other.session })
        expect(others.json).toMatchObject({ name: "other Ltda", simples_nacional: "not_opted" })
      }))

    it.effect("changing the tenant: an invalid option or name, an empty body or no known field is 400 invalid_request", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("strict")
        const bodies: ReadonlyArray<unknown> = [
          { simples_nacional: "simples" },
          { simples_nacional: "ME_EPP" },
          { simples_nacional: null },
          { simples_nacional: 3 },
          { name: "" },
          { name: "   " },
          { name: "x".repeat(201) },
          { name: "Válido Ltda", simples_nacional: "epp" },
          {},
          // The tax id is not among what may change: alone, the body changes nothing.
          { tax_id: "11222333000181" }
        ]
        for (const body of bodies) {
          const response = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: owner.session, body })
          expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(400)
          expectError(response, 400, "invalid_request")
        }
        const unknownOption = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), {
          token: owner.session,
          body: { simples_nacional: "simples" }
        })
        expect(unknownOption.json?.["issues"]).toEqual([
          { path: ["simples_nacional"], message: "must be \"not_opted\", \"mei\" or \"me_epp\"" }
        ])
        const empty = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: owner.session, body: {} })
        expect(String(empty.json?.["message"])).toContain("simples_nacional")
        const noBody = yield* rawRequest("PATCH", tenantUrl(owner.tenantId), { token: owner.session })
        expect(noBody.status, noBody.text).toBe(400)

        const after = yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: owner.session })
        expect(after.json).toMatchObject({ name: "strict Ltda", simples_nacional: "not_opted" })
      }))

    it.effect("adding a member by email (the older name of inviting) grants nothing at once: 201 with an invitation", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser("newcomer")
        const response = yield* rawRequest("POST", membersUrl(owner.tenantId), {
          token: owner.session,
          // Emails match case-insensitively.
          body: { email: user.email.toUpperCase(), role: "developer" }
        })
        expect(response.status, response.text).toBe(201)
        expect(response.json).toMatchObject({ object: "invitation", role: "developer", status: "pending" })
        expect(response.text).not.toContain("etd_inv_")

        // Not a member until they accept.
        const api = yield* client(user.session)
        expect((yield* api.auth.myTenants({ query: { limit: 20 } })).data).toEqual([])
        expectError(yield* rawRequest("GET", tenantUrl(owner.tenantId), { token: user.session }), 404, "not_found")
        const invitations = yield* api.invitationAcceptance.listMine({ query: {} })
        expect(invitations.data.map((invitation) => invitation.id)).toEqual([field(response.json, "id")])
        yield* api.invitationAcceptance.acceptMine({ params: { invitationId: String(field(response.json, "id")) } })
        const mine = yield* api.auth.myTenants({ query: { limit: 20 } })
        expect(mine.data.map((m) => [m.tenant.id, m.role])).toEqual([[owner.tenantId, "developer"]])
      }))

    it.effect("inviting a member is 409 conflict, whatever the role", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const member = yield* addMember(owner, "developer")
        for (const role of ["developer", "admin"] as const) {
          for (const url of [membersUrl(owner.tenantId), `${tenantUrl(owner.tenantId)}/invitations`]) {
            const response = yield* rawRequest("POST", url, {
              token: owner.session,
              body: { email: member.email, role }
            })
            expectError(response, 409, "conflict")
          }
        }
        // The owner cannot be invited either.
        const self = yield* rawRequest("POST", membersUrl(owner.tenantId), {
          token: owner.session,
          body: { email: owner.email, role: "admin" }
        })
        expectError(self, 409, "conflict")
        // The original role is unchanged.
        const api = yield* client(member.session)
        const mine = yield* api.auth.myTenants({ query: { limit: 20 } })
        expect(mine.data.map((m) => m.role)).toEqual(["developer"])
      }))

    it.effect("concurrent invitations of the same address: one 201, the rest 409 conflict", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser()
        const responses = yield* Effect.all(
          Array.from(
            { length: 5 },
            (_, i) =>
              rawRequest(
                "POST",
                i % 2 === 0 ? membersUrl(owner.tenantId) : `${tenantUrl(owner.tenantId)}/invitations`,
                {
                  token: owner.session,
                  body: { email: user.email, role: "developer" }
                }
              )
          ),
          { concurrency: "unbounded" }
        )
        expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
        for (const response of responses.filter((r) => r.status === 409)) expectError(response, 409, "conflict")
      }))

    it.effect("an address without an account is invited too; an invalid email or role is 400 invalid_request", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const unknown = yield* rawRequest("POST", membersUrl(owner.tenantId), {
          token: owner.session,
          body: { email: "nobody-here@example.com", role: "developer" }
        })
        expect(unknown.status, unknown.text).toBe(201)
        const user = yield* registerUser()
        for (
          const body of [{ email: "not-an-email", role: "developer" }, { email: user.email, role: "superuser" }, {
            email: user.email
          }]
        ) {
          const response = yield* rawRequest("POST", membersUrl(owner.tenantId), { token: owner.session, body })
          expectError(response, 400, "invalid_request")
        }
      }))

    it.effect("an admin invites admins and developers but not owners (403); an owner invites owners", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const adminApi = yield* client(admin.session)
        const path = { tenantId: owner.tenantId }

        const candidate = yield* registerUser("candidate")
        const refused = yield* rawRequest("POST", membersUrl(owner.tenantId), {
          token: admin.session,
          body: { email: candidate.email, role: "owner" }
        })
        expectError(refused, 403, "forbidden")
        const typed = yield* Effect.flip(
          adminApi.invitations.create({ params: path, payload: { email: candidate.email, role: "owner" } })
        )
        expect(typed._tag).toBe("Forbidden")

        const asDeveloper = yield* adminApi.tenants.addMember({
          params: path,
          payload: { email: candidate.email, role: "developer" }
        })
        expect(asDeveloper.role).toBe("developer")
        const another = yield* registerUser("another")
        const asAdmin = yield* adminApi.invitations.create({
          params: path,
          payload: { email: another.email, role: "admin" }
        })
        expect(asAdmin.role).toBe("admin")

        const coOwner = yield* addMember(owner, "owner", "coowner")
        // A co-owner is a full owner: it may invite owners too.
        const third = yield* registerUser("third")
        const byCoOwner = yield* (yield* client(coOwner.session)).invitations.create({
          params: path,
          payload: { email: third.email, role: "owner" }
        })
        expect(byCoOwner.role).toBe("owner")
      }))

    it.effect("lists members with pagination; members are ordered and complete", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const roles: ReadonlyArray<Role> = ["admin", "developer", "developer", "owner"]
        const added: Array<{ userId: string; role: Role }> = [{ userId: owner.userId, role: "owner" }]
        for (const role of roles) added.push({ ...(yield* addMember(owner, role)), role })
        const expected = [...added].sort((a, b) => (a.userId < b.userId ? -1 : 1))

        const api = yield* client(owner.session)
        const path = { tenantId: owner.tenantId }
        const first = yield* api.tenants.listMembers({ params: path, query: { limit: 2 } })
        expect(first.data.map((m) => m.user.id)).toEqual(expected.slice(0, 2).map((m) => m.userId))
        expect(first.has_more).toBe(true)
        expect(first.next_cursor).toBe(expected[1]!.userId)

        const second = yield* api.tenants.listMembers({
          params: path,
          query: { limit: 2, starting_after: first.next_cursor! }
        })
        expect(second.data.map((m) => m.user.id)).toEqual(expected.slice(2, 4).map((m) => m.userId))
        expect(second.has_more).toBe(true)

        const third = yield* api.tenants.listMembers({
          params: path,
          query: { limit: 2, starting_after: second.next_cursor! }
        })
        expect(third.data.map((m) => m.user.id)).toEqual(expected.slice(4).map((m) => m.userId))
        expect(third.has_more).toBe(false)
        expect(third.next_cursor).toBe(null)

        const all = yield* api.tenants.listMembers({ params: path, query: { limit: 20 } })
        expect(all.data.map((m) => [m.user.id, m.role])).toEqual(expected.map((m) => [m.userId, m.role]))
        expect(all.has_more).toBe(false)

        const raw = yield* rawRequest("GET", `${membersUrl(owner.tenantId)}?limit=1`, { token: owner.session })
        expect(raw.status).toBe(200)
        const data = field(raw.json, "data")
        const member: unknown = Array.isArray(data) ? data[0] : undefined
        expect(Object.keys(member ?? {}).sort()).toEqual(["created_at", "object", "role", "user"])
        expect(Object.keys(field(member, "user") ?? {}).sort()).toEqual(USER_FIELDS)
        expect(raw.text).not.toContain("password")
        for (const query of ["limit=0", "limit=101"]) {
          expectError(
            yield* rawRequest("GET", `${membersUrl(owner.tenantId)}?${query}`, { token: owner.session }),
            400,
            "invalid_request"
          )
        }
      }))

    it.effect("admins and developers may list members; a developer may not add (403 forbidden)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const developer = yield* addMember(owner, "developer")
        const adminList = yield* rawRequest("GET", membersUrl(owner.tenantId), { token: admin.session })
        expect(adminList.status, adminList.text).toBe(200)

        const developerList = yield* rawRequest("GET", membersUrl(owner.tenantId), { token: developer.session })
        expect(developerList.status, developerList.text).toBe(200)
        const candidate = yield* registerUser()
        const add = yield* rawRequest("POST", membersUrl(owner.tenantId), {
          token: developer.session,
          body: { email: candidate.email, role: "developer" }
        })
        expectError(add, 403, "forbidden")
        const api = yield* client(developer.session)
        const typed = yield* Effect.flip(api.tenants.addMember({
          params: { tenantId: owner.tenantId },
          payload: { email: candidate.email, role: "developer" }
        }))
        expect(typed._tag).toBe("Forbidden")
        // The refused add added nobody.
        const list = yield* (yield* client(owner.session)).tenants.listMembers({
          params: { tenantId: owner.tenantId },
          query: { limit: 20 }
        })
        expect(list.data.map((m) => m.user.id)).not.toContain(candidate.userId)
      }))

    it.effect("members endpoints: non-members get 404, API keys get 401 invalid_session", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const stranger = yield* registerOwner("stranger")
        const key = yield* createKey(owner, "live", ["documents:read", "webhooks:write"])
        const candidate = yield* registerUser()
        const requests = [
          { method: "GET", body: undefined },
          { method: "POST", body: { email: candidate.email, role: "developer" } }
        ] as const
        for (const { body, method } of requests) {
          expectError(
            yield* rawRequest(method, membersUrl(owner.tenantId), { token: stranger.session, body }),
            404,
            "not_found"
          )
          expectError(
            yield* rawRequest(method, membersUrl(owner.tenantId), { token: key.token, body }),
            401,
            "invalid_session"
          )
          expectError(
            yield* rawRequest(method, membersUrl(UNKNOWN_TENANT_ID), { token: owner.session, body }),
            404,
            "not_found"
          )
        }
      }))
  })
}
