/**
 * Key management over HTTP (SPEC §3, §4): creation, listing, rotation with a grace period,
 * revocation, and who may do each of them.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Scope } from "../../src/domain/Principal.js"
import type { ApiKey } from "../../src/keys/Api.js"
import { eventually } from "../http/helpers.js"
import { addMember, expectError, field, registerUser } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const TOKEN = /^etd_(live|test)_[a-z2-7]{32}$/
const KEY_ID = /^key_[0-9a-hjkmnp-tv-z]{26}$/
const DAY = 24 * 60 * 60 * 1000
/** Well-formed, but no key has it. */
const UNKNOWN_KEY_ID = `key_${"0".repeat(26)}`

/** The metadata fields of SPEC §4, and nothing else (in particular no token and no hash). */
const METADATA_FIELDS = [
  "created_at",
  "environment",
  "expires_at",
  "exposure",
  "hint",
  "id",
  "last_used_at",
  "name",
  "object",
  "replaced_by",
  "revoked_at",
  "scopes",
  "status"
]

const keysPath = (tenantId: string) => `/v1/tenants/${tenantId}/api-keys`

/** The four key-management calls as raw requests, for checking who may make them. */
const managementCalls = (tenantId: string, keyId: string) =>
  [
    {
      name: "create",
      method: "POST",
      url: keysPath(tenantId),
      body: { name: "k", environment: "test", scopes: ["documents:read"] }
    },
    { name: "list", method: "GET", url: keysPath(tenantId), body: undefined },
    { name: "rotate", method: "POST", url: `${keysPath(tenantId)}/${keyId}/rotate`, body: {} },
    { name: "revoke", method: "POST", url: `${keysPath(tenantId)}/${keyId}/revoke`, body: undefined }
  ] as const

const expectNear = (actual: Date | string | unknown, expected: number, toleranceMs = 10_000) => {
  const millis = actual instanceof Date ? actual.getTime() : Date.parse(String(actual))
  expect(Number.isNaN(millis), String(actual)).toBe(false)
  expect(Math.abs(millis - expected), `${String(actual)} vs ${new Date(expected).toISOString()}`).toBeLessThan(
    toleranceMs
  )
}

const getTenant = (tenantId: string, token: string) => rawRequest("GET", `/v1/tenants/${tenantId}`, { token })

