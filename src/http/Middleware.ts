/**
 * Cross-cutting HTTP behaviour, in two layers:
 *
 * - `ServerMiddleware` wraps every request: the server span (named after the route template,
 *   with the URL's tokens redacted), `x-request-id` equal to the trace id, and a last-resort 500.
 * - `ApiMiddlewareLive` sits inside the API, before routing and before errors are encoded:
 *   unprefixed aliases of `/v1` paths, tokens in the URL, the 1 MiB body limit, and the mapping of
 *   the framework's own failures (validation, unknown route, unreadable body, defects) onto the
 *   SPEC's error bodies.
 */
import {
  HttpApiBuilder,
  HttpApp,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  HttpTraceContext,
  Multipart
} from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { Api } from "../Api.js"
import { isUnstorableText } from "../db/errors.js"
import {
  ApiKeyInUrl,
  Conflict,
  Forbidden,
  IdempotencyConflict,
  IdempotencyKeyReused,
  InsufficientScope,
  InternalError,
  InvalidApiKey,
  InvalidCredentials,
  InvalidRequest,
  InvalidSession,
  InvalidSignature,
  InvalidState,
  MissingCredentials,
  NotFound,
  NotReady,
  PayloadTooLarge,
  QuotaExceeded,
  RateLimited,
  TenantSuspended,
  ApiKeyExpired,
  ApiKeyRevoked,
  CertificateExpired,
  CertificateNotYetValid,
  CertificatePasswordIncorrect,
  CertificateTaxIdMismatch,
  InvalidCertificate
} from "../domain/Errors.js"
import { embeddedTokenPattern } from "../domain/Tokens.js"
import { ExposureReports } from "../keys/ExposureMonitor.js"
import { endpointPolicies } from "../keys/Policy.js"

export const MAX_BODY_BYTES = 1024 * 1024

/** Paths served at the root; every other unprefixed path is an alias of its `/v1` form. */
const ROOT_PATHS = new Set(["/healthz", "/readyz", "/openapi.json", "/docs"])

const contractErrors = [
  InvalidRequest, ApiKeyInUrl, MissingCredentials, InvalidApiKey, ApiKeyRevoked, ApiKeyExpired, InvalidSession,
  InvalidCredentials, InvalidSignature, QuotaExceeded, TenantSuspended, InsufficientScope, Forbidden, NotFound,
  IdempotencyConflict, InvalidState, Conflict, PayloadTooLarge, IdempotencyKeyReused, RateLimited, NotReady,
  InternalError, InvalidCertificate, CertificatePasswordIncorrect, CertificateExpired, CertificateNotYetValid,
  CertificateTaxIdMismatch
]
const isContractError = (error: unknown) => contractErrors.some((cls) => error instanceof cls)

/** The route template of a request, in OpenAPI form (`/v1/tenants/{tenantId}`), for span names. */
const routeTemplates = endpointPolicies(Api).map((policy) => ({
  method: policy.method,
  template: policy.path.replace(/:(\w+)/g, "{$1}"),
  pattern: new RegExp(`^${policy.path.replace(/:(\w+)/g, "[^/]+")}$`)
}))

export const routeTemplateOf = (method: string, path: string): string | undefined =>
  routeTemplates.find((route) => route.method === method && route.pattern.test(path))?.template

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

export const aliasOf = (url: string): string => {
  const path = pathOf(url)
  return path === "/v1" || path.startsWith("/v1/") || ROOT_PATHS.has(path) ? url : `/v1${url}`
}

const redactTokens = (text: string) => text.replace(embeddedTokenPattern, "[REDACTED]")

const tokensIn = (url: string): ReadonlyArray<string> => {
  let decoded = url
  try {
    decoded = decodeURIComponent(url)
  } catch {
    // A malformed escape cannot hide a token better than the raw text shows it.
  }
  return [...new Set([...url.matchAll(embeddedTokenPattern), ...decoded.matchAll(embeddedTokenPattern)].map((m) => m[0]))]
}

const issuesOf = (error: { readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> }) => {
  const issues = error.issues.map((issue) => ({
    path: issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment))),
    message: issue.message
  }))
  // An optional field is `X | undefined` to Schema, so a bad value also fails the `undefined`
  // branch ("Expected undefined, actual …"); that echo says nothing when the field has real issues.
  const within = (outer: ReadonlyArray<string | number>, inner: ReadonlyArray<string | number>) =>
    outer.length <= inner.length && outer.every((segment, i) => segment === inner[i])
  return issues
    .filter((issue, i) =>
      !(issue.message.startsWith("Expected undefined,") &&
        issues.some((other, j) => j !== i && within(issue.path, other.path)))
    )
    // Schema's default messages quote the actual value; a secret must never be echoed back.
    .map((issue) =>
      issue.path.some((segment) => typeof segment === "string" && /password|secret|pkcs12/i.test(segment)) &&
        issue.message.includes("actual")
        ? { ...issue, message: "is not valid" }
        : issue
    )
}

/**
 * Contract errors declared on an endpoint pass through unchanged (the API's encoder knows their
 * schemas), so the static type only needs to name the API-level ones.
 */
type ContractFailure = InvalidRequest | ApiKeyInUrl | NotFound | PayloadTooLarge | InternalError
const passThrough = (cause: Cause.Cause<unknown>) => Effect.failCause(cause as Cause.Cause<ContractFailure>)

/** An unreadable body: over the size limit (the Node reader says "maxBytes exceeded") or not JSON. */
const bodyError = (error: HttpServerError.RequestError): PayloadTooLarge | InvalidRequest =>
  /maxBytes|maxBodySize|too large/.test(String(error.cause))
    ? new PayloadTooLarge()
    : new InvalidRequest({ message: "The request body could not be read as JSON." })

