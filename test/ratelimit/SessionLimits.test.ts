/**
 * Limits by who, not by token (SPEC §11: "per user and per tenant on session endpoints, so …
 * logging in again does not buy more throughput"; certificate uploads "per tenant, per user and a
 * global budget"). Each session draws from its user's bucket, and on a tenant's path from the
 * bucket all members' sessions share there, which is not the one the tenant's API keys share.
 * Run with the buckets in memory and, when TEST_REDIS_URL is set, in Redis. Each suite has an app
 * of its own, so the registrations here do not spend the per-address budget of other suites.
 */
import { describe, expect, it, layer, type Vitest } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import type { AppConfigShape } from "../../src/Config.js"
import { expectError, type RawResponse } from "../http/helpers.js"
import { addMember, registerUser } from "../support/accounts.js"
import { createKey, PASSWORD, registerOwner } from "../support/fixtures.js"
import { redisSettings, redisSuite, testKeyPrefix, testRedisUrl } from "../support/Redis.js"
import { client, makeTestApp, rawRequest } from "../support/TestApp.js"

const expectLimited = (response: RawResponse, limit: number) => {
  const body = expectError(response, 429, "rate_limited")
  const retryAfter = Number(response.headers["retry-after"])
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
  expect(body["retry_after"]).toBe(retryAfter)
  expect(response.headers["ratelimit-limit"]).toBe(String(limit))
  expect(response.headers["ratelimit-remaining"]).toBe("0")
  return retryAfter
}

/** Nothing refills during a test. */
const slowly = (burst: number) => ({ perSecond: 0.001, burst })

const USER_BURST = 8
const MEMBERS_BURST = 6

const limits: Partial<AppConfigShape> = {
  rateLimit: slowly(100),
  tenantRateLimit: slowly(3),
  sessionRateLimit: slowly(USER_BURST),
  sessionTenantRateLimit: slowly(MEMBERS_BURST),
  uploadRateLimit: { perMinute: 2, perUserPerMinute: 3, globalPerMinute: 1000 }
}

/** Another session of the same user. */
const login = (email: string) =>
  Effect.gen(function*() {
    const api = yield* client()
    return (yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })).token
  })

const statusesAndRemaining = (responses: ReadonlyArray<RawResponse>) =>
  responses.map((r) => [r.status, r.headers["ratelimit-remaining"]])

/** An upload the service refuses as unreadable, cheaply: what counts here is whether it was let in. */
const upload = (session: string, tenantId: string) =>
  rawRequest("POST", `/v1/tenants/${tenantId}/credentials`, {
    token: session,
    body: { pkcs12: "MIIBAAAA", password: "not the password" }
  })

const expectLetIn = (response: RawResponse) => {
  expect(response.status, response.text).toBeGreaterThanOrEqual(400)
  expect(response.status, response.text).toBeLessThan(500)
  expect(response.status, response.text).not.toBe(429)
}

