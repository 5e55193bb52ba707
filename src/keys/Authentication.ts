/**
 * The authentication middleware contracts (implementations in AuthenticationLive.ts). Each reads
 * `Authorization: Bearer …`, verifies it against the database on every request (no cache may
 * serve a revoked key), enforces the endpoint's declared scope or roles and the `{tenantId}` of
 * the path, and provides the principal.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
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

export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("ApiKeyAuth", {
  failure: Schema.Union(
    MissingCredentials,
    InvalidApiKey,
    ApiKeyRevoked,
    ApiKeyExpired,
    InsufficientScope,
    NotFound,
    RateLimited
  ),
  provides: CurrentApiKey,
  security: { apiKey: bearer }
}) {}

export class SessionAuth extends HttpApiMiddleware.Tag<SessionAuth>()("SessionAuth", {
  failure: Schema.Union(MissingCredentials, InvalidSession, Forbidden, NotFound),
  provides: CurrentSession,
  security: { session: bearer }
}) {}

/** A member's session or any active key of the path's tenant (no scope needed). */
export class TenantReaderAuth extends HttpApiMiddleware.Tag<TenantReaderAuth>()("TenantReaderAuth", {
  failure: Schema.Union(
    MissingCredentials,
    InvalidApiKey,
    ApiKeyRevoked,
    ApiKeyExpired,
    InvalidSession,
    NotFound,
    RateLimited
  ),
  provides: CurrentPrincipal,
  security: { bearer }
}) {}
