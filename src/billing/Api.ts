/**
 * The payment provider's webhook (SPEC §10). Public: authenticated by its Standard Webhooks
 * signature over the raw body, which the handler verifies before anything is parsed.
 */
import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { WebhookOutcome } from "../domain/Billing.js"
import { InvalidSignature } from "../domain/Errors.js"

export const PaymentProviderEventType = Schema.Literals([
  "subscription.activated",
  "subscription.updated",
  "invoice.paid",
  "invoice.payment_failed",
  "subscription.canceled"
])
export type PaymentProviderEventType = typeof PaymentProviderEventType.Type

/** The envelope every event shares; `type` stays open so unknown types can be acknowledged. */
export const PaymentProviderEvent = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)),
  type: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255)).annotate({
    description: "Handled: `subscription.activated`, `subscription.updated`, `invoice.paid`, " +
      "`invoice.payment_failed`, `subscription.canceled`. Other types are acknowledged and ignored."
  }),
  // A string on the wire, decoded to a Date (invalid dates are refused).
  created_at: Schema.String.annotate({
    description: "When the provider created the event (RFC 3339).",
    format: "date-time",
    expected: "a string that will be decoded as a Date"
  }).pipe(Schema.decodeTo(Schema.Date, SchemaTransformation.dateFromString)),
  data: Schema.Struct({
    tenant_id: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)),
    plan: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))),
    monthly_quota: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000_000 })))
  })
}).annotate({
  identifier: "PaymentProviderEvent",
  description:
    "An event of the payment provider (Standard Webhooks envelope): a subscription or invoice of a tenant, which may change its plan, monthly quota or billing status."
})
export type PaymentProviderEvent = typeof PaymentProviderEvent.Type

export class WebhookReceipt extends Schema.Class<WebhookReceipt>("WebhookReceipt")({
  received: Schema.Literal(true),
  outcome: WebhookOutcome.annotate({
    description: "`duplicate`: this `webhook-id` was processed before and nothing changed; " +
      "`ignored_stale`: an event older than the last one applied to the tenant."
  })
}, { description: "The payment-provider webhook was accepted; `outcome` says whether it changed anything." }) {}

/**
 * The Standard Webhooks headers, documented only: the handler reads them with the raw body, so a
 * missing or wrong one is `401 invalid_signature` rather than a header validation error.
 */
const signatureHeaders = [
  { name: "webhook-id", description: "The event's delivery id; an id seen before is acknowledged without effect." },
  { name: "webhook-timestamp", description: "Unix seconds when the provider signed; at most 5 minutes from now." },
  {
    name: "webhook-signature",
    description:
      "`v1,<base64 HMAC-SHA256>` over `{webhook-id}.{webhook-timestamp}.{body}`, space-separated when several."
  }
].map((header) => ({ ...header, in: "header", required: true, schema: { type: "string" } }))

export class BillingApi extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.post("paymentProviderWebhook", "/webhooks/payment-provider", {
      payload: PaymentProviderEvent,
      success: WebhookReceipt,
      error: InvalidSignature
    })
      .annotate(OpenApi.Summary, "Receive a payment-provider event")
      .annotate(OpenApi.Override, { parameters: signatureHeaders })
      .annotate(
        OpenApi.Description,
        "Billing events from the payment provider, signed with Standard Webhooks (`webhook-id`, " +
          "`webhook-timestamp`, `webhook-signature` over the raw body; 5-minute tolerance) with " +
          "`PAYMENT_PROVIDER_WEBHOOK_SECRET`. Processed once per `webhook-id`: a repeat answers 200 and changes nothing."
      )
  )
  .annotate(OpenApi.Title, "Billing")
  .annotate(
    OpenApi.Description,
    "The payment provider's webhook, authenticated by its Standard Webhooks signature rather than a token."
  )
{}
