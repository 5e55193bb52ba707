import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ApiKeyAuth, KeyOrSessionAuth, SessionAuth } from "../domain/Authentication.js"
import { described } from "../domain/Described.js"
import {
  boundedText,
  CancellationReasonCode,
  Intermediary,
  IssueDate,
  NbsCode,
  Series,
  ServiceDescription,
  Taker,
  visibleText
} from "../domain/Document.js"
import { b2bWithRetentionsExample, exportExample } from "../domain/DocumentExamples.js"
import { ListDocumentsParams, ListTenantDocumentsParams } from "../domain/DocumentListParams.js"
import {
  Conflict,
  CredentialRequired,
  IdempotencyConflict,
  IdempotencyKeyReused,
  InvalidState,
  NotFound,
  QuotaExceeded,
  RegistrationIncomplete,
  ServiceUnavailable,
  TenantSuspended
} from "../domain/Errors.js"
import { AnyDocument, UNKNOWN_DOCUMENT_TYPE } from "../domain/GoodsDocument.js"
import { NewConsumerInvoice, NewProductInvoice } from "../domain/GoodsPayloads.js"
import { IbsCbs } from "../domain/IbsCbs.js"
import { IdOf, TenantIdParam } from "../domain/Ids.js"
import { Page } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, RequiredScope } from "../domain/Principal.js"
import { AmountsInput, ApproximateTaxes, FederalTaxes, ForeignTrade, IssDetails } from "../domain/TaxContent.js"
import { ReasonText } from "../domain/Text.js"
import { Usage, UsageParams } from "../domain/Usage.js"

export const NewDocument = Schema.Struct({
  type: Schema.Literal("service_invoice").annotate({
    description: "A service invoice (NFS-e) through the national system. Not sent to the authority."
  }),
  reference: Schema.optionalKey(
    boundedText(100).pipe(described({
      description: "Your own id; unique per tenant and environment. Not sent to the authority."
    }))
  ),
  series: Schema.optionalKey(Series),
  issue_date: Schema.optionalKey(
    IssueDate.annotate({
      description: "The competence date, YYYY-MM-DD: becomes `dCompet`. Defaults to today in Brasília time."
    })
  ),
  taker: Schema.optionalKey(Taker.annotate({
    description: "The taker: becomes `toma`. May be left out only for a note to an unidentified consumer: a taxable " +
      "service, nothing withheld, not an export."
  })),
  intermediary: Schema.optionalKey(Intermediary.annotate({ description: "The intermediary: becomes `interm`." })),
  service: Schema.Struct({ ...ServiceDescription.fields, nbs_code: NbsCode }).annotate({
    identifier: "NewService",
    description: "The service provided (becomes `serv/cServ` and `serv/locPrest`): its NBS code, municipal " +
      "codes, description and where it was provided."
  }),
  amounts: AmountsInput,
  iss: Schema.optionalKey(IssDetails),
  federal: Schema.optionalKey(FederalTaxes),
  ibs_cbs: Schema.optionalKey(IbsCbs.annotate({
    description: "The tax reform's IBS/CBS group: becomes `IBSCBS`. Optional in 2026, validated in full when sent " +
      "(docs/tax-reform.md)."
  })),
  approximate_taxes: Schema.optionalKey(ApproximateTaxes),
  foreign_trade: Schema.optionalKey(ForeignTrade),
  notes: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(2000), visibleText).annotate({
      description: "Additional information printed on the note, at most 2000 characters: becomes " +
        "`infoCompl/xInfComp`."
    })
  )
}).annotate({
  identifier: "NewDocument",
  description:
    "A service invoice (NFS-e) to issue: taker, service, amounts and, optionally, intermediary, substitution and the tax reform's IBS/CBS.",
  examples: [b2bWithRetentionsExample, exportExample]
})
export type NewDocument = typeof NewDocument.Type

/**
 * What `POST …/documents` takes: a document of any type. Each member has a single literal `type`,
 * so the body's own type picks the member whose issues are reported; a body of no known type is
 * one issue at `type` (ApiErrors.ts).
 */
