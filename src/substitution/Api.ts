/**
 * Substitution (SPEC §6): an authorized note replaced by a corrected one. The contract of its own
 * group (the documents module serves it: src/documents/Http.ts, DocumentService.substitute), kept
 * apart from src/documents/Api.ts only for size; the new note's payload is exactly the create
 * endpoint's `NewDocument`.
 *
 * Scope `documents:write`, not `documents:cancel`: the request issues a new note (numbered, counted
 * against the quota), and the original's end is the national system's consequence of that note, not
 * a cancellation the caller asks for. API keys only, as issuing is (SPEC §5).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { DocumentPath, IdempotencyHeaders, issueErrors, KeyDocumentPath, NewDocument } from "../documents/Api.js"
import { ApiKeyAuth } from "../domain/Authentication.js"
import { described } from "../domain/Described.js"
import { Document, SubstitutionReasonCode } from "../domain/Document.js"
import { InvalidState, NotFound } from "../domain/Errors.js"
import { RequiredScope } from "../domain/Principal.js"
import { ReasonText } from "../domain/Text.js"

export const SubstituteDocument = Schema.Struct({
  document: NewDocument.annotate({
    description: "The corrected note, as `POST …/documents` takes it. Its DPS carries the `subst` group."
  }),
  reason_code: SubstitutionReasonCode,
  reason: Schema.optionalKey(
    ReasonText.pipe(
      described({ description: "Why the note is replaced: becomes `subst/xMotivo` (15 to 255 characters)." })
    )
  )
}).annotate({
  identifier: "SubstituteDocument",
  description: "A document that replaces an authorized one (`subst`): the new note and the reason."
})
export type SubstituteDocument = typeof SubstituteDocument.Type

const substituteErrors = [...issueErrors, NotFound, InvalidState]

const substituteDescription =
  "Replaces an `authorized` note with a corrected one: a new document (numbered, counted against the quota and " +
  "idempotent like `POST …/documents`, Idempotency-Key included) whose DPS carries the `subst` group naming the " +
  "original (`chSubstda`, `cMotivo`, `xMotivo`). When the authority authorizes it, the national system cancels the " +
  "original by substitution (event e105102): the original becomes `substituted` with `substituted_by`, the new one " +
  "has `substitutes`, and `document.substituted` is sent. If the new one is rejected, the original stays " +
  "`authorized`. `404 not_found` for a document of another tenant or environment; `409 invalid_state` unless the " +
  "original is `authorized`; `409 conflict` while another substitute of it is in flight. Needs `documents:write` " +
  "(it issues a note); API keys only."

export class SubstitutionApi extends HttpApiGroup.make("substitution")
  .add(
    HttpApiEndpoint.post("substitute", "/tenants/:tenantId/documents/:docId/substitute", {
      params: DocumentPath,
      payload: SubstituteDocument,
      headers: IdempotencyHeaders,
      success: Document.pipe(HttpApiSchema.status(202)),
      error: substituteErrors
    })
      .annotate(OpenApi.Summary, "Substitute a document")
      .annotate(OpenApi.Description, substituteDescription)
  )
  .add(
    HttpApiEndpoint.post("substituteForKey", "/documents/:docId/substitute", {
      params: KeyDocumentPath,
      payload: SubstituteDocument,
      headers: IdempotencyHeaders,
      success: Document.pipe(HttpApiSchema.status(202)),
      error: substituteErrors
    })
      .annotate(OpenApi.Summary, "Substitute a document (key's tenant)")
      .annotate(
        OpenApi.Description,
        "`POST /v1/tenants/{tenantId}/documents/{docId}/substitute` for the tenant of the API key."
      )
  )
  .middleware(ApiKeyAuth)
  .annotate(RequiredScope, "documents:write")
  .annotate(OpenApi.Title, "Substitution")
  .annotate(OpenApi.Description, "Replacing an authorized note with a corrected one (the national `subst` group).")
{}
