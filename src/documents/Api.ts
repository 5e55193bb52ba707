import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  Conflict,
  IdempotencyConflict,
  IdempotencyKeyReused,
  InvalidState,
  NotFound,
  QuotaExceeded,
  TenantSuspended
} from "../domain/Errors.js"
import { IdOf } from "../domain/Ids.js"
import { Timestamp } from "../domain/Time.js"
import { Amounts, Centavos, Rate } from "../domain/Money.js"
import { Page, PageLimit } from "../domain/Pagination.js"
import { Environment, RequiredScope } from "../domain/Principal.js"
import { MunicipalityCode, TaxId } from "../domain/TaxId.js"
import { ApiKeyAuth } from "../keys/Authentication.js"

export const DocumentStatus = Schema.Literal(
  "queued",
  "submitting",
  "authorized",
  "rejected",
  "failed",
  "cancel_requested",
  "cancelled"
)
export type DocumentStatus = typeof DocumentStatus.Type

const text = (max: number) => Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(max))

export const Address = Schema.Struct({
  street: text(125),
  number: text(10),
  complement: Schema.optional(text(60)),
  district: text(60),
  municipality_code: MunicipalityCode,
  state: Schema.String.pipe(Schema.pattern(/^[A-Z]{2}$/, { message: () => "state must be a 2-letter UF code" })),
  postal_code: Schema.String.pipe(Schema.pattern(/^[0-9]{8}$/, { message: () => "postal_code must have 8 digits" }))
}).annotations({ identifier: "Address" })

export const Taker = Schema.Struct({
  tax_id: TaxId,
  name: text(150),
  email: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an email address" }), Schema.maxLength(254))
  ),
  address: Schema.optional(Address)
}).annotations({ identifier: "Taker" })

export const ServiceDescription = Schema.Struct({
  code: Schema.String.pipe(
    Schema.pattern(/^[0-9]{6}$/, { message: () => "service.code must be the 6-digit national service code (cTribNac)" })
  ),
  description: text(2000),
  municipality_code: MunicipalityCode
}).annotations({ identifier: "Service" })

/**
 * A DPS series: 1 to 5 digits. "01" and "1" are the same series at the authority (the DPS id pads
 * it to 5 digits), so it is stored without leading zeros.
 */
export const Series = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[0-9]{1,5}$/, { message: () => "series must have 1 to 5 digits" })),
  Schema.String,
  { strict: true, decode: (s) => String(Number(s)), encode: (s) => s }
).annotations({ description: "1 to 5 digits; leading zeros are not significant. Default \"1\"." })

export const IssueDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "issue_date must be a date, YYYY-MM-DD" }),
  Schema.filter((s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s), {
    message: () => "issue_date must be a real calendar date"
  })
)

export const NewDocument = Schema.Struct({
  type: Schema.Literal("service_invoice"),
  reference: Schema.optional(text(100).annotations({ description: "Your own id; unique per tenant and environment." })),
  series: Schema.optional(Series),
  issue_date: Schema.optional(IssueDate.annotations({ description: "Defaults to today (UTC)." })),
  taker: Taker,
  service: ServiceDescription,
  amounts: Schema.Struct({
    services: Centavos.pipe(Schema.positive({ message: () => "services must be more than zero centavos" })),
    deductions: Schema.optional(Centavos),
    iss_rate: Rate
  }),
  notes: Schema.optional(Schema.String.pipe(Schema.maxLength(2000)))
}).annotations({ identifier: "NewDocument", parseOptions: { errors: "all" } })
export type NewDocument = typeof NewDocument.Type

export const AuthorityInfo = Schema.Struct({
  access_key: Schema.String,
  protocol: Schema.String,
  authorized_at: Schema.Date
}).annotations({ identifier: "AuthorityInfo" })

export const Rejection = Schema.Struct({ code: Schema.String, message: Schema.String }).annotations({
  identifier: "Rejection"
})

export const CancellationReasonCode = Schema.Literal("issue_error", "service_not_provided", "other")

export const CancellationInfo = Schema.Struct({
  reason_code: CancellationReasonCode,
  reason: Schema.String,
  requested_at: Schema.Date,
  cancelled_at: Schema.NullOr(Schema.Date),
  protocol: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Rejection).annotations({
    description: "Set when the authority refused the cancellation; the document is `authorized` again."
  })
}).annotations({ identifier: "Cancellation" })

