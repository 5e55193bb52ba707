/**
 * The authentication middleware. Each request is verified against the database (no cache), then
 * the endpoint's declared requirements are enforced: the `{tenantId}` of the path, the key's scope
 * or the member's role, and the rate limits of the key and its tenant, or of the session's user and
 * the tenant of its path. (An API key sent with a browser's request marks never gets here: the
 * server middleware refuses it, SPEC §4.)
 */
import { Context, Effect, Layer, Option } from "effect"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { HttpApiEndpoint } from "effect/http-api"
import { Api } from "../Api.js"
import { AuthService } from "../auth/AuthService.js"
import { AppConfig } from "../Config.js"
import { ApiKeyAuth, KeyOrSessionAuth, SessionAuth } from "../domain/Authentication.js"
import {
  ApiKeyExpired,
  ApiKeyRevoked,
  InsufficientScope,
  InvalidApiKey,
  InvalidSession,
  MissingCredentials,
  NotFound
} from "../domain/Errors.js"
import { asId } from "../domain/Ids.js"
import {
  type ApiKeyPrincipal,
  CurrentApiKey,
  CurrentPrincipal,
  CurrentSession,
  type SessionPrincipal
} from "../domain/Principal.js"
import { sessionTokenPattern } from "../domain/Tokens.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"
import { AuthenticatedTenant, TenantService } from "../tenants/TenantService.js"
import { KeyService } from "./KeyService.js"
import { type EndpointPolicy, keyRefusal, policyTable, requireRole } from "./Policy.js"

const BEARER = /^Bearer +([^\s]+)$/i

/**
 * The challenge of a bearer-authentication 401 (RFC 6750 §3, RFC 9110 §11.6.1): no error
 * attribute when no usable credentials came, `invalid_token` when a token came but does not
 * authenticate (unknown, revoked, expired, or a session that ended). A key without the endpoint's
 * scope gets the 403 challenge of §3.1, naming the scope. Other failures carry none.
 */
const challengeOf = (error: unknown): string | undefined => {
  if (error instanceof MissingCredentials) return `Bearer realm="etd"`
  if (
    error instanceof InvalidApiKey || error instanceof ApiKeyRevoked || error instanceof ApiKeyExpired ||
    error instanceof InvalidSession
  ) return `Bearer realm="etd", error="invalid_token"`
  if (error instanceof InsufficientScope) {
    return `Bearer realm="etd", error="insufficient_scope", scope="${error.required_scope}"`
  }
  return undefined
}

/**
 * Adds `WWW-Authenticate` to the response of a bearer-authentication failure. A pre-response
 * handler, because that response is built later, by the API (which encodes the error itself).
 */
const challenged = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapError(effect, (error) => {
    const challenge = challengeOf(error)
    return challenge === undefined
      ? Effect.void
      : HttpEffect.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", challenge))
      )
  })

/** The token of `Authorization: Bearer <token>`; a missing or malformed header is `missing_credentials`. */
const bearerToken = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const match = BEARER.exec(request.headers["authorization"] ?? "")
  return match?.[1] ? Effect.succeed(match[1]) : Effect.fail(new MissingCredentials())
})

