/**
 * The payment provider's events (SPEC §10): verified against `PAYMENT_PROVIDER_WEBHOOK_SECRET`,
 * then applied to the tenant's plan, quota and billing status exactly once per `webhook-id`.
 *
 * Exactly once: the `webhook-id` is inserted into `payment_provider_events` in the transaction that
 * changes the tenant, after taking the tenant's row lock. A concurrent duplicate waits for that lock
 * (or the id's unique index), then finds the id taken and changes nothing.
 *
 * Answers that stop the provider's retries (200) are given for everything the provider cannot fix
 * by retrying: duplicates, unknown types, unknown tenants (a tenant id from another environment or a
 * deleted tenant never starts existing), and events older than the last one applied.
 */
import { Context, Effect, Layer, Option, Redacted, Schema, SchemaIssue } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import type { WebhookOutcome } from "../domain/Billing.js"
import { InvalidRequest, InvalidSignature } from "../domain/Errors.js"
import { asId } from "../domain/Ids.js"
import { now } from "../domain/Time.js"
import { resolveSecret, SecretUnavailable } from "../runtime/Secrets.js"
import { TenantService } from "../tenants/TenantService.js"
import { generateWebhookSecret, sign, verify } from "../webhooks/Signing.js"
import {
  PaymentProviderEvent,
  type PaymentProviderEventType,
  PaymentProviderEventType as EventTypeSchema,
  WebhookReceipt
} from "./Api.js"
import { BillingRepo } from "./BillingRepo.js"

/** `PAYMENT_PROVIDER_WEBHOOK_SECRET`, `whsec_<base64>`. */
export class PaymentProviderSecret extends Context.Service<PaymentProviderSecret, Redacted.Redacted<string>>()(
  "etd/PaymentProviderSecret"
) {}

export const PAYMENT_PROVIDER_SECRET_FILE = "payment-provider-webhook-secret"

export const PaymentProviderSecretLive = Layer.effect(
  PaymentProviderSecret,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const secret = yield* resolveSecret({
      variable: "PAYMENT_PROVIDER_WEBHOOK_SECRET",
      configured: config.paymentProviderWebhookSecret,
      production: config.production,
      dataDir: config.dataDir,
      file: PAYMENT_PROVIDER_SECRET_FILE,
      generate: generateWebhookSecret
    })
    // Signing once proves the format here, at start-up, instead of as a defect on the first event.
    yield* Effect.try({
      try: () => sign({ secret: Redacted.value(secret), msgId: "startup", timestamp: 0, payload: "" }),
      catch: () =>
        new SecretUnavailable({
          message:
            "PAYMENT_PROVIDER_WEBHOOK_SECRET must be whsec_<base64>; the service will not start without a valid secret."
        })
    })
    if (!Redacted.value(secret).startsWith("whsec_")) {
      return yield* new SecretUnavailable({
        message:
          "PAYMENT_PROVIDER_WEBHOOK_SECRET must be whsec_<base64>; the service will not start without a valid secret."
      })
    }
    return secret
  })
)

const statusAfter = {
  "subscription.activated": "active",
  "subscription.updated": "active",
  "invoice.paid": "active",
  "invoice.payment_failed": "past_due",
  "subscription.canceled": "suspended"
} as const satisfies Record<PaymentProviderEventType, string>

const setsPlan = (type: PaymentProviderEventType) =>
  type === "subscription.activated" || type === "subscription.updated"

const isKnownType = Schema.is(EventTypeSchema)

const decodeEvent = Schema.decodeUnknownEffect(Schema.fromJsonString(PaymentProviderEvent), { errors: "all" })

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const invalidBody = (error: Schema.SchemaError) => {
  const issues = formatIssues(error.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => {
      const key = typeof segment === "object" ? segment.key : segment
      return typeof key === "number" ? key : String(key)
    }),
    message: issue.message
  }))
  return new InvalidRequest({ message: "The body is not a valid payment-provider event.", issues })
}

export class BillingService extends Context.Service<BillingService>()("etd/BillingService", {
  make: Effect.gen(function*() {
    const secret = yield* PaymentProviderSecret
    const tenants = yield* TenantService
    const repo = yield* BillingRepo
    const inTransaction = yield* makeTransaction

    const apply = (webhookId: string, event: PaymentProviderEvent) =>
      Effect.gen(function*() {
        const receivedAt = yield* now
        // The provider's word for which tenant, unchecked: it is only looked up, and an id that names
        // no tenant (malformed or not) is the ignored unknown tenant.
        const tenantId = asId("tenant", event.data.tenant_id)
        const tenant = yield* tenants.lockBillingState(tenantId)
        const outcome: WebhookOutcome = !isKnownType(event.type)
          ? "ignored_unknown_type"
          : Option.isNone(tenant)
          ? "ignored_unknown_tenant"
          : tenant.value.billingEventAt !== null && event.created_at.getTime() < tenant.value.billingEventAt.getTime()
          ? "ignored_stale"
          : "applied"
        const recorded = yield* repo.record({
          webhookId,
          eventId: event.id,
          type: event.type,
          tenantId: event.data.tenant_id,
          outcome,
          receivedAt
        })
        if (!recorded) return "duplicate" as const
        if (outcome === "applied" && isKnownType(event.type)) {
          yield* tenants.applyBilling(tenantId, {
            status: statusAfter[event.type],
            billingEventAt: event.created_at,
            plan: setsPlan(event.type) ? event.data.plan : undefined,
            monthlyQuota: setsPlan(event.type) ? event.data.monthly_quota : undefined
          })
        }
        return outcome
      }).pipe(inTransaction)

    /** Verifies and processes one delivery; `body` is the raw request body the signature covers. */
    const receive = Effect.fn("BillingService.receive")(function*(
      headers: Readonly<Record<string, string | undefined>>,
      body: string
    ) {
      yield* verify({ secret: Redacted.value(secret), headers, payload: body }).pipe(
        Effect.tapError((error) => Effect.logWarning("payment-provider webhook refused", { reason: error.reason })),
        Effect.mapError(() => new InvalidSignature())
      )
      // Verified, so `webhook-id` is present.
      const webhookId = headers["webhook-id"] ?? ""
      const event = yield* Effect.mapError(decodeEvent(body), invalidBody)
      yield* Effect.annotateCurrentSpan({
        "billing.webhook_id": webhookId,
        "billing.event_type": event.type,
        "tenant.id": event.data.tenant_id
      })
      const outcome = yield* apply(webhookId, event)
      const log = outcome === "applied" || outcome === "duplicate" ? Effect.logInfo : Effect.logWarning
      yield* log("payment-provider event", {
        webhook_id: webhookId,
        event_id: event.id,
        type: event.type,
        tenant_id: event.data.tenant_id,
        outcome
      })
      return new WebhookReceipt({ received: true, outcome })
    })

    return { receive } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs the `PaymentProviderSecret` (`PaymentProviderSecretLive`), which refuses to start without one in production. */
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([TenantService.layer, BillingRepo.layer, Transaction.layer])
  )
}