const ruleTests = (it: Vitest.MethodsNonLive<Layer.Success<ReturnType<typeof makeTestApp>>>) => {
  it.effect("all of a user's sessions draw from one bucket: logging in again buys nothing", () =>
    Effect.gen(function*() {
      // registerOwner's session spent one request declaring the tenant's registration.
      const owner = yield* registerOwner()
      const sessions = [owner.session, yield* login(owner.email)]
      const served: Array<RawResponse> = []
      for (let i = 0; i < USER_BURST - 1; i++) {
        served.push(yield* rawRequest("GET", "/v1/me", { token: sessions[i % 2]! }))
      }
      expect(statusesAndRemaining(served)).toEqual(
        Array.from({ length: USER_BURST - 1 }, (_, i) => [200, String(USER_BURST - 2 - i)])
      )
      expectLimited(yield* rawRequest("GET", "/v1/me", { token: sessions[0]! }), USER_BURST)
      expectLimited(yield* rawRequest("GET", "/v1/me", { token: sessions[1]! }), USER_BURST)
      expectLimited(yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: sessions[1]! }), USER_BURST)
      // A third login is still the same user.
      const third = yield* login(owner.email)
      expectLimited(yield* rawRequest("GET", "/v1/me/tenants", { token: third }), USER_BURST)
      // Another user has a bucket of their own.
      const other = yield* registerUser()
      expect((yield* rawRequest("GET", "/v1/me", { token: other.session })).status).toBe(200)
    }))

  it.effect("members' sessions share one bucket on the tenant's paths; more members buy nothing", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner() // the tenant's bucket: 5 left
      const key = yield* createKey(owner) // 4
      const member = yield* addMember(owner, "developer") // the invitation: 3 (accepting is on /v1/me)
      const served = [
        yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: member.session }),
        yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/members`, { token: owner.session }),
        yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/api-keys`, { token: member.session })
      ]
      expect(statusesAndRemaining(served)).toEqual([[200, "2"], [200, "1"], [200, "0"]])
      expectLimited(yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: member.session }), MEMBERS_BURST)
      expectLimited(yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: owner.session }), MEMBERS_BURST)
      // Each user still has tokens of their own: outside the tenant's paths they are served.
      expect((yield* rawRequest("GET", "/v1/me", { token: member.session })).status).toBe(200)
      expect((yield* rawRequest("GET", "/v1/me/tenants", { token: owner.session })).status).toBe(200)
      // The tenant's keys have their own bucket: people browsing do not slow the integration down.
      expect((yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: key.token })).status).toBe(200)
    }))

  it.effect("a key that emptied the tenant's bucket does not lock the owner out of revoking it", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner()
      const key = yield* createKey(owner)
      const url = `/v1/tenants/${owner.tenantId}`
      for (let i = 0; i < 3; i++) expect((yield* rawRequest("GET", url, { token: key.token })).status).toBe(200)
      expectLimited(yield* rawRequest("GET", url, { token: key.token }), 3)
      expect((yield* rawRequest("GET", url, { token: owner.session })).status).toBe(200)
      const revoked = yield* rawRequest("POST", `${url}/api-keys/${key.api_key.id}/revoke`, { token: owner.session })
      expect(revoked.status, revoked.text).toBe(200)
      expectError(yield* rawRequest("GET", url, { token: key.token }), 401, "api_key_revoked")
    }))

  it.effect("a stranger's requests on a tenant's path spend the stranger's budget, not the tenant's", () =>
    Effect.gen(function*() {
      const owner = yield* registerOwner() // the tenant's bucket: 5 left; the owner's: 7
      const stranger = yield* registerUser()
      const url = `/v1/tenants/${owner.tenantId}`
      for (let i = 0; i < USER_BURST; i++) {
        expectError(yield* rawRequest("GET", url, { token: stranger.session }), 404, "not_found")
      }
      expectLimited(yield* rawRequest("GET", url, { token: stranger.session }), USER_BURST)
      const served = yield* rawRequest("GET", url, { token: owner.session })
      expect(statusesAndRemaining([served])).toEqual([[200, "4"]])
    }))

  it.effect("certificate uploads are limited per user, whichever tenant they go to", () =>
    Effect.gen(function*() {
      const first = yield* registerOwner("first")
      const second = yield* registerOwner("second")
      // The first owner administers the second tenant too (an accountant with two clients).
      const invitation = yield* (yield* client(second.session)).invitations.create({
        params: { tenantId: second.tenantId },
        payload: { email: first.email, role: "admin" }
      })
      yield* (yield* client(first.session)).invitationAcceptance.acceptMine({ params: { invitationId: invitation.id } })
      expectLetIn(yield* upload(first.session, first.tenantId))
      expectLetIn(yield* upload(first.session, first.tenantId))
      expectLetIn(yield* upload(first.session, second.tenantId))
      // Three for the user: the second tenant's own budget (two) still has one left …
      const limited = yield* upload(first.session, second.tenantId)
      // … one token comes back every 20 s.
      expect(expectLimited(limited, 3)).toBeGreaterThan(10)
      // … which its other admin may spend.
      expectLetIn(yield* upload(second.session, second.tenantId))
      expectLimited(yield* upload(second.session, second.tenantId), 2)
    }))
}

layer(makeTestApp("embedded", limits), { timeout: 60_000, excludeTestServices: true })(
  "limits by user and by tenant's members (buckets in memory)",
  ruleTests
)

if (testRedisUrl === undefined) {
  describe.skip(
    redisSuite("limits by user and by tenant's members (buckets in Redis)"),
    () => it("needs Redis", () => {})
  )
} else {
  const redisApp = Layer.unwrap(
    Effect.map(
      testKeyPrefix,
      (prefix) => makeTestApp("embedded", { ...limits, ...redisSettings(testRedisUrl!, prefix) })
    )
  )
  layer(redisApp, { timeout: 60_000, excludeTestServices: true })(
    "limits by user and by tenant's members (buckets in Redis)",
    ruleTests
  )
}

layer(
  makeTestApp("embedded", { uploadRateLimit: { perMinute: 100, perUserPerMinute: 100, globalPerMinute: 3 } }),
  { timeout: 60_000, excludeTestServices: true }
)("the service's budget of certificate uploads", (it) => {
  it.effect("past the global budget every tenant's upload waits, whoever spent it", () =>
    Effect.gen(function*() {
      const owners = [yield* registerOwner("a"), yield* registerOwner("b"), yield* registerOwner("c")]
      for (const owner of owners) expectLetIn(yield* upload(owner.session, owner.tenantId))
      const late = yield* registerOwner("late")
      expect(expectLimited(yield* upload(late.session, late.tenantId), 3)).toBeGreaterThan(10)
      expectLimited(yield* upload(owners[0]!.session, owners[0]!.tenantId), 3)
    }))
})
