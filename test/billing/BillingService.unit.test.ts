/**
 * BillingService alone, its neighbours mocked: which outcome an event gets, that the tenant only
 * changes for an applied one, and that the lock, the record and the change share one transaction.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { BillingRepo, type ReceivedEvent } from "../../src/billing/BillingRepo.js"
import { BillingService, PaymentProviderSecret } from "../../src/billing/BillingService.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { generateWebhookSecret, webhookHeaders } from "../../src/webhooks/Signing.js"
import { recordingTransaction } from "../support/recordingTransaction.js"

const SECRET = generateWebhookSecret()
const TENANT = "ten_billing"
const LAST_APPLIED = new Date("2025-03-01T12:00:00Z")

interface BillingChange {
  readonly status: string
  readonly billingEventAt: Date
  readonly plan?: string | undefined
  readonly monthlyQuota?: number | undefined
}

/** BillingService over a tenant whose last applied event is `LAST_APPLIED`, and the calls it makes. */
const setup = (options: { readonly tenantExists?: boolean; readonly alreadyRecorded?: boolean } = {}) => {
  const log: Array<string> = []
  const recorded: Array<ReceivedEvent> = []
  const changes: Array<BillingChange> = []
  const layer = BillingService.layerNoDeps.pipe(
    Layer.provide([
      Layer.succeed(PaymentProviderSecret, Redacted.make(SECRET)),
      Layer.mock(TenantService, {
        lockBillingState: () =>
          Effect.sync(() => {
            log.push("lock tenant")
            return options.tenantExists === false ? Option.none() : Option.some({ billingEventAt: LAST_APPLIED })
          }),
        applyBilling: (_tenantId, change) => Effect.sync(() => void (log.push("change tenant"), changes.push(change)))
      }),
      Layer.mock(BillingRepo, {
        record: (event) =>
          Effect.sync(() => {
            log.push("record event")
            recorded.push(event)
            return options.alreadyRecorded !== true
          })
      }),
      recordingTransaction(log)
    ])
  )
  return { layer, log, recorded, changes }
}

/** Signs and hands over one delivery, as the HTTP handler does; the TestClock stands at 0. */
const deliver = (type: string, createdAt: Date, data: Record<string, unknown> = {}) => {
  const body = JSON.stringify({
    id: "evt_1",
    type,
    created_at: createdAt.toISOString(),
    data: { tenant_id: TENANT, ...data }
  })
  const headers = webhookHeaders([SECRET], { msgId: "msg_1", timestamp: 0, payload: body })
  return Effect.flatMap(BillingService, (billing) => billing.receive(headers, body))
}

describe("BillingService", () => {
  it.effect("applies an event in the transaction that records it: status, plan and quota on subscription.activated", () => {
    const { changes, layer, log, recorded } = setup()
    const createdAt = new Date("2025-03-02T00:00:00Z")
    return Effect.gen(function*() {
      const receipt = yield* deliver("subscription.activated", createdAt, { plan: "pro", monthly_quota: 5000 })
      expect(receipt.outcome).toBe("applied")
      expect(log).toEqual(["BEGIN", "lock tenant", "record event", "change tenant", "COMMIT"])
      expect(recorded.map((event) => [event.webhookId, event.outcome])).toEqual([["msg_1", "applied"]])
      expect(changes).toEqual([{ status: "active", billingEventAt: createdAt, plan: "pro", monthlyQuota: 5000 }])
    }).pipe(Effect.provide(layer))
  })

  it.effect("invoice.payment_failed makes the tenant past_due and leaves its plan and quota alone", () => {
    const { changes, layer } = setup()
    return Effect.gen(function*() {
      yield* deliver("invoice.payment_failed", new Date("2025-03-02T00:00:00Z"), { plan: "free", monthly_quota: 1 })
      expect(changes.map((change) => [change.status, change.plan, change.monthlyQuota])).toEqual([[
        "past_due",
        undefined,
        undefined
      ]])
    }).pipe(Effect.provide(layer))
  })

  it.effect("an event older than the last one applied is recorded as ignored_stale and changes nothing", () => {
    const { changes, layer, recorded } = setup()
    return Effect.gen(function*() {
      const receipt = yield* deliver("subscription.canceled", new Date(LAST_APPLIED.getTime() - 1000))
      expect(receipt.outcome).toBe("ignored_stale")
      expect(recorded.map((event) => event.outcome)).toEqual(["ignored_stale"])
      expect(changes).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("unknown tenants and unknown types are recorded and ignored", () => {
    const unknownTenant = setup({ tenantExists: false })
    const unknownType = setup()
    return Effect.gen(function*() {
      const forNobody = yield* deliver("invoice.paid", new Date("2025-03-02T00:00:00Z")).pipe(
        Effect.provide(unknownTenant.layer)
      )
      expect(forNobody.outcome).toBe("ignored_unknown_tenant")
      const strange = yield* deliver("customer.created", new Date("2025-03-02T00:00:00Z")).pipe(
        Effect.provide(unknownType.layer)
      )
      expect(strange.outcome).toBe("ignored_unknown_type")
      expect([...unknownTenant.changes, ...unknownType.changes]).toEqual([])
    })
  })

  it.effect("a webhook-id recorded before answers duplicate and changes nothing", () => {
    const { changes, layer, log } = setup({ alreadyRecorded: true })
    return Effect.gen(function*() {
      const receipt = yield* deliver("subscription.activated", new Date("2025-03-02T00:00:00Z"), { plan: "pro" })
      expect(receipt.outcome).toBe("duplicate")
      expect(changes).toEqual([])
      expect(log).toEqual(["BEGIN", "lock tenant", "record event", "COMMIT"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses a body whose signature does not verify, before anything is read or locked", () => {
    const { layer, log } = setup()
    return Effect.gen(function*() {
      const body = JSON.stringify({
        id: "evt_1",
        type: "invoice.paid",
        created_at: "2025-03-02T00:00:00Z",
        data: { tenant_id: TENANT }
      })
      const headers = webhookHeaders([generateWebhookSecret()], { msgId: "msg_1", timestamp: 0, payload: body })
      const error = yield* Effect.flip(Effect.flatMap(BillingService, (billing) => billing.receive(headers, body)))
      expect(error._tag).toBe("InvalidSignature")
      expect(log).toEqual([])
    }).pipe(Effect.provide(layer))
  })
})
