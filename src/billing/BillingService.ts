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
import { Context, Effect, Layer, Redacted, Schema, SchemaIssue } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../Config.js"
import { InvalidRequest, InvalidSignature } from "../domain/Errors.js"
import { now } from "../domain/Time.js"
import { resolveSecret, SecretUnavailable } from "../system/Secrets.js"
import { generateWebhookSecret, sign, verify } from "../webhooks/Signing.js"
import {
  PaymentProviderEvent,
  type PaymentProviderEventType,
  PaymentProviderEventType as EventTypeSchema,
  WebhookReceipt,
  type WebhookOutcome
} from "./Api.js"

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
          message: "PAYMENT_PROVIDER_WEBHOOK_SECRET must be whsec_<base64>; the service will not start without a valid secret."
        })
    })
    if (!Redacted.value(secret).startsWith("whsec_")) {
      return yield* new SecretUnavailable({
        message: "PAYMENT_PROVIDER_WEBHOOK_SECRET must be whsec_<base64>; the service will not start without a valid secret."
      })
    }
    return secret
  })
)

type TenantStatus = "active" | "past_due" | "suspended"

const statusAfter: Record<PaymentProviderEventType, TenantStatus> = {
  "subscription.activated": "active",
  "subscription.updated": "active",
  "invoice.paid": "active",
  "invoice.payment_failed": "past_due",
  "subscription.canceled": "suspended"
}

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
    const sql = yield* SqlClient.SqlClient
    const secret = yield* PaymentProviderSecret

    const apply = (webhookId: string, event: PaymentProviderEvent) =>
      Effect.gen(function*() {
        const receivedAt = yield* now
        const [tenant] = yield* sql<{ id: string; billingEventAt: Date | null }>`
          SELECT id, billing_event_at FROM tenants WHERE id = ${event.data.tenant_id} FOR NO KEY UPDATE`
        const outcome: WebhookOutcome = !isKnownType(event.type)
          ? "ignored_unknown_type"
          : tenant === undefined
          ? "ignored_unknown_tenant"
          : tenant.billingEventAt !== null && event.created_at.getTime() < tenant.billingEventAt.getTime()
          ? "ignored_stale"
          : "applied"
        const inserted = yield* sql`
          INSERT INTO payment_provider_events (webhook_id, event_id, type, tenant_id, outcome, received_at)
          VALUES (${webhookId}, ${event.id}, ${event.type}, ${event.data.tenant_id}, ${outcome}, ${receivedAt})
          ON CONFLICT (webhook_id) DO NOTHING
          RETURNING webhook_id`
        if (inserted.length === 0) return "duplicate" as const
        if (outcome === "applied" && isKnownType(event.type)) {
          const status = statusAfter[event.type]
          const setsPlan = event.type === "subscription.activated" || event.type === "subscription.updated"
          yield* sql`
            UPDATE tenants SET
              status = ${status},
              billing_event_at = ${event.created_at}
              ${setsPlan && event.data.plan !== undefined ? sql`, plan = ${event.data.plan}` : sql``}
              ${setsPlan && event.data.monthly_quota !== undefined ? sql`, monthly_quota = ${event.data.monthly_quota}` : sql``}
            WHERE id = ${event.data.tenant_id}`
        }
        return outcome
      }).pipe(sql.withTransaction, Effect.orDie)

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
  /** Needs the `PaymentProviderSecret` (`PaymentProviderSecretLive`), as before. */
  static readonly layer = Layer.effect(this, this.make)
}
