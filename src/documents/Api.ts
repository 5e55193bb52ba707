import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import {
  Conflict,
  IdempotencyConflict,
  IdempotencyKeyReused,
  InvalidState,
  NotFound,
  QuotaExceeded,
  TenantSuspended
} from "../domain/Errors.js"
import { emailAddress } from "../domain/Email.js"
import { IdOf, TenantId } from "../domain/Ids.js"
import { Timestamp } from "../domain/Time.js"
import { Amounts, Centavos, Rate } from "../domain/Money.js"
import { Page, PageLimit } from "../domain/Pagination.js"
import { Environment, RequiredScope } from "../domain/Principal.js"
import { MunicipalityCode, TaxId } from "../domain/TaxId.js"
import { ApiKeyAuth } from "../domain/Authentication.js"

export const DocumentStatus = Schema.Literals([
  "queued",
  "submitting",
  "authorized",
  "rejected",
  "failed",
  "cancel_requested",
  "cancelled"
])
export type DocumentStatus = typeof DocumentStatus.Type

const text = (max: number) => Schema.Trim.check(Schema.isMinLength(1), Schema.isMaxLength(max))

export const Address = Schema.Struct({
  street: text(125),
  number: text(10),
  complement: Schema.optionalKey(text(60)),
  district: text(60),
  municipality_code: MunicipalityCode,
  state: Schema.String.check(Schema.isPattern(/^[A-Z]{2}$/u, { message: "state must be a 2-letter UF code" })),
  postal_code: Schema.String.check(Schema.isPattern(/^[0-9]{8}$/u, { message: "postal_code must have 8 digits" }))
}).annotate({ identifier: "Address" })

export const Taker = Schema.Struct({
  tax_id: TaxId,
  name: text(150),
  email: Schema.optionalKey(emailAddress(Schema.String)),
  address: Schema.optionalKey(Address)
}).annotate({ identifier: "Taker" })

export const ServiceDescription = Schema.Struct({
  code: Schema.String.check(
    Schema.isPattern(/^[0-9]{6}$/u, { message: "service.code must be the 6-digit national service code (cTribNac)" })
  ),
  description: text(2000),
  municipality_code: MunicipalityCode
}).annotate({ identifier: "Service" })

/**
 * A DPS series: 1 to 5 digits. "01" and "1" are the same series at the authority (the DPS id pads
 * it to 5 digits), so it is stored without leading zeros.
 */
export const Series = Schema.String.check(Schema.isPattern(/^[0-9]{1,5}$/u, { message: "series must have 1 to 5 digits" })).pipe(
  Schema.decodeTo(Schema.String, SchemaTransformation.transform({ decode: (s) => String(Number(s)), encode: (s) => s }))
).annotate({ description: "1 to 5 digits; leading zeros are not significant. Default \"1\"." })

const ISSUE_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/u

export const IssueDate = Schema.String.check(
  Schema.isPattern(ISSUE_DATE_PATTERN, { message: "issue_date must be a date, YYYY-MM-DD" }),
  // Only judged once the shape is right, so a malformed date reports one issue.
  Schema.makeFilter(
    (s) =>
      !ISSUE_DATE_PATTERN.test(s) ||
      (!Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s)),
    { message: "issue_date must be a real calendar date" }
  )
)

export const NewDocument = Schema.Struct({
  // A one-member `Literals`, not a `Literal`: the framework decodes payloads through a union, and a
  // literal field would make a wrong `type` a whole-body mismatch instead of an issue at `type`.
  type: Schema.Literals(["service_invoice"]),
  reference: Schema.optionalKey(text(100).annotate({ description: "Your own id; unique per tenant and environment." })),
  series: Schema.optionalKey(Series),
  issue_date: Schema.optionalKey(IssueDate.annotate({ description: "Defaults to today (UTC)." })),
  taker: Taker,
  service: ServiceDescription,
  amounts: Schema.Struct({
    services: Centavos.check(Schema.isGreaterThan(0, { message: "services must be more than zero centavos" })),
    deductions: Schema.optionalKey(Centavos),
    iss_rate: Rate
  }),
  notes: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(2000)))
}).annotate({ identifier: "NewDocument" })
export type NewDocument = typeof NewDocument.Type