export const NewAnyDocument = Schema.Union([NewDocument, NewProductInvoice, NewConsumerInvoice]).annotate({
  identifier: "NewAnyDocument",
  description: "A document to issue, by its `type`: `service_invoice` (NFS-e), `product_invoice` (NF-e) or " +
    "`consumer_invoice` (NFC-e).",
  message: UNKNOWN_DOCUMENT_TYPE
})
export type NewAnyDocument = typeof NewAnyDocument.Type

export const CancelDocument = Schema.Struct({
  reason_code: CancellationReasonCode.annotate({
    description: "Becomes `cMotivo` of the event: `issue_error` 1, `service_not_provided` 2, `other` 9."
  }),
  reason: ReasonText.pipe(described({ description: "Becomes `xMotivo` of the event (15 to 255 characters)." })),
  analysis: Schema.optionalKey(Schema.Boolean.annotate({
    description: "true: ask the municipality to analyse the cancellation (event e101103, \"solicitação de análise " +
      "fiscal para cancelamento\") instead of cancelling outright. Only for an `authorized` note whose last plain " +
      "cancellation was refused because its deadline passed (`cancellation.error.code` `E0822`); the note goes to " +
      "`cancellation_in_analysis` until the municipality decides."
  }))
})
export type CancelDocument = typeof CancelDocument.Type

export const IdempotencyHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalKey(
    Schema.String.check(
      Schema.isMinLength(1),
      Schema.isMaxLength(255, { message: "Idempotency-Key must be at most 255 characters" })
    )
  )
})

const TenantPath = { tenantId: TenantIdParam }
export const DocumentPath = { tenantId: TenantIdParam, docId: IdOf("document") }
export const KeyDocumentPath = { docId: IdOf("document") }

/**
 * A note's file, with its name for a download: `Content-Disposition` names it by access key, and
 * `Etd-Document-Status` says whether the note stands (`authorized`) or was `cancelled` since.
 * `Cache-Control: private, no-store` and a sandboxing `Content-Security-Policy` go with it.
 */
const NoteFile = <S extends Schema.Top>(body: S) =>
  HttpApiSchema.WithHeaders(body, {
    "content-disposition": Schema.String,
    "etd-document-status": Schema.String,
    // The files carry the taker's personal data: never kept by shared caches, and a browser that
    // opens one runs nothing from it.
    "cache-control": Schema.String,
    "content-security-policy": Schema.String
  })

