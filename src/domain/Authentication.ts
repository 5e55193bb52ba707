/**
 * The authentication middleware contracts (implemented in keys/Authentication.ts). Each reads
 * `Authorization: Bearer …`, verifies it against the database on every request (no cache may
 * serve a revoked key), enforces the endpoint's declared scope or roles and the `{tenantId}` of
 * the path, and provides the principal.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import {
  ApiKeyExpired,
  ApiKeyRevoked,
  Forbidden,
  InsufficientScope,
  InvalidApiKey,
  InvalidSession,
  MissingCredentials,
  NotFound,
  RateLimited
} from "./Errors.js"
import { type CurrentApiKey, type CurrentPrincipal, type CurrentSession } from "./Principal.js"

/**
 * The schemes as the OpenAPI document names them. Each is `Authorization: Bearer <token>`; the
 * token's prefix tells them apart (SPEC §3).
 */
const apiKeyScheme = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "etd_live_… / etd_test_…"),
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An API key of the tenant, for backends: `etd_live_…` reaches the authority's production system and counts " +
      "against the monthly quota, `etd_test_…` its homologation sandbox. The key needs the scope the operation " +
      "names (`documents:read`, `documents:write`, `documents:cancel`, `credentials:read`, `webhooks:read`, " +
      "`webhooks:write`; else `403 insufficient_scope`) and sees only its own environment's data. Created, " +
      "rotated and revoked from a session (`/v1/tenants/{tenantId}/api-keys`). Never in a URL (`400 api_key_in_url`) or from a browser (`403 api_key_in_browser`)."
  )
)

const sessionScheme = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "etd_sess_…"),
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "A user's session (the dashboard's), from `POST /v1/auth/login`; it expires after 12 hours by default " +
      "(`SESSION_TTL`) or at logout. On a tenant's path the user must be a member (else `404 not_found`), with " +
      "the role the operation names (`owner`, `admin`, `developer`; else `403 forbidden`)."
  )
)

/**
 * `KeyOrSessionAuth` takes either token under one scheme, since one middleware tells them apart by
 * prefix. The OpenAPI transform (openapi.ts) lists it as the alternatives `apiKey` or `session`.
 */
const apiKeyOrSessionScheme = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "etd_live_… / etd_test_… / etd_sess_…"),
  HttpApiSecurity.annotate(OpenApi.Description, "An API key (`apiKey`) or a member's session (`session`).")
)

export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentApiKey }>()("ApiKeyAuth", {
  error: [MissingCredentials, InvalidApiKey, ApiKeyRevoked, ApiKeyExpired, InsufficientScope, NotFound, RateLimited],
  security: { apiKey: apiKeyScheme }
}) {}

export class SessionAuth extends HttpApiMiddleware.Service<SessionAuth, { provides: CurrentSession }>()("SessionAuth", {
  error: [MissingCredentials, InvalidSession, Forbidden, NotFound, RateLimited],
  security: { session: sessionScheme }
}) {}

/**
 * A member's session or an active key of the path's tenant (SPEC §5, what a member's session may
 * do): a key needs the endpoint's `RequiredScope` when it declares one, a session the endpoint's
 * `RequiredRoles` (every member for reads, `owner`/`admin` for writes).
 */
export class KeyOrSessionAuth extends HttpApiMiddleware.Service<KeyOrSessionAuth, { provides: CurrentPrincipal }>()(
  "KeyOrSessionAuth",
  {
    error: [
      MissingCredentials,
      InvalidApiKey,
      ApiKeyRevoked,
      ApiKeyExpired,
      InsufficientScope,
      InvalidSession,
      Forbidden,
      NotFound,
      RateLimited
    ],
    security: { bearer: apiKeyOrSessionScheme }
  }
) {}