export const AuthorityInfo = Schema.Struct({
  access_key: Schema.String,
  protocol: Schema.String,
  authorized_at: Schema.Date
}).annotate({ identifier: "AuthorityInfo" })

export const Rejection = Schema.Struct({ code: Schema.String, message: Schema.String }).annotate({
  identifier: "Rejection"
})

export const CancellationReasonCode = Schema.Literals(["issue_error", "service_not_provided", "other"])

export const CancellationInfo = Schema.Struct({
  reason_code: CancellationReasonCode,
  reason: Schema.String,
  requested_at: Schema.Date,
  cancelled_at: Schema.NullOr(Schema.Date),
  protocol: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Rejection).annotate({
    description: "Set when the authority refused the cancellation; the document is `authorized` again."
  })
}).annotate({ identifier: "Cancellation" })

export const LastError = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  at: Schema.Date
}).annotate({ identifier: "LastError" })

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
  reason: Schema.Trim.check(
    Schema.isMinLength(15, { message: "reason must have 15 to 255 characters" }),
    Schema.isMaxLength(255, { message: "reason must have 15 to 255 characters" })
  )
})


export const ListDocumentsParams = Schema.Struct({
  limit: Schema.optionalKey(PageLimit),
  starting_after: Schema.optionalKey(IdOf("document")),
  status: Schema.optionalKey(DocumentStatus),
  reference: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(100))),
  created_gte: Schema.optionalKey(Timestamp),
  created_lt: Schema.optionalKey(Timestamp)
})
export type ListDocumentsParams = typeof ListDocumentsParams.Type

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalKey(
    Schema.String.check(
      Schema.isMinLength(1),
      Schema.isMaxLength(255, { message: "Idempotency-Key must be at most 255 characters" })
    )
  )
})

const TenantPath = { tenantId: TenantId }
const DocumentPath = { tenantId: TenantId, docId: IdOf("document") }
const KeyDocumentPath = { docId: IdOf("document") }

const issueErrors = [QuotaExceeded, TenantSuspended, Conflict, IdempotencyConflict, IdempotencyKeyReused]

export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("issue", "/tenants/:tenantId/documents", {
      params: TenantPath,
      payload: NewDocument,
      headers: IdempotencyHeaders,
      success: Document.pipe(HttpApiSchema.status(202)),
      error: issueErrors
    })
      .annotate(RequiredScope, "documents:write")
      .annotate(
        OpenApi.Description,
        "Validates the document, assigns its number, takes a unit of quota (live keys) and queues it for the authority. Answers 202 with the document in `queued`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/tenants/:tenantId/documents", {
      params: TenantPath,
      query: ListDocumentsParams,
      success: Page(Document)
    })
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId/documents/:docId", {
      params: DocumentPath,
      success: Document,
      error: NotFound
    })
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/tenants/:tenantId/documents/:docId/cancel", {
      params: DocumentPath,
      payload: CancelDocument,
      success: Document.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidState]
    })
      .annotate(RequiredScope, "documents:cancel")
      .annotate(
        OpenApi.Description,
        "Requests the cancellation of an `authorized` document. Answers 202 with the document in `cancel_requested`."
      )
  )
  // The key-scoped shorthand: `/v1/documents…` is `/v1/tenants/{tenant of the key}/documents…`.
  .add(
    HttpApiEndpoint.post("issueForKey", "/documents", {
      payload: NewDocument,
      headers: IdempotencyHeaders,
      success: Document.pipe(HttpApiSchema.status(202)),
      error: issueErrors
    })
      .annotate(RequiredScope, "documents:write")
  )
  .add(
    HttpApiEndpoint.get("listForKey", "/documents", {
      query: ListDocumentsParams,
      success: Page(Document)
    })
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("getForKey", "/documents/:docId", {
      params: KeyDocumentPath,
      success: Document,
      error: NotFound
    })
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.post("cancelForKey", "/documents/:docId/cancel", {
      params: KeyDocumentPath,
      payload: CancelDocument,
      success: Document.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidState]
    })
      .annotate(RequiredScope, "documents:cancel")
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Documents")
{}
