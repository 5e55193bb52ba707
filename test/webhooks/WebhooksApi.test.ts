/**
 * Webhooks over HTTP (SPEC §9): the endpoints API with its validation, limit, scopes and tenant /
 * environment isolation, and end to end: documents issued through the API reach a real receiver,
 * where the published `standardwebhooks` library verifies every delivery, also during a secret
 * rotation; deliveries are listed, read with their attempts, replayed and recovered.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Webhook } from "standardwebhooks"
import { WebhookEvent } from "../../src/domain/Events.js"
import type { Scope } from "../../src/domain/Principal.js"
import { expectError } from "../http/helpers.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { eventually, type Received, startReceiver, waitFor } from "./receiver.js"
import { webhookTestOverrides as overrides } from "./setup.js"

const WHE_ID = /^whe_[0-9a-hjkmnp-tv-z]{26}$/
const UNKNOWN_DLV = `dlv_${"0".repeat(26)}`

const invoice = (notes?: string) => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" },
  ...(notes ? { notes } : {})
})

const hooksPath = (tenantId: string) => `/v1/tenants/${tenantId}/webhook-endpoints`

const setup = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    const test = yield* createKey(owner, "test")
    const live = yield* createKey(owner, "live")
    return { owner, tenantId: owner.tenantId, test: test.token, live: live.token, testKeyId: test.api_key.id }
  })

const verified = (secret: string, request: Received) => new Webhook(secret).verify(request.body, request.headers)

for (const database of testDatabases) {
  layer(makeTestApp(database, overrides), { timeout: 120_000, excludeTestServices: true })(
    `webhooks API (${database})`,
    (it) => {
      it.effect("documents reach a real receiver, verified by standardwebhooks, also while a secret rotates", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 200)
          const { tenantId, test } = yield* setup("e2e")
          const created = yield* rawRequest("POST", hooksPath(tenantId), {
            token: test,
            body: { url: receiver.url(), events: ["document.authorized", "document.rejected"], description: "ERP" }
          })
          expect(created.status, created.text).toBe(201)
          const hook = created.json!
          expect(hook["id"]).toMatch(WHE_ID)
          expect(hook).toMatchObject({
            object: "webhook_endpoint",
            environment: "test",
            enabled: true,
            disabled_reason: null
          })
          expect(hook["secret"]).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
          // Shown once: reads never carry it.
          const read = yield* rawRequest("GET", `${hooksPath(tenantId)}/${hook["id"]}`, { token: test })
          expect(read.status).toBe(200)
          expect(read.json).not.toHaveProperty("secret")
          expect(read.text).not.toContain(String(hook["secret"]).slice(6))

          const issued = yield* rawRequest("POST", `/v1/tenants/${tenantId}/documents`, {
            token: test,
            body: invoice()
          })
          expect(issued.status).toBe(202)
          yield* waitFor(() => receiver.received.length >= 1)
          const first = receiver.received[0]!
          const payload = verified(String(hook["secret"]), first)
          const event = Schema.decodeUnknownSync(WebhookEvent)(payload)
          expect(event).toMatchObject({ type: "document.authorized", tenant_id: tenantId, environment: "test" })
          expect(first.headers["webhook-id"]).toBe(event.id)
          expect((event.data.object as { id: string }).id).toBe(issued.json!["id"])
          // The event's document is the document as stored once authorized, field for field.
          const stored = yield* rawRequest("GET", `/v1/tenants/${tenantId}/documents/${issued.json!["id"]}`, {
            token: test
          })
          expect((payload as { data: unknown }).data).toEqual({ object: stored.json })

          // Rotation: for 24 h both secrets verify each delivery.
          const rotated = yield* rawRequest("POST", `${hooksPath(tenantId)}/${hook["id"]}/rotate-secret`, {
            token: test
          })
          expect(rotated.status, rotated.text).toBe(200)
          const newSecret = String(rotated.json!["secret"])
          expect(newSecret).not.toBe(hook["secret"])
          expect(rotated.json!["previous_secret_expires_at"]).not.toBeNull()
          yield* rawRequest("POST", `/v1/tenants/${tenantId}/documents`, {
            token: test,
            body: invoice("simulate:reject")
          })
          yield* waitFor(() => receiver.received.length >= 2)
          const second = receiver.received[1]!
          expect(second.headers["webhook-signature"]!.split(" ")).toHaveLength(2)
          expect(verified(String(hook["secret"]), second)).toMatchObject({ type: "document.rejected" })
          expect(verified(newSecret, second)).toMatchObject({ type: "document.rejected" })
          expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, second)).toThrow()

          // The deliveries, filtered, and one with its attempts.
          const listed = yield* eventually(
            rawRequest(
              "GET",
              `${hooksPath(tenantId)}/${hook["id"]}/deliveries?status=succeeded&event_type=document.rejected`,
              {
                token: test
              }
            ),
            (response) => (response.json?.["data"] as Array<unknown> | undefined)?.length === 1
          )
          expect(listed.status).toBe(200)
          const rows = listed.json!["data"] as Array<Record<string, unknown>>
          expect(rows).toHaveLength(1)
          expect(rows[0]).toMatchObject({
            object: "webhook_delivery",
            status: "succeeded",
            event_type: "document.rejected",
            attempt_count: 1
          })
          const api = yield* client(test)
          const detail = yield* api.webhooks.getDelivery({ params: { tenantId, deliveryId: String(rows[0]!["id"]) } })
          expect(detail.event_id).toBe(second.headers["webhook-id"])
          // The detail shows what was sent, and which document it is about.
          const sent = verified(newSecret, second) as { data: { object: { id: string } } }
          expect(detail.payload).toEqual(sent)
          expect(detail.document_id).toBe(sent.data.object.id)
          expect(detail.attempts).toHaveLength(1)
          expect(detail.attempts[0]).toMatchObject({
            attempt: 1,
            status_code: 200,
            response_body: "status 200",
            error: null
          })
          expect(detail.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0)

          // Replay: sent again now, same webhook-id, fresh signature that still verifies.
          const replayed = yield* rawRequest("POST", `/v1/tenants/${tenantId}/deliveries/${detail.id}/replay`, {
            token: test
          })
          expect(replayed.status, replayed.text).toBe(202)
          yield* waitFor(() => receiver.received.length >= 3)
          expect(receiver.received[2]!.headers["webhook-id"]).toBe(detail.event_id)
          verified(newSecret, receiver.received[2]!)
        }))

      it.effect("a receiver that fails is recovered with recover-since once it is back", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 500)
          const { tenantId, test } = yield* setup("recover")
          const since = new Date(Date.now() - 1000).toISOString()
          const hook = (yield* rawRequest("POST", hooksPath(tenantId), {
            token: test,
            body: { url: receiver.url(), events: ["*"] }
          })).json!
          const path = `${hooksPath(tenantId)}/${hook["id"]}`
          yield* rawRequest("POST", `/v1/tenants/${tenantId}/documents`, { token: test, body: invoice() })
          yield* waitFor(() => receiver.received.length >= 1)
          // The receiver has answered; wait until the dispatcher has recorded that attempt too (until
          // then the delivery is in flight, and disabling does not end a delivery in flight).
          let attempted = false
          while (!attempted) {
            const listed = yield* rawRequest("GET", `${path}/deliveries`, { token: test })
            attempted = (listed.json!["data"] as Array<{ attempt_count: number }>)[0]?.attempt_count === 1
            if (!attempted) yield* Effect.sleep("20 millis")
          }
          // Disabling stops the retries: the delivery fails for good.
          const disabled = yield* rawRequest("PATCH", path, { token: test, body: { enabled: false } })
          expect(disabled.json).toMatchObject({ enabled: false, disabled_reason: "manual" })
          const failed = yield* rawRequest("GET", `${path}/deliveries?status=failed`, { token: test })
          expect((failed.json!["data"] as Array<unknown>).length).toBe(1)
          expectError(
            yield* rawRequest("POST", `${path}/recover`, { token: test, body: { since } }),
            409,
            "invalid_state"
          )

          receiver.respond = () => 200
          const enabled = yield* rawRequest("PATCH", path, { token: test, body: { enabled: true } })
          expect(enabled.json).toMatchObject({ enabled: true, disabled_reason: null })
          const recovered = yield* rawRequest("POST", `${path}/recover`, { token: test, body: { since } })
          expect(recovered.status, recovered.text).toBe(202)
          expect(recovered.json).toMatchObject({ object: "webhook_recovery", endpoint_id: hook["id"], recovered: 1 })
          yield* waitFor(() => receiver.received.length >= 2)
          verified(String(hook["secret"]), receiver.received[1]!)
          const succeeded = yield* eventually(
            rawRequest("GET", `${path}/deliveries?status=succeeded`, { token: test }),
            (response) => (response.json?.["data"] as Array<unknown> | undefined)?.length === 1
          )
          expect((succeeded.json!["data"] as Array<unknown>).length).toBe(1)
          expectError(
            yield* rawRequest("POST", `${path}/recover`, { token: test, body: { since: "yesterday" } }),
            400,
            "invalid_request"
          )
        }))

      it.effect("an exposed key raises api_key.exposed to its tenant, in the key's environment", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 200)
          const { live, tenantId, test } = yield* setup("exposed")
          yield* rawRequest("POST", hooksPath(tenantId), {
            token: live,
            body: { url: receiver.url("/live"), events: ["api_key.exposed"] }
          })
          yield* rawRequest("POST", hooksPath(tenantId), {
            token: test,
            body: { url: receiver.url("/test"), events: ["api_key.exposed"] }
          })
          const leaked = yield* rawRequest("GET", `/v1/tenants/${tenantId}/documents?key=${live}`, {})
          expectError(leaked, 400, "api_key_in_url")
          yield* waitFor(() => receiver.received.length >= 1)
          yield* Effect.sleep("200 millis")
          expect(receiver.received.map((r) => r.path)).toEqual(["/live"])
          const event = Schema.decodeUnknownSync(WebhookEvent)(JSON.parse(receiver.received[0]!.body))
          expect(event).toMatchObject({
            type: "api_key.exposed",
            environment: "live",
            data: { object: { object: "api_key_exposure", source: "url" } }
          })
          expect(receiver.received[0]!.body).not.toContain(live)
        }))

      it.effect("creation validates the URL (SSRF, scheme) and the event filter", () =>
        Effect.gen(function*() {
          const { tenantId, test } = yield* setup("validate")
          const bad = [
            { url: "ftp://example.com/hook", events: ["*"] },
            { url: "not a url", events: ["*"] },
            { url: "http://10.0.0.1/hook", events: ["*"] },
            { url: "http://169.254.169.254/latest", events: ["*"] },
            { url: "http://[::ffff:192.168.0.1]/", events: ["*"] },
            { url: "http://user:pass@example.com/", events: ["*"] },
            { url: "http://metadata.google.internal/", events: ["*"] },
            { url: "https://example.com/", events: [] },
            { url: "https://example.com/", events: ["document.exploded"] },
            { url: "https://example.com/", events: ["*", "document.authorized"] },
            { url: "https://example.com/" }
          ]
          for (const body of bad) {
            const response = yield* rawRequest("POST", hooksPath(tenantId), { token: test, body })
            const error = expectError(response, 400, "invalid_request")
            expect(Array.isArray(error["issues"]), JSON.stringify(body)).toBe(true)
          }
          const urlIssue = expectError(
            yield* rawRequest("POST", hooksPath(tenantId), { token: test, body: bad[2] }),
            400,
            "invalid_request"
          )
          expect(urlIssue["issues"]).toEqual([{ path: ["url"], message: expect.stringContaining("10.0.0.0/8") }])
          const ok = yield* rawRequest("POST", hooksPath(tenantId), {
            token: test,
            body: { url: "https://example.com/hook", events: ["document.authorized", "document.authorized"] }
          })
          expect(ok.status).toBe(201)
          expect(ok.json!["events"]).toEqual(["document.authorized"])
          const patched = yield* rawRequest("PATCH", `${hooksPath(tenantId)}/${ok.json!["id"]}`, {
            token: test,
            body: { url: "http://192.168.1.1/" }
          })
          expectError(patched, 400, "invalid_request")
        }))

      it.effect("at most 20 endpoints per tenant and environment (409 conflict); deleting frees a slot", () =>
        Effect.gen(function*() {
          const { live, tenantId, test } = yield* setup("limit")
          const ids: Array<string> = []
          for (let i = 0; i < 20; i++) {
            const created = yield* rawRequest("POST", hooksPath(tenantId), {
              token: live,
              body: { url: `https://example.com/${i}`, events: ["*"] }
            })
            expect(created.status).toBe(201)
            ids.push(String(created.json!["id"]))
          }
          const over = expectError(
            yield* rawRequest("POST", hooksPath(tenantId), {
              token: live,
              body: { url: "https://example.com/21", events: ["*"] }
            }),
            409,
            "conflict"
          )
          expect(over["message"]).toContain("20")
          // The other environment has its own 20.
          expect(
            (yield* rawRequest("POST", hooksPath(tenantId), {
              token: test,
              body: { url: "https://example.com/t", events: ["*"] }
            })).status
          ).toBe(201)
          // Pagination over the 20.
          const page1 = yield* rawRequest("GET", `${hooksPath(tenantId)}?limit=15`, { token: live })
          expect(page1.json).toMatchObject({ has_more: true })
          const page2 = yield* rawRequest(
            "GET",
            `${hooksPath(tenantId)}?limit=15&starting_after=${page1.json!["next_cursor"]}`,
            { token: live }
          )
          expect((page2.json!["data"] as Array<unknown>).length).toBe(5)
          expect(page2.json).toMatchObject({ has_more: false, next_cursor: null })
          const deleted = yield* rawRequest("DELETE", `${hooksPath(tenantId)}/${ids[0]}`, { token: live })
          expect(deleted.json).toEqual({ id: ids[0], object: "webhook_endpoint", deleted: true })
          expectError(yield* rawRequest("GET", `${hooksPath(tenantId)}/${ids[0]}`, { token: live }), 404, "not_found")
          expect(
            (yield* rawRequest("POST", hooksPath(tenantId), {
              token: live,
              body: { url: "https://example.com/x", events: ["*"] }
            })).status
          ).toBe(201)
        }))

      it.effect("scopes: webhooks:read reads, webhooks:write changes, on every endpoint", () =>
        Effect.gen(function*() {
          const { owner, tenantId, test } = yield* setup("scopes")
          const hook = (yield* rawRequest("POST", hooksPath(tenantId), {
            token: test,
            body: { url: "https://example.com/h", events: ["*"] }
          })).json!
          const sql = yield* SqlClient.SqlClient
          const [delivery] = yield* sql<{ id: string }>`SELECT id FROM webhook_deliveries LIMIT 1`
          const dlv = delivery?.id ?? UNKNOWN_DLV
          const path = `${hooksPath(tenantId)}/${hook["id"]}`
          const calls: ReadonlyArray<
            { method: "GET" | "POST" | "PATCH" | "DELETE"; url: string; scope: Scope; body?: unknown }
          > = [
            {
              method: "POST",
              url: hooksPath(tenantId),
              scope: "webhooks:write",
              body: { url: "https://example.com/x", events: ["*"] }
            },
            { method: "GET", url: hooksPath(tenantId), scope: "webhooks:read" },
            { method: "GET", url: path, scope: "webhooks:read" },
            { method: "PATCH", url: path, scope: "webhooks:write", body: { description: "x" } },
            { method: "POST", url: `${path}/rotate-secret`, scope: "webhooks:write" },
            { method: "GET", url: `${path}/deliveries`, scope: "webhooks:read" },
            {
              method: "POST",
              url: `${path}/recover`,
              scope: "webhooks:write",
              body: { since: "2026-01-01T00:00:00Z" }
            },
            { method: "GET", url: `/v1/tenants/${tenantId}/deliveries/${dlv}`, scope: "webhooks:read" },
            { method: "POST", url: `/v1/tenants/${tenantId}/deliveries/${dlv}/replay`, scope: "webhooks:write" },
            { method: "DELETE", url: path, scope: "webhooks:write" }
          ]
          const readOnly = (yield* createKey(owner, "test", ["webhooks:read"])).token
          const writeOnly = (yield* createKey(owner, "test", ["webhooks:write"])).token
          const neither = (yield* createKey(owner, "test", ["documents:read", "documents:write"])).token
          for (const call of calls) {
            for (const token of [neither, call.scope === "webhooks:read" ? writeOnly : readOnly]) {
              const response = yield* rawRequest(call.method, call.url, { token, body: call.body })
              const error = expectError(response, 403, "insufficient_scope")
              expect(error["required_scope"], `${call.method} ${call.url}`).toBe(call.scope)
            }
            const allowed = yield* rawRequest(call.method, call.url, {
              token: call.scope === "webhooks:read" ? readOnly : writeOnly,
              body: call.body
            })
            expect([200, 201, 202, 404], `${call.method} ${call.url}: ${allowed.text}`).toContain(allowed.status)
          }
          expectError(yield* rawRequest("GET", hooksPath(tenantId), {}), 401, "missing_credentials")
        }))

      it.effect("environment and tenant isolation: every endpoint answers 404 across them", () =>
        Effect.gen(function*() {
          const receiver = yield* startReceiver(() => 200)
          const { live, tenantId, test } = yield* setup("isolation")
          const other = yield* setup("other")
          const hook = (yield* rawRequest("POST", hooksPath(tenantId), {
            token: test,
            body: { url: receiver.url(), events: ["*"] }
          })).json!
          yield* rawRequest("POST", `/v1/tenants/${tenantId}/documents`, { token: test, body: invoice() })
          yield* waitFor(() => receiver.received.length >= 1)
          const list = yield* rawRequest("GET", `${hooksPath(tenantId)}/${hook["id"]}/deliveries`, { token: test })
          const dlv = String((list.json!["data"] as Array<Record<string, unknown>>)[0]!["id"])
          const path = `${hooksPath(tenantId)}/${hook["id"]}`
          const calls: ReadonlyArray<{ method: "GET" | "POST" | "PATCH" | "DELETE"; url: string; body?: unknown }> = [
            { method: "GET", url: path },
            { method: "PATCH", url: path, body: { enabled: false } },
            { method: "POST", url: `${path}/rotate-secret` },
            { method: "GET", url: `${path}/deliveries` },
            { method: "POST", url: `${path}/recover`, body: { since: "2026-01-01T00:00:00Z" } },
            { method: "GET", url: `/v1/tenants/${tenantId}/deliveries/${dlv}` },
            { method: "POST", url: `/v1/tenants/${tenantId}/deliveries/${dlv}/replay` },
            { method: "DELETE", url: path }
          ]
          for (const call of calls) {
            // The live key of the same tenant does not see test-environment endpoints or deliveries.
            expectError(yield* rawRequest(call.method, call.url, { token: live, body: call.body }), 404, "not_found")
            // Another tenant's key on this tenant's path: 404, never 403.
            expectError(
              yield* rawRequest(call.method, call.url, { token: other.test, body: call.body }),
              404,
              "not_found"
            )
            // Another tenant's key on its own path with these ids: not there either.
            const foreign = call.url.replace(tenantId, other.tenantId)
            expectError(
              yield* rawRequest(call.method, foreign, { token: other.test, body: call.body }),
              404,
              "not_found"
            )
          }
          const liveList = yield* rawRequest("GET", hooksPath(tenantId), { token: live })
          expect(liveList.json).toMatchObject({ data: [], has_more: false })
          const otherList = yield* rawRequest("GET", hooksPath(other.tenantId), { token: other.test })
          expect(otherList.json).toMatchObject({ data: [] })
          // Still intact for its owner.
          expect((yield* rawRequest("GET", path, { token: test })).json).toMatchObject({ enabled: true })
          expectError(
            yield* rawRequest("GET", `/v1/tenants/${tenantId}/deliveries/${UNKNOWN_DLV}`, { token: test }),
            404,
            "not_found"
          )
          expectError(
            yield* rawRequest("GET", `/v1/tenants/${tenantId}/deliveries/nope`, { token: test }),
            400,
            "invalid_request"
          )
        }))
    }
  )
}
