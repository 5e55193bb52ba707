/**
 * The events a tenant can receive (SPEC §9), as Effect Schemas. Every module that records events
 * names them from here; the same schemas type the webhook bodies in code and generate the JSON
 * Schemas in `schemas/events/` (`npm run events-schemas`).
 */
import { Schema } from "effect"
import { Correction } from "./Correction.js"
import { Document } from "./Document.js"
import { AnyDocument } from "./GoodsDocument.js"
import { TenantId } from "./Ids.js"
import { Environment } from "./Principal.js"
import { TaxIdStatus } from "./Tenant.js"
import { VoidedNumbers } from "./Voiding.js"

export const eventTypes = [
  "document.authorized",
  "document.contingency",
  "document.rejected",
  "document.failed",
  "document.cancelled",
  "document.cancellation_failed",
  "document.cancellation_in_analysis",
  "document.substituted",
  "document.corrected",
  "numbers.voided",
  "api_key.exposed",
  "credential.expiring",
  "quota.threshold",
  "tenant.tax_id_verified_elsewhere",
  "tenant.verification_revoked"
] as const

export const EventType = Schema.Literals(eventTypes)
export type EventType = typeof EventType.Type

/** An event as the outbox stores it and the webhooks send it. */
export const RecordedEvent = Schema.Struct({
  id: Schema.String,
  tenantId: TenantId,
  environment: Environment,
  type: Schema.String,
  /** `{ object }`, as stored and as sent. */
  data: Schema.Unknown,
  createdAt: Schema.Date
})
export type RecordedEvent = typeof RecordedEvent.Type

/** `quota.threshold`: a live document took the month's usage to 80 % or 100 % of the quota. */
const QuotaThresholdObject = Schema.Struct({
  object: Schema.Literal("quota"),
  tenant_id: Schema.String,
  period: Schema.String.annotate({ description: "Calendar month (UTC), `YYYY-MM`." }),
  limit: Schema.Int,
  used: Schema.Int,
  threshold: Schema.Literals([80, 100])
}).annotate({ identifier: "QuotaThreshold" })

/** Where a token was seen where it must not be (SPEC §4). */
export const ExposureSource = Schema.Literals(["log", "url", "browser"])

/** `api_key.exposed`: a token of this key showed up in our logs, in a request URL or in a browser's request; rotate it. */
const ApiKeyExposureObject = Schema.Struct({
  object: Schema.Literal("api_key_exposure"),
  api_key_id: Schema.String,
  source: ExposureSource.annotate({
    description: "`log`: found (and redacted) in the service's log output; `url`: sent in a request URL; " +
      "`browser`: sent from a browser (refused with `403 api_key_in_browser`)."
  }),
  detected_at: Schema.String.annotate({ description: "RFC 3339 time of detection.", format: "date-time" })
}).annotate({ identifier: "ApiKeyExposure" })

/** `credential.expiring`: a certificate's `not_after` is 30, 7 or 1 days away. */
export const CredentialExpiryObject = Schema.Struct({
  object: Schema.Literal("credential_expiry"),
  credential_id: Schema.String,
  not_after: Schema.String.annotate({
    description: "RFC 3339 end of validity of the certificate.",
    format: "date-time"
  }),
  days_remaining: Schema.Literals([30, 7, 1])
}).annotate({ identifier: "CredentialExpiry" })

/**
 * `tenant.tax_id_verified_elsewhere` and `tenant.verification_revoked`: the tenant's standing on its
 * tax id changed. It names neither the other tenant nor the operator.
 */
export const TaxIdStatusChangeObject = Schema.Struct({
  object: Schema.Literal("tax_id_status"),
  tenant_id: Schema.String,
  tax_id: Schema.String,
  status: TaxIdStatus,
  changed_at: Schema.String.annotate({ description: "RFC 3339 time of the change.", format: "date-time" })
}).annotate({ identifier: "TaxIdStatusChange" })