const make = Effect.gen(function*() {
  const keys = yield* KeyService
  const auth = yield* AuthService
  const tenants = yield* TenantService
  const limiter = yield* RateLimiter
  const config = yield* AppConfig
  // An endpoint without its policy is a wiring mistake: the server refuses to start, naming it.
  const policyOf = yield* Effect.orDie(policyTable(Api))
  const keyBucket = { capacity: config.rateLimit.burst, refillPerSecond: config.rateLimit.perSecond }
  const tenantBucket = { capacity: config.tenantRateLimit.burst, refillPerSecond: config.tenantRateLimit.perSecond }
  const userBucket = { capacity: config.sessionRateLimit.burst, refillPerSecond: config.sessionRateLimit.perSecond }
  const membersBucket = {
    capacity: config.sessionTenantRateLimit.burst,
    refillPerSecond: config.sessionTenantRateLimit.perSecond
  }

  // Per endpoint, not per request: the middleware is handed the contract's own endpoint objects.
  const policies = new WeakMap<HttpApiEndpoint.Top, EndpointPolicy>()
  const policyFor = (endpoint: HttpApiEndpoint.Top) => {
    let policy = policies.get(endpoint)
    if (policy === undefined) {
      policy = policyOf(endpoint.method, endpoint.path)
      if (policy !== undefined) policies.set(endpoint, policy)
    }
    return policy
  }

  // Fails closed: only an endpoint of another API than the one checked above can have no policy.
  const noPolicy = (endpoint: HttpApiEndpoint.Top) =>
    Effect.die(new Error(`no endpoint policy for ${endpoint.method} ${endpoint.path}`))
  const currentPolicy = (endpoint: HttpApiEndpoint.Top) => {
    const policy = policyFor(endpoint)
    return policy === undefined
      ? noPolicy(endpoint)
      : Effect.map(HttpRouter.params, (params) => ({ pathTenantId: params["tenantId"], policy }))
  }

  /**
   * An API key's request: the key verified, its ids on the span, its and its tenant's buckets drawn,
   * the path's tenant and the endpoint's scope checked, then `serve` with the principal and the
   * tenant read with the key. A chain rather than a generator, its checks one synchronous step:
   * every key-authenticated request runs it.
   */
  const withKey = <A, E, R>(
    token: string,
    endpoint: HttpApiEndpoint.Top,
    serve: (principal: ApiKeyPrincipal, tenant: AuthenticatedTenant["Service"]) => Effect.Effect<A, E, R>
  ) =>
    Effect.flatMap(keys.verify(token), ({ principal, tenant }) =>
      Effect.annotateCurrentSpan({
        "tenant.id": principal.tenantId,
        "api_key.id": principal.keyId,
        "api_key.environment": principal.environment
      }).pipe(
        Effect.andThen(limiter.consume([
          { key: `key:${principal.keyId}`, policy: keyBucket },
          { key: `tenant:${principal.tenantId}`, policy: tenantBucket }
        ])),
        Effect.andThen(Effect.withFiber((fiber): Effect.Effect<A, E | NotFound | InsufficientScope, R> => {
          const policy = policyFor(endpoint)
          if (policy === undefined) return noPolicy(endpoint)
          const route = Context.getUnsafe(
            fiber.context as Context.Context<HttpRouter.RouteContext>,
            HttpRouter.RouteContext
          )
          const refusal = keyRefusal(route.params["tenantId"], principal.tenantId, policy.scope, principal.scopes)
          return refusal === undefined ? serve(principal, tenant) : Effect.fail(refusal)
        }))
      ))

  const authenticateSession = (token: string, endpoint: HttpApiEndpoint.Top) =>
    Effect.gen(function*() {
      if (!sessionTokenPattern.test(token)) return yield* new InvalidSession()
      const principal = yield* auth.verifySession(token)
      yield* Effect.annotateCurrentSpan({ "user.id": principal.userId })
      // Per user, not per session: every session of the user draws from one bucket, so logging in
      // again buys no more throughput (SPEC §11).
      const user = { key: `user:${principal.userId}`, policy: userBucket }
      const { pathTenantId, policy } = yield* currentPolicy(endpoint)
      if (pathTenantId === undefined) {
        yield* limiter.consume([user])
        return { principal, policy }
      }
      // The path's schema has not checked the id yet; it is only looked up, and a malformed one is no
      // tenant's (the 404 below). Membership comes before the tenant's bucket, so that a stranger
      // cannot spend a tenant's budget; the price is this lookup even for a request then refused.
      const role = yield* tenants.roleOf(asId("tenant", pathTenantId), principal.userId)
      if (Option.isNone(role)) {
        yield* limiter.consume([user])
        // A non-member learns nothing about the tenant: the same 404 as for a tenant that does not exist.
        return yield* new NotFound()
      }
      // All members' sessions together have a budget on the tenant's paths, so more members buy no
      // more throughput either. It is not the `tenant:` bucket of the tenant's API keys: a runaway or
      // leaked key that empties that one must not lock its owners out of the dashboard where they
      // revoke it, and people browsing must not slow the tenant's integration down.
      yield* limiter.consume([user, { key: `tenant-sessions:${pathTenantId}`, policy: membersBucket }])
      yield* Effect.annotateCurrentSpan({ "tenant.id": pathTenantId })
      return { principal: { ...principal, role: role.value } satisfies SessionPrincipal, policy }
    })

  const apiKey = ApiKeyAuth.of({
    apiKey: (httpEffect, { endpoint }) =>
      Effect.flatMap(bearerToken, (token) =>
        withKey(token, endpoint, (principal, tenant) =>
          httpEffect.pipe(
            Effect.provideService(CurrentApiKey, principal),
            Effect.provideService(AuthenticatedTenant, tenant)
          ))).pipe(challenged)
  })

  /** A session's request: the session verified, the member's role checked, then `serve` with the principal. */
  const withSession = <A, E, R>(
    token: string,
    endpoint: HttpApiEndpoint.Top,
    serve: (principal: SessionPrincipal) => Effect.Effect<A, E, R>
  ) =>
    Effect.flatMap(authenticateSession(token, endpoint), ({ policy, principal }) =>
      principal.role === undefined
        ? serve(principal)
        : Effect.andThen(requireRole(policy.roles, principal.role), serve(principal)))

  const session = SessionAuth.of({
    session: (httpEffect, { endpoint }) =>
      Effect.flatMap(
        bearerToken,
        (token) =>
          withSession(token, endpoint, (principal) => Effect.provideService(httpEffect, CurrentSession, principal))
      ).pipe(challenged)
  })

  // Chains rather than generators, like `withKey`: every key-authenticated read of a tenant runs it.
  const keyOrSession = KeyOrSessionAuth.of({
    bearer: (httpEffect, { endpoint }) =>
      Effect.flatMap(bearerToken, (token): ReturnType<KeyOrSessionAuth["Service"]["bearer"]> => {
        // A key acts within its scopes; a member's session within its role (SPEC §5).
        if (token.startsWith("etd_live_") || token.startsWith("etd_test_")) {
          return withKey(token, endpoint, (principal, tenant) =>
            httpEffect.pipe(
              Effect.provideService(CurrentPrincipal, principal),
              Effect.provideService(AuthenticatedTenant, tenant)
            ))
        }
        if (!token.startsWith("etd_sess_")) return Effect.fail(new InvalidApiKey())
        return withSession(
          token,
          endpoint,
          (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)
        )
      }).pipe(challenged)
  })

  return Context.make(ApiKeyAuth, apiKey).pipe(
    Context.add(SessionAuth, session),
    Context.add(KeyOrSessionAuth, keyOrSession)
  )
})

export const AuthenticationLive = Layer.effectContext(make)