/**
 * A multipart body that could not be read. A limit hit while a file streams to disk arrives as
 * `InternalError` wrapping the parser's `ReachedLimit`, so the cause is looked at too.
 */
const multipartError = (error: Multipart.MultipartError): PayloadTooLarge | InvalidRequest => {
  const cause: unknown = error.cause
  const limit = typeof cause === "object" && cause !== null && "_tag" in cause && cause._tag === "ReachedLimit" &&
      "limit" in cause
    ? cause.limit
    : undefined
  if (error.reason === "TooManyParts" || limit === "MaxParts") {
    return new InvalidRequest({ message: "The multipart/form-data body has too many parts." })
  }
  if (error.reason === "Parse" || (error.reason === "InternalError" && limit === undefined)) {
    return new InvalidRequest({ message: "The multipart/form-data body could not be read." })
  }
  return new PayloadTooLarge({ message: "A part of the multipart/form-data body is larger than this endpoint accepts." })
}

/** Framework failures become the SPEC's error values; anything unknown becomes a 500 without internals. */
const toContractError = (cause: Cause.Cause<unknown>): Effect.Effect<never, ContractFailure> => {
  // HttpApiBuilder reads the body with `Effect.orDie`, so malformed JSON and an oversized chunked
  // body arrive as defects, not failures.
  const unreadable = Cause.find(cause, (reason) =>
    Cause.isDieType(reason) && reason.defect instanceof HttpServerError.RequestError
      ? Option.some(reason.defect)
      : Option.none())
  if (Option.isSome(unreadable)) return Effect.fail(bodyError(unreadable.value))
  // Multipart bodies are read the same way; their limits (e.g. the credential upload's file size) fail as MultipartError.
  const multipart = Cause.find(cause, (reason) =>
    Cause.isDieType(reason) && reason.defect instanceof Multipart.MultipartError ? Option.some(reason.defect) : Option.none())
  if (Option.isSome(multipart)) return Effect.fail(multipartError(multipart.value))
  const unstorable = Cause.find(cause, (reason) =>
    (Cause.isDieType(reason) && isUnstorableText(reason.defect)) || (Cause.isFailType(reason) && isUnstorableText(reason.error))
      ? Option.some(reason)
      : Option.none())
  if (Option.isSome(unstorable)) {
    return Effect.fail(new InvalidRequest({ message: "The request contains text that cannot be stored (a NUL character)." }))
  }
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (isContractError(error)) return passThrough(cause)
    if (typeof error === "object" && error !== null && "_tag" in error) {
      switch (error._tag) {
        case "HttpApiDecodeError": {
          const issues = issuesOf(error as unknown as Parameters<typeof issuesOf>[0])
          const summary = issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
          return Effect.fail(new InvalidRequest({ message: `The request is not valid. ${summary.join("; ")}`, issues }))
        }
        case "RouteNotFound":
          return Effect.fail(new NotFound({ message: "No endpoint matches this method and path." }))
        case "RequestError":
          if (error instanceof HttpServerError.RequestError) return Effect.fail(bodyError(error))
      }
    }
  }
  if (Cause.isInterruptedOnly(cause)) return passThrough(cause)
  return Effect.zipRight(Effect.logError("unexpected failure", cause), Effect.fail(new InternalError()))
}

export const ApiMiddlewareLive = HttpApiBuilder.middleware(
  Api,
  Effect.map(ExposureReports, (exposure) => (app: HttpApp.Default) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const leaked = tokensIn(request.url)
      if (leaked.length > 0) {
        yield* Effect.forEach(leaked, (token) => exposure.report(token, "url"), { discard: true })
        return yield* new ApiKeyInUrl()
      }
      const declaredLength = Number(request.headers["content-length"] ?? 0)
      if (declaredLength > MAX_BODY_BYTES) return yield* new PayloadTooLarge()
      const url = aliasOf(request.url)
      const routed = url === request.url
        ? app
        : Effect.provideService(app, HttpServerRequest.HttpServerRequest, request.modify({ url }))
      return yield* HttpIncomingMessage.withMaxBodySize(routed, Option.some(MAX_BODY_BYTES))
    }).pipe(Effect.catchAllCause(toContractError)))
)

/**
 * The server span and `x-request-id`. The URL recorded on the span never carries a token. The
 * header is added by a pre-response handler because the response is written inside the app.
 */
export const ServerMiddleware = (app: HttpApp.Default): HttpApp.Default =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const path = pathOf(aliasOf(request.url))
    const template = routeTemplateOf(request.method, path)
    const parent = HttpTraceContext.fromHeaders(request.headers)
    return yield* Effect.useSpan(
      `${request.method} ${template ?? "unmatched route"}`,
      { kind: "server", parent: Option.getOrUndefined(parent), captureStackTrace: false },
      (span) => {
        span.attribute("http.request.method", request.method)
        span.attribute("url.path", redactTokens(pathOf(request.url)))
        if (template) span.attribute("http.route", template)
        if (request.headers["user-agent"]) span.attribute("user_agent.original", request.headers["user-agent"])
        if (Option.isSome(request.remoteAddress)) span.attribute("client.address", request.remoteAddress.value)
        return HttpApp.appendPreResponseHandler((_, response) =>
          Effect.sync(() => {
            span.attribute("http.response.status_code", response.status)
            return HttpServerResponse.setHeader(response, "x-request-id", span.traceId)
          })
        ).pipe(Effect.zipRight(Effect.withParentSpan(app, span)))
      }
    )
  })