export const LastError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  at: Schema.Date
}).annotations({ identifier: "LastError" })

export class Document extends Schema.Class<Document>("Document")({
  id: Schema.String,
  object: Schema.tag("document"),
  environment: Environment,
  type: Schema.Literal("service_invoice"),
  status: DocumentStatus,
  reference: Schema.NullOr(Schema.String),
  series: Schema.String,
  number: Schema.Int,
  issue_date: Schema.String,
  taker: Taker,
  service: ServiceDescription,
  amounts: Amounts,
  currency: Schema.Literal("BRL"),
  notes: Schema.NullOr(Schema.String),
  authority: Schema.NullOr(AuthorityInfo),
  rejection: Schema.NullOr(Rejection),
  cancellation: Schema.NullOr(CancellationInfo),
  attempts: Schema.Int,
  last_error: Schema.NullOr(LastError),
  created_at: Schema.Date,
  updated_at: Schema.Date
}) {}

export const CancelDocument = Schema.Struct({
  reason_code: CancellationReasonCode,
  reason: Schema.Trim.pipe(
    Schema.minLength(15, { message: () => "reason must have 15 to 255 characters" }),
    Schema.maxLength(255, { message: () => "reason must have 15 to 255 characters" })
  )
}).annotations({ parseOptions: { errors: "all" } })


export const ListDocumentsParams = Schema.Struct({
  limit: Schema.optional(PageLimit),
  starting_after: Schema.optional(IdOf("document")),
  status: Schema.optional(DocumentStatus),
  reference: Schema.optional(Schema.String.pipe(Schema.maxLength(100))),
  created_gte: Schema.optional(Timestamp),
  created_lt: Schema.optional(Timestamp)
}).annotations({ parseOptions: { errors: "all" } })
export type ListDocumentsParams = typeof ListDocumentsParams.Type

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255, { message: () => "Idempotency-Key must be at most 255 characters" }))
  )
})

const tenantPath = HttpApiSchema.param("tenantId", IdOf("tenant"))
const documentPath = HttpApiSchema.param("docId", IdOf("document"))


export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("issue")`/v1/tenants/${tenantPath}/documents`
      .setPayload(NewDocument)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Document, { status: 202 })
      .addError(QuotaExceeded)
      .addError(TenantSuspended)
      .addError(Conflict)
      .addError(IdempotencyConflict)
      .addError(IdempotencyKeyReused)
      .annotate(RequiredScope, "documents:write")
      .annotate(
        OpenApi.Description,
        "Validates the document, assigns its number, takes a unit of quota (live keys) and queues it for the authority. Answers 202 with the document in `queued`."
      )
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/tenants/${tenantPath}/documents`
      .setUrlParams(ListDocumentsParams)
      .addSuccess(Page(Document))
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("get")`/v1/tenants/${tenantPath}/documents/${documentPath}`
      .addSuccess(Document)
      .addError(NotFound)
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.post("cancel")`/v1/tenants/${tenantPath}/documents/${documentPath}/cancel`
      .setPayload(CancelDocument)
      .addSuccess(Document, { status: 202 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(RequiredScope, "documents:cancel")
      .annotate(OpenApi.Description, "Requests the cancellation of an `authorized` document. Answers 202 with the document in `cancel_requested`.")
  )
  // The key-scoped shorthand: `/v1/documents…` is `/v1/tenants/{tenant of the key}/documents…`.
  .add(
    HttpApiEndpoint.post("issueForKey", "/v1/documents")
      .setPayload(NewDocument)
      .setHeaders(IdempotencyHeaders)
      .addSuccess(Document, { status: 202 })
      .addError(QuotaExceeded)
      .addError(TenantSuspended)
      .addError(Conflict)
      .addError(IdempotencyConflict)
      .addError(IdempotencyKeyReused)
      .annotate(RequiredScope, "documents:write")
  )
  .add(
    HttpApiEndpoint.get("listForKey", "/v1/documents")
      .setUrlParams(ListDocumentsParams)
      .addSuccess(Page(Document))
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("getForKey")`/v1/documents/${documentPath}`
      .addSuccess(Document)
      .addError(NotFound)
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.post("cancelForKey")`/v1/documents/${documentPath}/cancel`
      .setPayload(CancelDocument)
      .addSuccess(Document, { status: 202 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(RequiredScope, "documents:cancel")
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Documents")
{}