/** The `data.object` of each event type: a document of any type, but for what only service invoices have. */
const eventObjects = {
  "document.authorized": AnyDocument,
  "document.contingency": AnyDocument,
  "document.rejected": AnyDocument,
  "document.failed": AnyDocument,
  "document.cancelled": AnyDocument,
  "document.cancellation_failed": AnyDocument,
  "document.cancellation_in_analysis": Document,
  "document.substituted": Document,
  "document.corrected": Correction,
  "numbers.voided": VoidedNumbers,
  "api_key.exposed": ApiKeyExposureObject,
  "credential.expiring": CredentialExpiryObject,
  "quota.threshold": QuotaThresholdObject,
  "tenant.tax_id_verified_elsewhere": TaxIdStatusChangeObject,
  "tenant.verification_revoked": TaxIdStatusChangeObject
} as const satisfies Record<EventType, Schema.Top>

const descriptions: Record<EventType, string> = {
  "document.authorized": "The authority authorized the document.",
  "document.contingency":
    "The state authority could not be reached, so the NFC-e was issued offline (contingency, `tpEmis` 9): its " +
    "XML and DANFE NFC-e are ready to hand to the consumer, and the service transmits it until the authority " +
    "authorizes it (`document.authorized`) or rejects it (`document.rejected`); `contingency.transmit_by` is the " +
    "deadline.",
  "document.rejected": "The authority rejected the document (final; `rejection` says why).",
  "document.failed": "The authority did not answer within the retry window (final; `last_error` says why).",
  "document.cancelled": "The authority accepted the cancellation.",
  "document.cancellation_failed":
    "The authority refused the cancellation, or did not answer; the document stays `authorized`.",
  "document.cancellation_in_analysis":
    "The authority registered the request for the municipality's analysis of a late cancellation (e101103); " +
    "the document is `cancellation_in_analysis` until `document.cancelled` or `document.cancellation_failed`.",
  "document.substituted":
    "The authority authorized a substitute of the document and cancelled it by substitution (e105102); the " +
    "object is the original, `substituted`, with `substituted_by` naming the new document.",
  "document.corrected":
    "The authority registered a correction letter (CC-e) of an NF-e; the object is the letter, with its protocol.",
  "numbers.voided":
    "The authority voided a range of unused numbers of an NF-e or NFC-e series (inutilização); the object is the " +
    "voiding, with its protocol.",
  "api_key.exposed": "A token of one of the tenant's API keys was exposed; rotate the key.",
  "credential.expiring": "A digital certificate expires in 30, 7 or 1 days.",
  "quota.threshold": "Live documents this month reached 80 % or 100 % of the quota.",
  "tenant.tax_id_verified_elsewhere":
    "Another tenant proved the tax id this tenant names with its ICP-Brasil certificate (`status` is " +
    "`verified_by_another`): this tenant can no longer issue live documents for it; test documents are unaffected. " +
    "Sent to the endpoints of both environments.",
  "tenant.verification_revoked":
    "An operator undid this tenant's proof of its tax id (`status` is `unverified`): live documents need a new " +
    "upload of its ICP-Brasil certificate, and other tenants may prove the tax id meanwhile. Sent to the endpoints " +
    "of both environments."
}

/** The webhook body of one event type: `{id, type, created_at, environment, tenant_id, data: {object}}`. */
export const eventEnvelope = <T extends EventType>(type: T) =>
  Schema.Struct({
    id: Schema.String.check(Schema.isPattern(/^evt_[0-9a-z]{26}$/u)).annotate({
      description: "The event id; also the `webhook-id` header, stable across retries. Deduplicate on it."
    }),
    type: Schema.Literal(type),
    created_at: Schema.String.annotate({ description: "RFC 3339 time of the state change.", format: "date-time" }),
    environment: Environment,
    tenant_id: Schema.String,
    data: Schema.Struct({ object: eventObjects[type] })
  }).annotate({ identifier: `Event_${type.replace(/\./g, "_")}`, title: type, description: descriptions[type] })

/**
 * Any webhook body, discriminated by `type`, as the JSON codec: it decodes the parsed body as sent
 * (RFC 3339 strings for the documents' `Date` fields), as v3's `Schema.Date` did on its own.
 */
export const WebhookEvent = Schema.toCodecJson(Schema.Union(eventTypes.map(eventEnvelope)))
export type WebhookEvent = typeof WebhookEvent.Type
