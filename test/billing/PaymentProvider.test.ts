/**
 * The payment provider's webhook (SPEC §10), signed by the provider's side with the published
 * `standardwebhooks` library: signatures and timestamps, exactly-once per `webhook-id` (also under
 * concurrency), every event type's effect on the tenant, and what live and test issuing then do.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const SECRET = `whsec_${randomBytes(32).toString("base64")}`
const provider = new Webhook(SECRET)
const URL_PATH = "/v1/webhooks/payment-provider"

let counter = 0
const webhookId = () => `msg_${Date.now()}_${++counter}_${randomBytes(4).toString("hex")}`

const event = (type: string, tenantId: string, data: Record<string, unknown> = {}, createdAt = new Date()) =>
  JSON.stringify({
    id: `evt_provider_${++counter}`,
    type,
    created_at: createdAt.toISOString(),
    data: { tenant_id: tenantId, ...data }
  })

/** Signs and posts `body` as the provider does; `at` is the signing time. */
const deliver = (body: string, options: { id?: string; at?: Date; secret?: Webhook } = {}) => {
  const id = options.id ?? webhookId()
  const at = options.at ?? new Date()
  const signature = (options.secret ?? provider).sign(id, at, body)
  return rawRequest("POST", URL_PATH, {
    rawBody: body,
    headers: {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signature
    }
  })
}

const tenantState = (session: string, tenantId: string) =>
  Effect.flatMap(client(session), (api) => api.tenants.get({ params: { tenantId } }))

const invoice = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
}

