/**
 * The root contract. Every endpoint, payload and error of the service is declared here or in a
 * module's Api.ts; the server, the OpenAPI document and the typed client all derive from it.
 *
 * The typed client is published from this contract (client/): these files import only
 * `effect` and each other (`npm run depcruise`, rule contract-imports-only-contract). What only
 * the server needs, such as the OpenAPI document's rewriting, is added in ApiDocument.ts.
 */
import { HttpApi, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { AuthApi, InvitationAcceptanceApi } from "./auth/Api.js"
import { BillingApi } from "./billing/Api.js"
import { CorrectionsApi } from "./corrections/Api.js"
import { CredentialsApi } from "./credentials/Api.js"
import { DocumentFilesApi, DocumentsApi, UsageApi } from "./documents/Api.js"
import {
  ApiKeyInBrowser,
  ApiKeyInUrl,
  InternalError,
  InvalidRequest,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable
} from "./domain/Errors.js"
import { KeysApi } from "./keys/Api.js"
import { SubstitutionApi } from "./substitution/Api.js"
import { SystemApi } from "./system/Api.js"
import { InvitationsApi, TenantsApi } from "./tenants/Api.js"
import { VoidingApi } from "./voiding/Api.js"
import { WebhooksApi } from "./webhooks/Api.js"

/**
 * The API-level errors (invalid request, token in the URL, an API key from a browser, unknown route,
 * body too large, internal error), declared on every endpoint; `http/ApiErrors.ts` maps the framework's failures onto them.
 */
export class ApiErrors extends HttpApiMiddleware.Service<ApiErrors>()("ApiErrors", {
  error: [InvalidRequest, ApiKeyInUrl, ApiKeyInBrowser, NotFound, PayloadTooLarge, ServiceUnavailable, InternalError]
}) {}

/**
 * Everything but the system endpoints lives under `/v1` (SPEC §2, base path). A separate API because
 * `prefix` applies to every group added so far, and the system group comes first in the document.
 */
const V1 = HttpApi.make("v1")
  .add(AuthApi)
  .add(InvitationAcceptanceApi)
  .add(TenantsApi)
  .add(InvitationsApi)
  .add(KeysApi)
  .add(DocumentsApi)
  .add(SubstitutionApi)
  .add(CorrectionsApi)
  .add(VoidingApi)
  .add(DocumentFilesApi)
  .add(UsageApi)
  .add(WebhooksApi)
  .add(CredentialsApi)
  .add(BillingApi)
  .prefix("/v1")

export class Api extends HttpApi.make("etd")
  .add(SystemApi)
  .addHttpApi(V1)
  .middleware(ApiErrors)
  // A client fixing a request should learn every issue at once (SPEC §2, `issues`), not the first.
  .annotate(HttpApi.ParseOptions, { errors: "all" })
  .annotate(OpenApi.Title, "Electronic tax-document issuing API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(
    OpenApi.Description,
    "Issues NFS-e service invoices to the national tax authority for many tenants. Live API keys reach production, test keys the homologation sandbox. Every path is also served without the `/v1` prefix."
  )
{}
