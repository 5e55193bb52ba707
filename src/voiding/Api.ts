/**
 * Number voiding (inutilização) of goods series (SPEC §6, goods invoices): the contract of its own
 * group, served by the documents module (src/documents/Voiding.ts). A voiding is answered in its
 * request, as the authority answers it; `GET` is its status path.
 *
 * API keys only, like issuing (SPEC §5): the key's environment is the series'. Scope
 * `documents:write` to void, `documents:read` to read.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ApiKeyAuth } from "../domain/Authentication.js"
import {
  Conflict,
  CredentialRequired,
  InvalidState,
  NotFound,
  RegistrationIncomplete,
  ServiceUnavailable
} from "../domain/Errors.js"
import { IdOf, TenantIdParam } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { RequiredScope } from "../domain/Principal.js"
import { NewVoiding, VoidedNumbers } from "../domain/Voiding.js"

const voidErrors = [InvalidState, Conflict, RegistrationIncomplete, CredentialRequired, ServiceUnavailable, NotFound]

const voidDescription =
  "Voids a range of numbers of an NF-e or NFC-e series that no note used (inutilização), at the authority of the " +
  "tenant's state, and answers it as the authority left it: `registered` with its `protocol`, or `refused` with its " +
  "`error` (the authority's code and message). The numbers must have been drawn (`409 invalid_state` beyond the " +
  "series' last number) and held by no document but ones the authority rejected or that failed (`409 conflict` " +
  "naming the document); a range that overlaps one voided or being voided is `409 conflict`. `503 " +
  "service_unavailable` when the authority does not answer: the voiding stays `pending`, and the same request again " +
  "finishes it. At most 1 000 numbers per request. `numbers.voided` is sent when a range is registered. In the " +
  "sandbox, `simulate:reject` in the reason has the simulator refuse it (999)."

export class VoidingApi extends HttpApiGroup.make("voiding")
  .add(
    HttpApiEndpoint.post("voidNumbers", "/tenants/:tenantId/voided-numbers", {
      params: { tenantId: TenantIdParam },
      payload: NewVoiding,
      success: VoidedNumbers,
      error: voidErrors
    })
      .annotate(OpenApi.Summary, "Void unused numbers (inutilização)")
      .annotate(OpenApi.Description, voidDescription)
      .annotate(RequiredScope, "documents:write")
  )
  .add(
    HttpApiEndpoint.get("list", "/tenants/:tenantId/voided-numbers", {
      params: { tenantId: TenantIdParam },
      query: PageParams,
      success: Page(VoidedNumbers)
    })
      .annotate(OpenApi.Summary, "List voided ranges")
      .annotate(OpenApi.Description, "The key's environment's voidings, newest first, refused ones included.")
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId/voided-numbers/:voidingId", {
      params: { tenantId: TenantIdParam, voidingId: IdOf("voiding") },
      success: VoidedNumbers,
      error: [NotFound]
    })
      .annotate(OpenApi.Summary, "Get a voided range")
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.post("voidNumbersForKey", "/voided-numbers", {
      payload: NewVoiding,
      success: VoidedNumbers,
      error: voidErrors
    })
      .annotate(OpenApi.Summary, "Void unused numbers (key's tenant)")
      .annotate(OpenApi.Description, "`POST /v1/tenants/{tenantId}/voided-numbers` for the tenant of the API key.")
      .annotate(RequiredScope, "documents:write")
  )
  .add(
    HttpApiEndpoint.get("listForKey", "/voided-numbers", { query: PageParams, success: Page(VoidedNumbers) })
      .annotate(OpenApi.Summary, "List voided ranges (key's tenant)")
      .annotate(OpenApi.Description, "`GET /v1/tenants/{tenantId}/voided-numbers` for the tenant of the API key.")
      .annotate(RequiredScope, "documents:read")
  )
  .add(
    HttpApiEndpoint.get("getForKey", "/voided-numbers/:voidingId", {
      params: { voidingId: IdOf("voiding") },
      success: VoidedNumbers,
      error: [NotFound]
    })
      .annotate(OpenApi.Summary, "Get a voided range (key's tenant)")
      .annotate(RequiredScope, "documents:read")
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Number voiding")
  .annotate(OpenApi.Description, "Voiding ranges of NF-e and NFC-e numbers no note used (inutilização).")
{}