for (const database of testDatabases) {
  // Many registrations per file: lift the per-address limit on register and login.
  const app = makeTestApp(database, { loginRateLimit: { perMinute: 10_000 } })

  layer(app, { timeout: 60_000, excludeTestServices: true })(`API keys (${database})`, (it) => {
    it.effect("creates a key: 201 with the token once and its metadata", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const before = Date.now()
        const response = yield* rawRequest("POST", keysPath(owner.tenantId), {
          token: owner.session,
          body: {
            name: "  Billing server  ",
            environment: "live",
            scopes: ["documents:write", "documents:read", "documents:write"]
          }
        })
        expect(response.status, response.text).toBe(201)
        const token = field(response.json, "token")
        expect(typeof token).toBe("string")
        if (typeof token !== "string") return
        expect(token).toMatch(TOKEN)
        expect(token).toHaveLength(41)
        expect(token.startsWith("etd_live_")).toBe(true)

        const apiKey = field(response.json, "api_key")
        expect(Object.keys(apiKey ?? {}).sort()).toEqual(METADATA_FIELDS)
        expect(apiKey).toMatchObject({
          object: "api_key",
          name: "Billing server",
          environment: "live",
          // Duplicates collapse; the order of first appearance is kept.
          scopes: ["documents:write", "documents:read"],
          hint: `etd_live_…${token.slice(-4)}`,
          status: "active",
          last_used_at: null,
          expires_at: null,
          revoked_at: null,
          replaced_by: null,
          exposure: null
        })
        expect(String(field(apiKey, "id"))).toMatch(KEY_ID)
        expectNear(field(apiKey, "created_at"), before)
      }))

    it.effect("creates test keys through the typed client, with the test prefix", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const created = yield* createKey(owner, "test", ["webhooks:read"])
        expect(created.token).toMatch(/^etd_test_[a-z2-7]{32}$/)
        expect(created.api_key.environment).toBe("test")
        expect(created.api_key.scopes).toEqual(["webhooks:read"])
        expect(created.api_key.hint).toBe(`etd_test_…${created.token.slice(-4)}`)
        // Two keys never share a token.
        const again = yield* createKey(owner, "test", ["webhooks:read"])
        expect(again.token).not.toBe(created.token)
        expect(again.api_key.id).not.toBe(created.api_key.id)
      }))

    it.effect("refuses invalid creation payloads with 400 invalid_request", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const bodies: ReadonlyArray<readonly [string, unknown]> = [
          ["empty scopes", { name: "k", environment: "test", scopes: [] }],
          ["unknown scope", { name: "k", environment: "test", scopes: ["documents:delete"] }],
          ["unknown environment", { name: "k", environment: "prod", scopes: ["documents:read"] }],
          ["blank name", { name: "   ", environment: "test", scopes: ["documents:read"] }],
          ["no name", { environment: "test", scopes: ["documents:read"] }],
          ["no body", undefined]
        ]
        for (const [label, body] of bodies) {
          const response = yield* rawRequest("POST", keysPath(owner.tenantId), { token: owner.session, body })
          expect(response.status, `${label}: ${response.text}`).toBe(400)
          expectError(response, 400, "invalid_request")
        }
        const empty = yield* rawRequest("POST", keysPath(owner.tenantId), {
          token: owner.session,
          body: { name: "k", environment: "test", scopes: [] }
        })
        expect(JSON.stringify(field(empty.json, "issues"))).toContain("scopes")
        // Nothing was created by the refused calls.
        const api = yield* client(owner.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        expect(list.data).toEqual([])
      }))

    it.effect("lists metadata only: no token anywhere in the response", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const live = yield* createKey(owner, "live", ["documents:read"])
        const test = yield* createKey(owner, "test", ["webhooks:write", "webhooks:read"])
        const response = yield* rawRequest("GET", keysPath(owner.tenantId), { token: owner.session })
        expect(response.status).toBe(200)
        for (const token of [live.token, test.token]) {
          expect(response.text).not.toContain(token)
          // Not even the random part without its prefix.
          expect(response.text).not.toContain(token.slice(9))
        }
        expect(response.text).not.toContain("token")
        const data = field(response.json, "data")
        expect(Array.isArray(data)).toBe(true)
        if (!Array.isArray(data)) return
        // Newest first.
        expect(data.map((key: unknown) => field(key, "id"))).toEqual([test.api_key.id, live.api_key.id])
        for (const key of data) expect(Object.keys(key).sort()).toEqual(METADATA_FIELDS)
        expect(data[1]).toMatchObject({
          id: live.api_key.id,
          object: "api_key",
          name: "live key",
          environment: "live",
          scopes: ["documents:read"],
          hint: live.api_key.hint,
          status: "active",
          expires_at: null,
          replaced_by: null,
          exposure: null
        })
        expect(field(response.json, "has_more")).toBe(false)
        expect(field(response.json, "next_cursor")).toBe(null)
      }))

    it.effect("paginates the list with limit, starting_after, has_more and next_cursor", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const created: Array<string> = []
        for (let i = 0; i < 5; i++) created.push((yield* createKey(owner, "test", ["documents:read"])).api_key.id)
        const newestFirst = [...created].reverse()
        const api = yield* client(owner.session)
        const path = { tenantId: owner.tenantId }

        const first = yield* api.apiKeys.list({ params: path, query: { limit: 2 } })
        expect(first.data.map((k) => k.id)).toEqual(newestFirst.slice(0, 2))
        expect(first.has_more).toBe(true)
        expect(first.next_cursor).toBe(newestFirst[1])

        const second = yield* api.apiKeys.list({
          params: path,
          query: { limit: 2, starting_after: first.next_cursor! }
        })
        expect(second.data.map((k) => k.id)).toEqual(newestFirst.slice(2, 4))
        expect(second.has_more).toBe(true)
        expect(second.next_cursor).toBe(newestFirst[3])

        const third = yield* api.apiKeys.list({
          params: path,
          query: { limit: 2, starting_after: second.next_cursor! }
        })
        expect(third.data.map((k) => k.id)).toEqual(newestFirst.slice(4))
        expect(third.has_more).toBe(false)
        expect(third.next_cursor).toBe(null)

        // Exactly a full page: no phantom next page.
        const exact = yield* api.apiKeys.list({ params: path, query: { limit: 5 } })
        expect(exact.data).toHaveLength(5)
        expect(exact.has_more).toBe(false)
        expect(exact.next_cursor).toBe(null)

        // Default page size is 20.
        const all = yield* api.apiKeys.list({ params: path, query: { limit: 20 } })
        expect(all.data.map((k) => k.id)).toEqual(newestFirst)

        for (const query of ["limit=0", "limit=101", "limit=abc", "limit=1.5"]) {
          const response = yield* rawRequest("GET", `${keysPath(owner.tenantId)}?${query}`, { token: owner.session })
          expectError(response, 400, "invalid_request")
        }
        const max = yield* rawRequest("GET", `${keysPath(owner.tenantId)}?limit=100`, { token: owner.session })
        expect(max.status).toBe(200)
      }))

    it.effect("the list shows only the tenant's own keys", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const other = yield* registerOwner("other")
        const mine = yield* createKey(owner, "test", ["documents:read"])
        const theirs = yield* createKey(other, "test", ["documents:read"])
        const api = yield* client(owner.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        expect(list.data.map((k) => k.id)).toEqual([mine.api_key.id])
        // A cursor from another tenant does not open its keys either.
        const cursor = yield* api.apiKeys.list({
          params: { tenantId: owner.tenantId },
          query: { limit: 20, starting_after: `key_${"z".repeat(26)}` }
        })
        expect(cursor.data.map((k) => k.id)).not.toContain(theirs.api_key.id)
      }))

    it.effect("a live and a test key authenticate GET /v1/tenants/{tenantId}", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const environment of ["live", "test"] as const) {
          const { token } = yield* createKey(owner, environment, ["documents:read"])
          const response = yield* getTenant(owner.tenantId, token)
          expect(response.status, response.text).toBe(200)
          expect(field(response.json, "id")).toBe(owner.tenantId)
        }
      }))

    it.effect("a stored key whose scopes are not the service's is a 500, never a principal", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "test", ["documents:read"])
        const sql = yield* SqlClient.SqlClient
        // Authentication checks the row it reads rather than trusting it: a scope from nowhere is a fault.
        yield* sql`UPDATE api_keys SET scopes = '["documents:read", "everything"]'::jsonb WHERE id = ${key.api_key.id}`
        const response = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: key.token })
        expectError(response, 500, "internal_error")
        expect(response.text).not.toContain("everything")
      }))

    it.effect("revoke: the very next request gets 401 api_key_revoked; revoking twice is 200", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const { api_key, token } = yield* createKey(owner, "live", ["documents:read"])
        const untouched = yield* createKey(owner, "live", ["documents:read"])
        expect((yield* getTenant(owner.tenantId, token)).status).toBe(200)

        const before = Date.now()
        const revoked = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${api_key.id}/revoke`, {
          token: owner.session
        })
        expect(revoked.status, revoked.text).toBe(200)
        expect(revoked.json).toMatchObject({ id: api_key.id, object: "api_key", status: "revoked" })
        const revokedAt = field(revoked.json, "revoked_at")
        expectNear(revokedAt, before)
        expect(revoked.text).not.toContain(token)
        expect(revoked.text).not.toContain(token.slice(9))

        expectError(yield* getTenant(owner.tenantId, token), 401, "api_key_revoked")
        // And it stays revoked.
        expectError(yield* getTenant(owner.tenantId, token), 401, "api_key_revoked")

        const again = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${api_key.id}/revoke`, {
          token: owner.session
        })
        expect(again.status, again.text).toBe(200)
        expect(field(again.json, "status")).toBe("revoked")
        // The first revocation's time stays: revoking twice changes nothing.
        expect(field(again.json, "revoked_at")).toBe(revokedAt)
        expectError(yield* getTenant(owner.tenantId, token), 401, "api_key_revoked")

        // Other keys of the tenant are unaffected.
        expect((yield* getTenant(owner.tenantId, untouched.token)).status).toBe(200)

        const api = yield* client(owner.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        expect(list.data.find((k) => k.id === api_key.id)?.status).toBe("revoked")
        expect(list.data.find((k) => k.id === api_key.id)?.revoked_at?.toISOString()).toBe(revokedAt)
        expect(list.data.find((k) => k.id === untouched.api_key.id)?.status).toBe("active")
        expect(list.data.find((k) => k.id === untouched.api_key.id)?.revoked_at).toBeNull()
      }))

    it.effect("rotate: 201 with a new token; the old one works for the default 7 days", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const scopes: ReadonlyArray<Scope> = ["documents:read", "webhooks:write"]
        const old = yield* createKey(owner, "live", scopes)
        const before = Date.now()
        const response = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${old.api_key.id}/rotate`, {
          token: owner.session,
          body: {}
        })
        expect(response.status, response.text).toBe(201)
        const token = field(response.json, "token")
        expect(typeof token).toBe("string")
        if (typeof token !== "string") return
        expect(token).toMatch(/^etd_live_[a-z2-7]{32}$/)
        expect(token).not.toBe(old.token)
        // The previous token never comes back.
        expect(response.text).not.toContain(old.token)
        expect(response.text).not.toContain(old.token.slice(9))

        const apiKey = field(response.json, "api_key")
        expect(apiKey).toMatchObject({
          object: "api_key",
          name: old.api_key.name,
          environment: "live",
          scopes,
          hint: `etd_live_…${token.slice(-4)}`,
          status: "active",
          expires_at: null,
          replaced_by: null
        })
        expect(field(apiKey, "id")).not.toBe(old.api_key.id)
        const previous = field(response.json, "previous")
        expect(field(previous, "id")).toBe(old.api_key.id)
        expectNear(field(previous, "expires_at"), before + 7 * DAY)

        // Both work during the grace period.
        expect((yield* getTenant(owner.tenantId, old.token)).status).toBe(200)
        expect((yield* getTenant(owner.tenantId, token)).status).toBe(200)

        const api = yield* client(owner.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        const oldMeta = list.data.find((k) => k.id === old.api_key.id)
        expect(oldMeta?.status).toBe("expiring")
        expect(oldMeta?.replaced_by).toBe(field(apiKey, "id"))
        expect(oldMeta?.expires_at?.toISOString()).toBe(field(previous, "expires_at"))
        expect(list.data.find((k) => k.id === field(apiKey, "id"))?.status).toBe("active")
      }))

    it.effect("rotate accepts a body-less POST (all its fields are optional) and uses the default grace", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const options of [{}, { rawBody: "" }, { body: {} }, { body: { grace_days: 7 } }]) {
          const key = yield* createKey(owner, "test", ["documents:read"])
          const before = Date.now()
          const response = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${key.api_key.id}/rotate`, {
            token: owner.session,
            ...options
          })
          expect(response.status, `${JSON.stringify(options)}: ${response.text}`).toBe(201)
          expectNear(field(field(response.json, "previous"), "expires_at"), before + 7 * DAY)
        }
      }))

    it.effect("rotate honours grace_days; grace 0 expires the old key at once (api_key_expired)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const api = yield* client(owner.session)
        const path = (keyId: string) => ({ tenantId: owner.tenantId, keyId })

        const thirty = yield* createKey(owner, "test", ["documents:read"])
        const before = Date.now()
        const rotated30 = yield* api.apiKeys.rotate({ params: path(thirty.api_key.id), payload: { grace_days: 30 } })
        expectNear(rotated30.previous.expires_at, before + 30 * DAY)

        const two = yield* createKey(owner, "test", ["documents:read"])
        const rotated2 = yield* api.apiKeys.rotate({ params: path(two.api_key.id), payload: { grace_days: 2 } })
        expectNear(rotated2.previous.expires_at, Date.now() + 2 * DAY)

        const zero = yield* createKey(owner, "test", ["documents:read"])
        const rotated0 = yield* api.apiKeys.rotate({ params: path(zero.api_key.id), payload: { grace_days: 0 } })
        expectNear(rotated0.previous.expires_at, Date.now())
        expectError(yield* getTenant(owner.tenantId, zero.token), 401, "api_key_expired")
        expect((yield* getTenant(owner.tenantId, rotated0.token)).status).toBe(200)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        expect(list.data.find((k) => k.id === zero.api_key.id)?.status).toBe("expired")
      }))

    it.effect("rotating a rotated or revoked key is 409 invalid_state; the replacement can be rotated", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const api = yield* client(owner.session)
        const key = yield* createKey(owner, "test", ["documents:read"])
        const rotated = yield* api.apiKeys.rotate({
          params: { tenantId: owner.tenantId, keyId: key.api_key.id },
          payload: {}
        })

        const twice = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${key.api_key.id}/rotate`, {
          token: owner.session,
          body: {}
        })
        expectError(twice, 409, "invalid_state")
        const typed = yield* Effect.flip(
          api.apiKeys.rotate({ params: { tenantId: owner.tenantId, keyId: key.api_key.id }, payload: {} })
        )
        expect(typed._tag).toBe("InvalidState")

        // The replacement is an ordinary active key.
        const next = yield* api.apiKeys.rotate({
          params: { tenantId: owner.tenantId, keyId: rotated.api_key.id },
          payload: {}
        })
        expect(next.previous.id).toBe(rotated.api_key.id)

        const revoked = yield* createKey(owner, "test", ["documents:read"])
        yield* api.apiKeys.revoke({ params: { tenantId: owner.tenantId, keyId: revoked.api_key.id } })
        const rotateRevoked = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${revoked.api_key.id}/rotate`, {
          token: owner.session,
          body: {}
        })
        expectError(rotateRevoked, 409, "invalid_state")
        // A refused rotation leaves no new key behind.
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        expect(list.data).toHaveLength(4)
      }))

    it.effect("concurrent rotations of one key: exactly one wins, the others are 409 invalid_state", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "live", ["documents:read"])
        const responses = yield* Effect.all(
          Array.from(
            { length: 6 },
            () =>
              rawRequest("POST", `${keysPath(owner.tenantId)}/${key.api_key.id}/rotate`, {
                token: owner.session,
                body: {}
              })
          ),
          { concurrency: "unbounded" }
        )
        expect(responses.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409])
        for (const response of responses.filter((r) => r.status === 409)) expectError(response, 409, "invalid_state")
        const api = yield* client(owner.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        // One replacement, not six.
        expect(list.data.map((k) => k.status).sort()).toEqual(["active", "expiring"])
      }))

    it.effect("revoking a rotated key in its grace period ends it at once", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const api = yield* client(owner.session)
        const key = yield* createKey(owner, "test", ["documents:read"])
        const rotated = yield* api.apiKeys.rotate({
          params: { tenantId: owner.tenantId, keyId: key.api_key.id },
          payload: {}
        })
        const revoked = yield* api.apiKeys.revoke({ params: { tenantId: owner.tenantId, keyId: key.api_key.id } })
        expect(revoked.status).toBe("revoked")
        expectError(yield* getTenant(owner.tenantId, key.token), 401, "api_key_revoked")
        expect((yield* getTenant(owner.tenantId, rotated.token)).status).toBe(200)
      }))

    it.effect("rotate and revoke answer 404 for an unknown key and for another tenant's key", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const other = yield* registerOwner("other")
        const theirs = yield* createKey(other, "live", ["documents:read"])
        for (const keyId of [UNKNOWN_KEY_ID, theirs.api_key.id]) {
          for (const action of ["rotate", "revoke"] as const) {
            const response = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${keyId}/${action}`, {
              token: owner.session,
              body: action === "rotate" ? {} : undefined
            })
            expectError(response, 404, "not_found")
          }
        }
        // The other tenant's key was neither rotated nor revoked.
        expect((yield* getTenant(other.tenantId, theirs.token)).status).toBe(200)
        const api = yield* client(other.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: other.tenantId }, query: { limit: 20 } })
        expect(list.data.map((k) => [k.id, k.status])).toEqual([[theirs.api_key.id, "active"]])
      }))

    it.effect("a malformed key id in the path is 400 invalid_request naming keyId (SPEC §2: path validation)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const keyId of ["nope", "key_123", `usr_${"0".repeat(26)}`, `KEY_${"0".repeat(26)}`]) {
          for (const action of ["rotate", "revoke"] as const) {
            const response = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${keyId}/${action}`, {
              token: owner.session,
              body: action === "rotate" ? {} : undefined
            })
            expectError(response, 400, "invalid_request")
            expect(field(response.json, "issues"), response.text).toEqual([
              { path: ["keyId"], message: expect.stringContaining("key_") }
            ])
          }
        }
      }))

    it.effect("grace_days outside 0..30 or not an integer is 400 invalid_request", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "test", ["documents:read"])
        for (const grace_days of [-1, 31, 1.5, "7", null]) {
          const response = yield* rawRequest("POST", `${keysPath(owner.tenantId)}/${key.api_key.id}/rotate`, {
            token: owner.session,
            body: { grace_days }
          })
          expectError(response, 400, "invalid_request")
          // One issue, on the field.
          expect(field(response.json, "issues"), response.text).toEqual([
            { path: ["grace_days"], message: expect.any(String) }
          ])
        }
        // None of the refused calls rotated the key.
        expect((yield* getTenant(owner.tenantId, key.token)).status).toBe(200)
        const api = yield* client(owner.session)
        const list = yield* api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: { limit: 20 } })
        expect(list.data.map((k) => k.status)).toEqual(["active"])
      }))

    it.effect("a developer may list keys but gets 403 forbidden on create, rotate and revoke", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "test", ["documents:read"])
        const developer = yield* addMember(owner, "developer")
        const listed = yield* rawRequest("GET", keysPath(owner.tenantId), { token: developer.session })
        expect(listed.status, listed.text).toBe(200)
        expect(listed.text).not.toContain(key.token)
        for (const call of managementCalls(owner.tenantId, key.api_key.id).filter((c) => c.name !== "list")) {
          const response = yield* rawRequest(call.method, call.url, { token: developer.session, body: call.body })
          expect(response.status, `${call.name}: ${response.text}`).toBe(403)
          expectError(response, 403, "forbidden")
        }
        // The typed client decodes it too.
        const api = yield* client(developer.session)
        const error = yield* Effect.flip(api.apiKeys.create({
          params: { tenantId: owner.tenantId },
          payload: { name: "nope", environment: "test", scopes: ["documents:read"] }
        }))
        expect(error._tag).toBe("Forbidden")
        // The key was neither rotated nor revoked.
        expect((yield* getTenant(owner.tenantId, key.token)).status).toBe(200)
      }))

    it.effect("an admin may create, list, rotate and revoke keys", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const api = yield* client(admin.session)
        const path = { tenantId: owner.tenantId }
        const created = yield* api.apiKeys.create({
          params: path,
          payload: { name: "admin key", environment: "live", scopes: ["documents:read"] }
        })
        const ownerKey = yield* createKey(owner, "test", ["documents:read"])
        const list = yield* api.apiKeys.list({ params: path, query: { limit: 20 } })
        expect(list.data.map((k) => k.id).sort()).toEqual([created.api_key.id, ownerKey.api_key.id].sort())
        const rotated = yield* api.apiKeys.rotate({
          params: { ...path, keyId: ownerKey.api_key.id },
          payload: { grace_days: 1 }
        })
        expect(rotated.previous.id).toBe(ownerKey.api_key.id)
        const revoked = yield* api.apiKeys.revoke({ params: { ...path, keyId: created.api_key.id } })
        expect(revoked.status).toBe("revoked")
      }))

    it.effect("a non-member's session gets 404 not_found on another tenant's keys", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "test", ["documents:read"])
        // An owner of a different tenant, and a user in no tenant at all.
        const stranger = yield* registerOwner("stranger")
        const loner = yield* registerUser("loner")
        for (const session of [stranger.session, loner.session]) {
          for (const call of managementCalls(owner.tenantId, key.api_key.id)) {
            const response = yield* rawRequest(call.method, call.url, { token: session, body: call.body })
            expect(response.status, `${call.name}: ${response.text}`).toBe(404)
            expectError(response, 404, "not_found")
          }
        }
        expect((yield* getTenant(owner.tenantId, key.token)).status).toBe(200)
      }))

    it.effect("an unknown tenant looks the same as someone else's tenant", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const stranger = yield* registerOwner("stranger")
        const missing = yield* rawRequest("GET", keysPath(`ten_${"0".repeat(26)}`), { token: owner.session })
        const foreign = yield* rawRequest("GET", keysPath(stranger.tenantId), { token: owner.session })
        expectError(missing, 404, "not_found")
        expectError(foreign, 404, "not_found")
        expect(field(missing.json, "message")).toBe(field(foreign.json, "message"))
      }))

    it.effect("an API key is not a session: 401 invalid_session on key management", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "live", ["documents:read", "documents:write", "webhooks:write"])
        for (const call of managementCalls(owner.tenantId, key.api_key.id)) {
          const response = yield* rawRequest(call.method, call.url, { token: key.token, body: call.body })
          expectError(response, 401, "invalid_session")
        }
        // Nothing happened to the key.
        expect((yield* getTenant(owner.tenantId, key.token)).status).toBe(200)
      }))

    it.effect("key management without, or with a malformed, Authorization is 401", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "test", ["documents:read"])
        for (const call of managementCalls(owner.tenantId, key.api_key.id)) {
          expectError(yield* rawRequest(call.method, call.url, { body: call.body }), 401, "missing_credentials")
          const basic = yield* rawRequest(call.method, call.url, {
            body: call.body,
            headers: { authorization: `Basic ${Buffer.from("a:b").toString("base64")}` }
          })
          expectError(basic, 401, "missing_credentials")
          expectError(
            yield* rawRequest(call.method, call.url, { token: `etd_sess_${"a".repeat(32)}`, body: call.body }),
            401,
            "invalid_session"
          )
        }
      }))

    it.effect("after logout the session can no longer manage keys", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const api = yield* client(owner.session)
        yield* api.auth.logout()
        expectError(
          yield* rawRequest("GET", keysPath(owner.tenantId), { token: owner.session }),
          401,
          "invalid_session"
        )
      }))

    it.effect("a key sent in a URL shows its exposure on the key: count, last time and source, in the list and on revoke", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const owner = yield* registerOwner()
        const leaked = yield* createKey(owner, "test", ["documents:read"])
        const kept = yield* createKey(owner, "live", ["documents:read"])
        const developer = yield* addMember(owner, "developer")
        const api = yield* client(developer.session)
        const list = api.apiKeys.list({ params: { tenantId: owner.tenantId }, query: {} })
        const exposureOf = (keys: { readonly data: ReadonlyArray<ApiKey> }, id: string) =>
          keys.data.find((key) => key.id === id)?.exposure

        expect(exposureOf(yield* list, leaked.api_key.id)).toBe(null)
        const before = Date.now()
        expectError(
          yield* rawRequest("GET", `/v1/me?token=${leaked.token}`, { token: owner.session }),
          400,
          "api_key_in_url"
        )
        // The monitor records the alert in the background.
        const exposed = yield* eventually(list, (keys) => exposureOf(keys, leaked.api_key.id) !== null)
        const exposure = exposureOf(exposed, leaked.api_key.id)!
        expect(exposure.count).toBe(1)
        expect(exposure.last_source).toBe("url")
        expectNear(exposure.last_detected_at, before)
        expect(exposureOf(exposed, kept.api_key.id)).toBe(null)

        // An earlier alert from the logs counts, but the latest one names the source; another
        // key's alert and a session's do not count for this key.
        const hourAgo = new Date(before - 60 * 60 * 1000)
        yield* sql`
          INSERT INTO security_alerts (kind, tenant_id, api_key_id, detail, created_at) VALUES
            ('api_key.exposed', ${owner.tenantId}, ${leaked.api_key.id}, 'log', ${hourAgo}),
            ('api_key.exposed', ${owner.tenantId}, ${kept.api_key.id}, 'browser', ${hourAgo}),
            ('session.exposed', NULL, NULL, 'url', ${hourAgo})`
        const after = yield* list
        expect(exposureOf(after, leaked.api_key.id)).toEqual({ ...exposure, count: 2 })
        expect(exposureOf(after, kept.api_key.id)).toEqual({
          count: 1,
          last_detected_at: hourAgo,
          last_source: "browser"
        })

        // The raw JSON is as documented.
        const raw = yield* rawRequest("GET", keysPath(owner.tenantId), { token: owner.session })
        const rawLeaked = (raw.json?.["data"] as Array<unknown>).find((key) => field(key, "id") === leaked.api_key.id)
        expect(field(rawLeaked, "exposure")).toEqual({
          count: 2,
          last_detected_at: exposure.last_detected_at.toISOString(),
          last_source: "url"
        })

        // Revoking the exposed key (what an owner does next) answers with its exposure too.
        const revoked = yield* (yield* client(owner.session)).apiKeys.revoke({
          params: { tenantId: owner.tenantId, keyId: leaked.api_key.id }
        })
        expect(revoked.status).toBe("revoked")
        expect(revoked.exposure).toEqual({ ...exposure, count: 2 })
      }))

    it.effect("the unprefixed alias manages keys too", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const response = yield* rawRequest("POST", `/tenants/${owner.tenantId}/api-keys`, {
          token: owner.session,
          body: { name: "alias", environment: "test", scopes: ["documents:read"] }
        })
        expect(response.status, response.text).toBe(201)
        const developer = yield* addMember(owner, "developer")
        expectError(
          yield* rawRequest("POST", `/tenants/${owner.tenantId}/api-keys`, {
            token: developer.session,
            body: { name: "alias", environment: "test", scopes: ["documents:read"] }
          }),
          403,
          "forbidden"
        )
      }))
  })
}
