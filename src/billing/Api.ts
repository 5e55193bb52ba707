/**
 * The payment provider's webhook (SPEC §10). Public: authenticated by its Standard Webhooks
 * signature over the raw body, which the handler verifies before anything is parsed.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidSignature } from "../domain/Errors.js"

export const PaymentProviderEventType = Schema.Literal(
  "subscription.activated",
  "subscription.updated",
  "invoice.paid",
  "invoice.payment_failed",
  "subscription.canceled"
)
export type PaymentProviderEventType = typeof PaymentProviderEventType.Type

/** The envelope every event shares; `type` stays open so unknown types can be acknowledged. */
export const PaymentProviderEvent = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  type: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)).annotations({
    description: "Handled: `subscription.activated`, `subscription.updated`, `invoice.paid`, " +
      "`invoice.payment_failed`, `subscription.canceled`. Other types are acknowledged and ignored."
  }),
  created_at: Schema.Date.annotations({ description: "When the provider created the event (RFC 3339)." }),
  data: Schema.Struct({
    tenant_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
    plan: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))),
    monthly_quota: Schema.optional(Schema.Int.pipe(Schema.between(0, 100_000_000)))
  })
}).annotations({ identifier: "PaymentProviderEvent" })
export type PaymentProviderEvent = typeof PaymentProviderEvent.Type

export const WebhookOutcome = Schema.Literal(
  "applied",
  "duplicate",
  "ignored_unknown_type",
  "ignored_unknown_tenant",
  "ignored_stale"
)
export type WebhookOutcome = typeof WebhookOutcome.Type

export class WebhookReceipt extends Schema.Class<WebhookReceipt>("WebhookReceipt")({
  received: Schema.Literal(true),
  outcome: WebhookOutcome.annotations({
    description: "`duplicate`: this `webhook-id` was processed before and nothing changed; " +
      "`ignored_stale`: an event older than the last one applied to the tenant."
  })
}) {}

export class BillingApi extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.post("paymentProviderWebhook", "/v1/webhooks/payment-provider")
      .setPayload(PaymentProviderEvent)
      .addSuccess(WebhookReceipt)
      .addError(InvalidSignature)
      .annotate(
        OpenApi.Description,
        "Billing events from the payment provider, signed with Standard Webhooks (`webhook-id`, " +
          "`webhook-timestamp`, `webhook-signature` over the raw body; 5-minute tolerance) with " +
          "`PAYMENT_PROVIDER_WEBHOOK_SECRET`. Processed once per `webhook-id`: a repeat answers 200 and changes nothing."
      )
  )
  .annotate(OpenApi.Title, "Billing")
{}
