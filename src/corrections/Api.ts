/**
 * Correction letters (CC-e, event 110110) of NF-e documents (SPEC §6, goods invoices): the contract
 * of its own group, served by the documents module (src/documents/Corrections.ts). A letter is
 * answered in its request, as the authority answers it; the list is its status path.
 *
 * Scope `documents:write`: a letter changes what the note says, as issuing does. On the tenant path
 * a member's session as `owner` or `admin` writes them too, and any member reads them.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { DocumentPath, KeyDocumentPath } from "../documents/Api.js"
import { ApiKeyAuth, KeyOrSessionAuth } from "../domain/Authentication.js"
import { Correction, NewCorrection } from "../domain/Correction.js"
import { CredentialRequired, InvalidState, NotFound, ServiceUnavailable } from "../domain/Errors.js"
import { Page } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, RequiredScope } from "../domain/Principal.js"

const correctErrors = [NotFound, InvalidState, CredentialRequired, ServiceUnavailable]

const correctDescription =
  "Registers a correction letter (CC-e, event 110110) of an `authorized` NF-e with its state authority and " +
  "answers the letter as the authority left it: `registered` with the event's `protocol`, or `refused` with its " +
  "`error` (the authority's code and message). Letters are numbered 1 to 20 per note (`sequence`); each replaces " +
  "the ones before, so it restates every correction still wanted. A letter may correct what the law allows after " +
  "authorization (descriptions, addresses, transport data), never a value, a tax, a party or a date. " +
  "`409 invalid_state` for an NFC-e, an NFS-e, a note that is not `authorized`, a note with 20 letters, or while " +
  "another letter is `pending`; `503 service_unavailable` when the authority does not answer: the letter stays " +
  "`pending` under its number, and the same text sent again finishes it (never two letters). `document.corrected` " +
  "is sent when a letter is registered. In the sandbox, `simulate:reject` in the text has the simulator refuse it (999)."

export class CorrectionsApi extends HttpApiGroup.make("corrections")
  .add(
    HttpApiEndpoint.post("correct", "/tenants/:tenantId/documents/:docId/correction", {
      params: DocumentPath,
      payload: NewCorrection,
      success: Correction,
      error: correctErrors
    })
      .annotate(OpenApi.Summary, "Send a correction letter (CC-e)")
      .annotate(OpenApi.Description, correctDescription)
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "documents:write")
      .annotate(RequiredRoles, managerRoles)
  )
  .add(
    HttpApiEndpoint.get("list", "/tenants/:tenantId/documents/:docId/corrections", {
      params: DocumentPath,
      success: Page(Correction),
      error: [NotFound]
    })
      .annotate(OpenApi.Summary, "List a document's correction letters")
      .annotate(
        OpenApi.Description,
        "Every correction letter of the document, first to last, refused ones included (in one page: an NF-e has " +
          "at most 20 registered letters). Empty for a document that has none."
      )
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "documents:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.post("correctForKey", "/documents/:docId/correction", {
      params: KeyDocumentPath,
      payload: NewCorrection,
      success: Correction,
      error: correctErrors
    })
      .annotate(OpenApi.Summary, "Send a correction letter (key's tenant)")
      .annotate(
        OpenApi.Description,
        "`POST /v1/tenants/{tenantId}/documents/{docId}/correction` for the tenant of the API key."
      )
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:write")
  )
  .add(
    HttpApiEndpoint.get("listForKey", "/documents/:docId/corrections", {
      params: KeyDocumentPath,
      success: Page(Correction),
      error: [NotFound]
    })
      .annotate(OpenApi.Summary, "List a document's correction letters (key's tenant)")
      .annotate(
        OpenApi.Description,
        "`GET /v1/tenants/{tenantId}/documents/{docId}/corrections` for the tenant of the API key."
      )
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "documents:read")
  )
  .annotate(OpenApi.Title, "Correction letters")
  .annotate(OpenApi.Description, "The correction letters (CC-e) of NF-e documents.")
{}
