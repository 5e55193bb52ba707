/**
 * The authentication middleware contracts (implemented in http/Authentication.ts). Each reads
 * `Authorization: Bearer …`, verifies it against the database on every request (no cache may
 * serve a revoked key), enforces the endpoint's declared scope or roles and the `{tenantId}` of
 * the path, and provides the principal.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
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
} from "../domain/Errors.js"
import { CurrentApiKey, CurrentPrincipal, CurrentSession } from "../domain/Principal.js"

const bearer = HttpApiSecurity.bearer

export class ApiKeyAuth extends HttpApiMiddleware.Service<ApiKeyAuth, { provides: CurrentApiKey }>()("ApiKeyAuth", {
  error: [MissingCredentials, InvalidApiKey, ApiKeyRevoked, ApiKeyExpired, InsufficientScope, NotFound, RateLimited],
  security: { apiKey: bearer }
}) {}

export class SessionAuth extends HttpApiMiddleware.Service<SessionAuth, { provides: CurrentSession }>()("SessionAuth", {
  error: [MissingCredentials, InvalidSession, Forbidden, NotFound, RateLimited],
  security: { session: bearer }
}) {}

/**
 * A member's session or an active key of the path's tenant. A key needs the endpoint's
 * `RequiredScope` when it declares one; a session reads everything of its tenant.
 */
export class TenantReaderAuth extends HttpApiMiddleware.Service<TenantReaderAuth, { provides: CurrentPrincipal }>()(
  "TenantReaderAuth",
  {
    error: [MissingCredentials, InvalidApiKey, ApiKeyRevoked, ApiKeyExpired, InsufficientScope, InvalidSession, NotFound, RateLimited],
    security: { bearer }
  }
) {}
