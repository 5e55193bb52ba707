/**
 * Webhooks on the tenant path for a member's session (SPEC §5, §15): every member reads both
 * environments' endpoints and deliveries (`?environment=` narrows the list); an owner or admin
 * creates (naming the environment), changes, rotates, deletes, replays and recovers, a developer
 * may not; a stranger's session finds nothing. For a key, `environment` may only name its own.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { addMember, expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { eventually, startReceiver, waitFor } from "./receiver.js"
import { invoice, webhookTestOverrides as overrides } from "./setup.js"

const hooksPath = (tenantId: string) => `/v1/tenants/${tenantId}/webhook-endpoints`

type Response = { readonly status: number; readonly text: string; readonly json: unknown }

const idsOf = (response: Response) => {
  expect(response.status, response.text).toBe(200)
  const data = field(response.json, "data")
  return Array.isArray(data) ? data.map((item) => String(field(item, "id"))) : []
}

const issuePaths = (response: Response) => {
  const issues = field(response.json, "issues")
  return Array.isArray(issues) ? issues.map((issue) => field(issue, "path")) : []
}

/**
 * A tenant with a test endpoint (a real receiver, which gets one delivery) and a live endpoint
 * (for an event no test here raises, so nothing is sent to its address), and its members.
 */
const tenantWithHooks = Effect.gen(function*() {
  const receiver = yield* startReceiver(() => 200)
  const owner = yield* registerOwner("hooks")
  const test = yield* createKey(owner, "test")
  const live = yield* createKey(owner, "live")
  const path = hooksPath(owner.tenantId)
  const testHook = yield* rawRequest("POST", path, { token: test.token, body: { url: receiver.url(), events: ["*"] } })
  expect(testHook.status, testHook.text).toBe(201)
  const liveHook = yield* rawRequest("POST", path, {
    token: live.token,
    body: { url: "https://example.com/live", events: ["credential.expiring"] }
  })
  expect(liveHook.status, liveHook.text).toBe(201)
  const testHookId = String(field(testHook.json, "id"))
  const liveHookId = String(field(liveHook.json, "id"))
  expect(
    (yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/documents`, { token: test.token, body: invoice })).status
  ).toBe(202)
  yield* waitFor(() => receiver.received.length >= 1)
  const deliveries = yield* rawRequest("GET", `${path}/${testHookId}/deliveries`, { token: test.token })
  const deliveryId = idsOf(deliveries)[0]!
  const admin = yield* addMember(owner, "admin")
  const developer = yield* addMember(owner, "developer")
  return { receiver, owner, admin, developer, test, live, path, testHookId, liveHookId, deliveryId }
})

for (const database of testDatabases) {
  layer(makeTestApp(database, overrides), { timeout: 120_000, excludeTestServices: true })(
    `webhooks for a member's session (${database})`,
    (it) => {
      it.effect("every member reads both environments' endpoints and deliveries; ?environment= narrows the list", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithHooks
          const tenantId = t.owner.tenantId
          for (const member of [t.owner, t.admin, t.developer]) {
            const token = member.session
            expect(idsOf(yield* rawRequest("GET", t.path, { token }))).toEqual([t.liveHookId, t.testHookId])
            expect(idsOf(yield* rawRequest("GET", `${t.path}?environment=live`, { token }))).toEqual([t.liveHookId])
            expect(idsOf(yield* rawRequest("GET", `${t.path}?environment=test`, { token }))).toEqual([t.testHookId])
            for (const [id, environment] of [[t.liveHookId, "live"], [t.testHookId, "test"]] as const) {
              const one = yield* rawRequest("GET", `${t.path}/${id}`, { token })
              expect(one.status, one.text).toBe(200)
              expect(one.json).toMatchObject({ id, environment })
              expect(one.json).not.toHaveProperty("secret")
            }
            expect(idsOf(yield* rawRequest("GET", `${t.path}/${t.testHookId}/deliveries`, { token }))).toEqual([
              t.deliveryId
            ])
            const delivery = yield* rawRequest("GET", `/v1/tenants/${tenantId}/deliveries/${t.deliveryId}`, { token })
            expect(delivery.status, delivery.text).toBe(200)
            expect(delivery.json).toMatchObject({ id: t.deliveryId, environment: "test", endpoint_id: t.testHookId })
          }
          // The typed client: the same methods, with the new filter.
          const api = yield* client(t.developer.session)
          const live = yield* api.webhooks.listEndpoints({ params: { tenantId }, query: { environment: "live" } })
          expect(live.data.map((hook) => hook.id)).toEqual([t.liveHookId])
        }))

      it.effect("for a key, ?environment= narrows its own environment: the other one is an empty page", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithHooks
          expect(idsOf(yield* rawRequest("GET", t.path, { token: t.test.token }))).toEqual([t.testHookId])
          expect(idsOf(yield* rawRequest("GET", `${t.path}?environment=test`, { token: t.test.token }))).toEqual([
            t.testHookId
          ])
          const other = yield* rawRequest("GET", `${t.path}?environment=live`, { token: t.test.token })
          expect(idsOf(other)).toEqual([])
          expect(field(other.json, "has_more")).toBe(false)
          expect(idsOf(yield* rawRequest("GET", `${t.path}?environment=test`, { token: t.live.token }))).toEqual([])
          expectError(yield* rawRequest("GET", `${t.path}/${t.testHookId}`, { token: t.live.token }), 404, "not_found")
        }))

      it.effect("a stranger's session gets 404 on every endpoint", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithHooks
          const stranger = yield* registerOwner("stranger")
          const tenantId = t.owner.tenantId
          const hook = `${t.path}/${t.testHookId}`
          const calls = [
            { method: "GET", url: t.path },
            { method: "POST", url: t.path, body: { url: "https://example.com/x", events: ["*"], environment: "test" } },
            { method: "GET", url: hook },
            { method: "PATCH", url: hook, body: { enabled: false } },
            { method: "POST", url: `${hook}/rotate-secret` },
            { method: "GET", url: `${hook}/deliveries` },
            { method: "POST", url: `${hook}/recover`, body: { since: "2026-01-01T00:00:00Z" } },
            { method: "GET", url: `/v1/tenants/${tenantId}/deliveries/${t.deliveryId}` },
            { method: "POST", url: `/v1/tenants/${tenantId}/deliveries/${t.deliveryId}/replay` },
            { method: "DELETE", url: hook }
          ] as const
          for (const call of calls) {
            const body = "body" in call ? call.body : undefined
            expectError(yield* rawRequest(call.method, call.url, { token: stranger.session, body }), 404, "not_found")
            // Nor are the ids found on the stranger's own tenant.
            const own = call.url.replace(tenantId, stranger.tenantId)
            if (own.includes(t.testHookId) || own.includes(t.deliveryId)) {
              expectError(yield* rawRequest(call.method, own, { token: stranger.session, body }), 404, "not_found")
            }
          }
          expect(idsOf(yield* rawRequest("GET", t.path, { token: t.owner.session }))).toHaveLength(2)
        }))

      it.effect("a developer gets 403 forbidden on each write and changes nothing; an admin makes each of them", () =>
        Effect.gen(function*() {
          const t = yield* tenantWithHooks
          const tenantId = t.owner.tenantId
          const hook = `${t.path}/${t.testHookId}`
          const before = yield* rawRequest("GET", hook, { token: t.owner.session })
          const writes = [
            { method: "POST", url: t.path, body: { url: "https://example.com/x", events: ["*"], environment: "test" } },
            { method: "PATCH", url: hook, body: { enabled: false } },
            { method: "POST", url: `${hook}/rotate-secret`, body: undefined },
            { method: "POST", url: `${hook}/recover`, body: { since: "2026-01-01T00:00:00Z" } },
            { method: "POST", url: `/v1/tenants/${tenantId}/deliveries/${t.deliveryId}/replay`, body: undefined },
            { method: "DELETE", url: hook, body: undefined }
          ] as const
          for (const write of writes) {
            const refused = yield* rawRequest(write.method, write.url, { token: t.developer.session, body: write.body })
            expectError(refused, 403, "forbidden")
          }
          expect((yield* rawRequest("GET", hook, { token: t.owner.session })).json).toEqual(before.json)
          expect(idsOf(yield* rawRequest("GET", t.path, { token: t.owner.session }))).toHaveLength(2)

          const api = yield* client(t.admin.session)
          const created = yield* api.webhooks.createEndpoint({
            params: { tenantId },
            payload: { url: "https://example.com/admin", events: ["document.authorized"], environment: "live" }
          })
          expect(created.environment).toBe("live")
          expect(created.secret).toMatch(/^whsec_/)
          // The live key sees the session's live endpoint; the test key does not.
          expect(idsOf(yield* rawRequest("GET", t.path, { token: t.live.token }))).toContain(created.id)
          expectError(yield* rawRequest("GET", `${t.path}/${created.id}`, { token: t.test.token }), 404, "not_found")

          const disabled = yield* api.webhooks.updateEndpoint({
            params: { tenantId, endpointId: t.testHookId },
            payload: { enabled: false }
          })
          expect(disabled).toMatchObject({ enabled: false, disabled_reason: "manual" })
          yield* api.webhooks.updateEndpoint({
            params: { tenantId, endpointId: t.testHookId },
            payload: { enabled: true }
          })
          const rotated = yield* api.webhooks.rotateSecret({ params: { tenantId, endpointId: t.testHookId } })
          expect(rotated.previous_secret_expires_at).not.toBe(null)
          const recovered = yield* api.webhooks.recoverDeliveries({
            params: { tenantId, endpointId: t.testHookId },
            payload: { since: "2026-01-01T00:00:00Z" }
          })
          expect(recovered).toMatchObject({ object: "webhook_recovery", endpoint_id: t.testHookId, recovered: 0 })
          const received = t.receiver.received.length
          const replayed = yield* api.webhooks.replayDelivery({ params: { tenantId, deliveryId: t.deliveryId } })
          expect(replayed.id).toBe(t.deliveryId)
          yield* waitFor(() => t.receiver.received.length > received)
          const detail = yield* eventually(
            api.webhooks.getDelivery({ params: { tenantId, deliveryId: t.deliveryId } }),
            (delivery) => delivery.attempts.length >= 2
          )
          expect(detail.attempts.length).toBeGreaterThanOrEqual(2)
          const deleted = yield* api.webhooks.deleteEndpoint({ params: { tenantId, endpointId: created.id } })
          expect(deleted).toEqual({ id: created.id, object: "webhook_endpoint", deleted: true })
          // The owner may too.
          const ownerDelete = yield* rawRequest("DELETE", hook, { token: t.owner.session })
          expect(ownerDelete.status, ownerDelete.text).toBe(200)
        }))

      it.effect("create: a session must name the environment (400 at `environment`); a key may omit it or name its own, not the other", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("create")
          const path = hooksPath(owner.tenantId)
          const body = { url: "https://example.com/h", events: ["*"] }
          const missing = yield* rawRequest("POST", path, { token: owner.session, body })
          expectError(missing, 400, "invalid_request")
          expect(issuePaths(missing)).toEqual([["environment"]])
          expectError(
            yield* rawRequest("POST", path, { token: owner.session, body: { ...body, environment: "prod" } }),
            400,
            "invalid_request"
          )
          const viaSession = yield* rawRequest("POST", path, {
            token: owner.session,
            body: { ...body, environment: "test" }
          })
          expect(viaSession.status, viaSession.text).toBe(201)
          expect(field(viaSession.json, "environment")).toBe("test")

          const key = yield* createKey(owner, "test", ["webhooks:write", "webhooks:read"])
          const other = yield* rawRequest("POST", path, { token: key.token, body: { ...body, environment: "live" } })
          expectError(other, 400, "invalid_request")
          expect(issuePaths(other)).toEqual([["environment"]])
          const own = yield* rawRequest("POST", path, { token: key.token, body: { ...body, environment: "test" } })
          expect(own.status, own.text).toBe(201)
          expect(field(own.json, "environment")).toBe("test")
          const omitted = yield* rawRequest("POST", path, { token: key.token, body })
          expect(omitted.status, omitted.text).toBe(201)
          expect(field(omitted.json, "environment")).toBe("test")
          // Nothing was created in the live environment by the refused request.
          expect(idsOf(yield* rawRequest("GET", `${path}?environment=live`, { token: owner.session }))).toEqual([])
          // The SSRF guard applies to a session's endpoint as to a key's.
          const unsafe = yield* rawRequest("POST", path, {
            token: owner.session,
            body: { url: "http://10.0.0.1/", events: ["*"], environment: "live" }
          })
          expectError(unsafe, 400, "invalid_request")
          expect(issuePaths(unsafe)).toEqual([["url"]])
        }))

      it.effect("the limit of 20 endpoints applies per the environment a session names", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("limit")
          const path = hooksPath(owner.tenantId)
          for (let i = 0; i < 20; i++) {
            const created = yield* rawRequest("POST", path, {
              token: owner.session,
              body: { url: `https://example.com/${i}`, events: ["*"], environment: "live" }
            })
            expect(created.status, created.text).toBe(201)
          }
          const body = { url: "https://example.com/21", events: ["*"] }
          expectError(
            yield* rawRequest("POST", path, { token: owner.session, body: { ...body, environment: "live" } }),
            409,
            "conflict"
          )
          const live = yield* createKey(owner, "live")
          expectError(yield* rawRequest("POST", path, { token: live.token, body }), 409, "conflict")
          const test = yield* rawRequest("POST", path, { token: owner.session, body: { ...body, environment: "test" } })
          expect(test.status, test.text).toBe(201)
          const all = yield* rawRequest("GET", `${path}?limit=100`, { token: owner.session })
          expect(idsOf(all)).toHaveLength(21)
        }))
    }
  )
}