for (const database of testDatabases) {
  layer(makeTestApp(database, { paymentProviderWebhookSecret: Option.some(Redacted.make(SECRET)) }), {
    timeout: 120_000,
    excludeTestServices: true
  })(`payment-provider webhook (${database})`, (it) => {
    it.effect("subscription.activated sets plan, quota and status; GET /v1/tenants/{id} shows them", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        const response = yield* deliver(
          event("subscription.activated", owner.tenantId, { plan: "pro", monthly_quota: 5000 })
        )
        expect(response.status, response.text).toBe(200)
        expect(response.json).toEqual({ received: true, outcome: "applied" })
        const tenant = yield* tenantState(owner.session, owner.tenantId)
        expect({ plan: tenant.plan, status: tenant.status, limit: tenant.quota.limit }).toEqual({
          plan: "pro",
          status: "active",
          limit: 5000
        })
        // A key of the tenant sees the same.
        const key = yield* createKey(owner, "live", ["documents:read"])
        const viaKey = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: key.token })
        expect(field(viaKey.json, "plan")).toBe("pro")
        yield* deliver(event("subscription.updated", owner.tenantId, { plan: "scale", monthly_quota: 20000 }))
        const updated = yield* tenantState(owner.session, owner.tenantId)
        expect({ plan: updated.plan, limit: updated.quota.limit }).toEqual({ plan: "scale", limit: 20000 })
      }))

    it.effect("a bad signature, another secret, missing headers, stale and future timestamps are 401 invalid_signature", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        const body = event("subscription.canceled", owner.tenantId)
        const id = webhookId()
        const now = new Date()
        const good = provider.sign(id, now, body)
        const headers = { "webhook-id": id, "webhook-timestamp": String(Math.floor(now.getTime() / 1000)) }
        const tampered = yield* rawRequest("POST", URL_PATH, {
          rawBody: body.replace("canceled", "activated"),
          headers: { ...headers, "webhook-signature": good }
        })
        expectError(tampered, 401, "invalid_signature")
        expectError(
          yield* deliver(body, { secret: new Webhook(`whsec_${randomBytes(32).toString("base64")}`) }),
          401,
          "invalid_signature"
        )
        expectError(yield* rawRequest("POST", URL_PATH, { rawBody: body, headers }), 401, "invalid_signature")
        expectError(yield* rawRequest("POST", URL_PATH, { rawBody: body }), 401, "invalid_signature")
        expectError(yield* deliver(body, { at: new Date(Date.now() - 6 * 60_000) }), 401, "invalid_signature")
        expectError(yield* deliver(body, { at: new Date(Date.now() + 6 * 60_000) }), 401, "invalid_signature")
        // Within the 5-minute tolerance either way it is accepted.
        const late = yield* deliver(event("invoice.paid", owner.tenantId), { at: new Date(Date.now() - 4 * 60_000) })
        expect(late.status, late.text).toBe(200)
        expect((yield* tenantState(owner.session, owner.tenantId)).status).toBe("active")
      }))

    it.effect("a replayed webhook-id answers 200 duplicate and changes nothing", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        const id = webhookId()
        const first = yield* deliver(event("invoice.payment_failed", owner.tenantId), { id })
        expect(field(first.json, "outcome")).toBe("applied")
        yield* deliver(event("invoice.paid", owner.tenantId))
        expect((yield* tenantState(owner.session, owner.tenantId)).status).toBe("active")
        // The same id again, even re-signed now: processed once only.
        const again = yield* deliver(event("invoice.payment_failed", owner.tenantId), { id })
        expect(again.status).toBe(200)
        expect(again.json).toEqual({ received: true, outcome: "duplicate" })
        expect((yield* tenantState(owner.session, owner.tenantId)).status).toBe("active")
      }))

    it.effect("concurrent duplicates are processed once", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        const id = webhookId()
        const body = event("subscription.updated", owner.tenantId, { plan: "concurrent", monthly_quota: 777 })
        const responses = yield* Effect.all(Array.from({ length: 8 }, () => deliver(body, { id })), {
          concurrency: "unbounded"
        })
        expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200))
        const outcomes = responses.map((r) => field(r.json, "outcome")).sort()
        expect(outcomes).toEqual(["applied", ...Array(7).fill("duplicate")])
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql`SELECT webhook_id FROM payment_provider_events WHERE webhook_id = ${id}`
        expect(rows).toHaveLength(1)
        expect((yield* tenantState(owner.session, owner.tenantId)).quota.limit).toBe(777)
      }))

    it.effect("unknown types and unknown tenants are acknowledged with 200 and ignored; malformed bodies are 400", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        const unknownType = yield* deliver(event("customer.created", owner.tenantId, { plan: "ignored" }))
        expect(unknownType.status).toBe(200)
        expect(field(unknownType.json, "outcome")).toBe("ignored_unknown_type")
        expect((yield* tenantState(owner.session, owner.tenantId)).plan).toBe("free")

        const unknownTenant = yield* deliver(event("subscription.canceled", "ten_does_not_exist"))
        expect(unknownTenant.status).toBe(200)
        expect(field(unknownTenant.json, "outcome")).toBe("ignored_unknown_tenant")

        expectError(yield* deliver("{not json"), 400, "invalid_request")
        const missing = yield* deliver(JSON.stringify({ id: "evt_1", type: "invoice.paid" }))
        expectError(missing, 400, "invalid_request")
        expect(JSON.stringify(field(missing.json, "issues"))).toContain("data")
        expectError(
          yield* deliver(event("subscription.updated", owner.tenantId, { monthly_quota: -5 })),
          400,
          "invalid_request"
        )
      }))

    it.effect("an event older than the last one applied does not undo it", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        yield* deliver(event("invoice.paid", owner.tenantId, {}, new Date(Date.now() - 1000)))
        yield* deliver(event("subscription.canceled", owner.tenantId, {}, new Date()))
        const late = yield* deliver(event("invoice.payment_failed", owner.tenantId, {}, new Date(Date.now() - 60_000)))
        expect(field(late.json, "outcome")).toBe("ignored_stale")
        expect((yield* tenantState(owner.session, owner.tenantId)).status).toBe("suspended")
      }))

    it.effect("suspended: live issuing is 402 tenant_suspended, test keys still issue; past_due still issues live", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("billing")
        const live = yield* createKey(owner, "live", ["documents:write"])
        const test = yield* createKey(owner, "test", ["documents:write"])
        const issue = (token: string) => rawRequest("POST", "/v1/documents", { token, body: invoice })

        yield* deliver(event("invoice.payment_failed", owner.tenantId))
        expect((yield* tenantState(owner.session, owner.tenantId)).status).toBe("past_due")
        const pastDue = yield* issue(live.token)
        expect(pastDue.status, pastDue.text).toBe(202)

        yield* deliver(event("subscription.canceled", owner.tenantId))
        expect((yield* tenantState(owner.session, owner.tenantId)).status).toBe("suspended")
        expectError(yield* issue(live.token), 402, "tenant_suspended")
        const sandbox = yield* issue(test.token)
        expect(sandbox.status, sandbox.text).toBe(202)

        yield* deliver(event("invoice.paid", owner.tenantId))
        expect((yield* issue(live.token)).status).toBe(202)
      }))
  })
}