/** The NFS-e XML exactly as the authority returned it. */
export const NfseXmlFile = NoteFile(Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/xml" })))

/** The DANFSe, the note's PDF. */
export const DanfsePdfFile = NoteFile(
  Schema.Uint8Array.pipe(HttpApiSchema.asUint8Array({ contentType: "application/pdf" }))
)

const fileErrors = [NotFound, InvalidState, CredentialRequired, ServiceUnavailable]

const xmlDescription =
  "The authorized note's XML (`application/xml`): an NFS-e's exactly as the tax authority returned it; an NF-e's or " +
  "NFC-e's `nfeProc`, the signed note with the authority's protocol. " +
  "`409 invalid_state` before authorization. A cancelled note's XML stays available; `Etd-Document-Status` says `cancelled`."
const pdfDescription = "The note's DANFSe (`application/pdf`), rendered by the service from the authorized NFS-e XML " +
  "(the `xml` file) in the national DANFSe layout, in every mode: issuer, taker, intermediary, service, municipal " +
  "(ISSQN) and federal taxation, retentions and net value, approximate taxes and IBS/CBS as the note carries them, " +
  "municipality names from the IBGE table, times in Brasília time. An operator may configure an environment to relay " +
  "the national DANFSe API instead (`TAX_AUTHORITY_*_DANFSE_SOURCE=national`). `409 invalid_state` before " +
  "authorization; a cancelled note's PDF is marked CANCELADA, over the text without hiding it. For an NF-e, the A4 " +
  "DANFE of the national manual (receipt stub, emitter, access key with its Code-128C barcode, protocol, recipient, " +
  "tax calculation, carrier, items over as many pages as they need, additional data); for an NFC-e, the 80 mm DANFE " +
  "NFC-e (items, totals, payments, the consumer, the query address and QR code). Both are drawn from the `nfeProc`."

/**
 * A document's files on the tenant path: a key with `documents:read` (its environment), or a
 * member's session (either environment: the dashboard shows both).
 */
export class DocumentFilesApi extends HttpApiGroup.make("documentFiles")
  .add(
    HttpApiEndpoint.get("xml", "/tenants/:tenantId/documents/:docId/xml", {
      params: DocumentPath,
      success: NfseXmlFile,
      error: fileErrors
    })
      .annotate(OpenApi.Summary, "Download a note's XML")
      .annotate(RequiredScope, "documents:read")
      .annotate(OpenApi.Description, xmlDescription)
  )
  .add(
    HttpApiEndpoint.get("pdf", "/tenants/:tenantId/documents/:docId/pdf", {
      params: DocumentPath,
      success: DanfsePdfFile,
      error: fileErrors
    })
      .annotate(OpenApi.Summary, "Download a note's PDF (DANFSe)")
      .annotate(RequiredScope, "documents:read")
      .annotate(OpenApi.Description, pdfDescription)
  )
  .middleware(KeyOrSessionAuth)
  .annotate(RequiredRoles, memberRoles)
  .annotate(OpenApi.Title, "Document files")
  .annotate(
    OpenApi.Description,
    "A note's files once authorized: the NFS-e XML and the DANFSe PDF, for an API key with `documents:read` or a member's session."
  )
{}

export const issueErrors = [
  QuotaExceeded,
  TenantSuspended,
  CredentialRequired,
  RegistrationIncomplete,
  Conflict,
  IdempotencyConflict,
  IdempotencyKeyReused
]

/**
 * Issuing is for API keys only (SPEC §5); on the tenant path a member's session also lists, reads
 * (either environment) and, as `owner` or `admin`, cancels. The key-scoped shorthand takes keys only.
 */
export class DocumentsApi extends HttpApiGroup.make("documents")
  .add(
    HttpApiEndpoint.post("issue", "/tenants/:tenantId/documents", {
      params: TenantPath,
      payload: NewAnyDocument,
      headers: IdempotencyHeaders,
      success: AnyDocument.pipe(HttpApiSchema.status(202)),
      error: issueErrors
    })
      .annotate(OpenApi.Summary, "Issue a document")
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:write")
      .annotate(
        OpenApi.Description,
        "Validates the document, assigns its number, takes a unit of quota (live keys) and queues it for the authority. Answers 202 with the document in `queued`. API keys only: a member's session does not issue."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/tenants/:tenantId/documents", {
      params: TenantPath,
      query: ListTenantDocumentsParams,
      success: Page(AnyDocument)
    })
      .annotate(OpenApi.Summary, "List documents")
      .annotate(
        OpenApi.Description,
        "The tenant's documents, newest first, filtered by `status`, `reference`, creation time (`created_gte`, " +
          "`created_lt`), the taker (`taker_tax_id`, or a part of `taker_name` ignoring case and accents), " +
          "`nfse_number`, the DPS `number` and `series`, and `environment`; filters combine (all must hold) and " +
          "page like the unfiltered list. An API key lists its own environment's; a member's session (any role) " +
          "lists both, or the one `environment` names."
      )
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "documents:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId/documents/:docId", {
      params: DocumentPath,
      success: AnyDocument,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Get a document")
      .annotate(
        OpenApi.Description,
        "One document. An API key reads its own environment's (a document of the other environment or of another " +
          "tenant is `404 not_found`); a member's session (any role) reads either environment's."
      )
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "documents:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.post("cancel", "/tenants/:tenantId/documents/:docId/cancel", {
      params: DocumentPath,
      payload: CancelDocument,
      success: AnyDocument.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidState]
    })
      .annotate(OpenApi.Summary, "Cancel a document")
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "documents:cancel")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Requests the cancellation of an `authorized` document. Answers 202 with the document in `cancel_requested`. " +
          "With `analysis: true` (after a refusal for the deadline, `E0822`) it asks the municipality's analysis " +
          "instead (e101103): `cancellation_in_analysis`, then `cancelled` or `authorized` with `cancellation.error`. " +
          "An API key cancels its own environment's documents; a member's session with the role `owner` or `admin` " +
          "cancels either environment's (`403 forbidden` for a `developer`)."
      )
  )
  // The key-scoped shorthand: `/v1/documents…` is `/v1/tenants/{tenant of the key}/documents…`.
  .add(
    HttpApiEndpoint.post("issueForKey", "/documents", {
      payload: NewAnyDocument,
      headers: IdempotencyHeaders,
      success: AnyDocument.pipe(HttpApiSchema.status(202)),
      error: issueErrors
    })
      .annotate(OpenApi.Summary, "Issue a document (key's tenant)")
      .annotate(OpenApi.Description, "`POST /v1/tenants/{tenantId}/documents` for the tenant of the API key.")
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:write")
  )
  .add(
    HttpApiEndpoint.get("listForKey", "/documents", {
      query: ListDocumentsParams,
      success: Page(AnyDocument)
    })
      .annotate(OpenApi.Summary, "List documents (key's tenant)")
      .annotate(OpenApi.Description, "`GET /v1/tenants/{tenantId}/documents` for the tenant of the API key.")
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("getForKey", "/documents/:docId", {
      params: KeyDocumentPath,
      success: AnyDocument,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Get a document (key's tenant)")
      .annotate(OpenApi.Description, "`GET /v1/tenants/{tenantId}/documents/{docId}` for the tenant of the API key.")
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.post("cancelForKey", "/documents/:docId/cancel", {
      params: KeyDocumentPath,
      payload: CancelDocument,
      success: AnyDocument.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidState]
    })
      .annotate(OpenApi.Summary, "Cancel a document (key's tenant)")
      .annotate(
        OpenApi.Description,
        "`POST /v1/tenants/{tenantId}/documents/{docId}/cancel` for the tenant of the API key."
      )
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:cancel")
  )
  .add(
    HttpApiEndpoint.get("xmlForKey", "/documents/:docId/xml", {
      params: KeyDocumentPath,
      success: NfseXmlFile,
      error: fileErrors
    })
      .annotate(OpenApi.Summary, "Download a note's XML (key's tenant)")
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:read")
      .annotate(OpenApi.Description, xmlDescription)
  )
  .add(
    HttpApiEndpoint.get("pdfForKey", "/documents/:docId/pdf", {
      params: KeyDocumentPath,
      success: DanfsePdfFile,
      error: fileErrors
    })
      .annotate(OpenApi.Summary, "Download a note's PDF (key's tenant)")
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:read")
      .annotate(OpenApi.Description, pdfDescription)
  )
  .annotate(OpenApi.Title, "Documents")
  .annotate(
    OpenApi.Description,
    "Service invoices (NFS-e) and goods invoices (NF-e, NFC-e): issued with an API key, submitted to the tax authority in the background, read and cancelled. On the tenant path a member's session also lists and reads them (both environments) and, as `owner` or `admin`, cancels them. `/v1/documents…` is the same as `/v1/tenants/{tenantId}/documents…` for the key's tenant (API keys only)."
  )
{}

/** Documents created per day, for the dashboard's overview chart (SPEC §15). */
export class UsageApi extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId/usage", {
      params: TenantPath,
      query: UsageParams,
      success: Usage
    })
      .annotate(OpenApi.Summary, "Documents per day")
      .annotate(
        OpenApi.Description,
        "How many documents the tenant created on each of the last `days` UTC days (1 to 90, default 30), ending " +
          "today, oldest first, per environment and whatever their status. Days without documents count 0, so " +
          "there are exactly `days` entries. For any member's session."
      )
      .middleware(SessionAuth)
      .annotate(RequiredRoles, memberRoles)
  )
  .annotate(OpenApi.Title, "Usage")
  .annotate(OpenApi.Description, "The tenant's document counts over time, for the dashboard's overview.")
{}
