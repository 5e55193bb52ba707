/**
 * Cross-cutting HTTP behaviour, in two layers:
 *
 * - `serverMiddleware` is router-global: it wraps every request before routing. It opens the
 *   server span (named after the route template, with the URL's tokens redacted), sets
 *   `x-request-id` to the trace id, refuses tokens in the URL, bodies over 1 MiB and JSON that is
 *   nested too deep or is not text, serves the unprefixed aliases of `/v1` paths, and answers
 *   unknown routes with the SPEC's 404 body.
 * - `ApiErrorsLive` implements the contract's `ApiErrors`, an API middleware on every endpoint,
 *   inside the API, so its errors are encoded by the contract: it maps the framework's own
 *   failures (validation, unreadable or oversized bodies, unstorable text, defects) onto the
 *   SPEC's error bodies.
 */
import { ByteSize, Cause, Effect, Layer, Metric, Option, Schema, SchemaIssue, type Tracer } from "effect"
import {
  HttpEffect,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  HttpTraceContext,
  Multipart
} from "effect/http"
import { HttpApi, HttpApiError, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"
import { Api, ApiErrors } from "../Api.js"
import { isDatabaseUnavailable, isUnstorableText } from "../db/errors.js"
import {
  ApiKeyInBrowser,
  ApiKeyInUrl,
  InternalError,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  statusOf
} from "../domain/Errors.js"
import { apiKeyTokenPattern, embeddedTokenPattern, findTokensInUrl } from "../domain/Tokens.js"
import { jsonTextProblem, MAX_JSON_DEPTH } from "./JsonText.js"
import { ExposureReports } from "../telemetry/ExposureReports.js"
import { httpServerDuration } from "../telemetry/Metrics.js"
import { decide, TraceSampler } from "../telemetry/Sampler.js"
import { runWithin } from "../telemetry/TraceContext.js"
import type { EndpointPolicy } from "../keys/Policy.js"
import { withResponseHeader } from "./ResponseHeaders.js"

export const MAX_BODY_BYTES = 1024 * 1024

/**
 * The pages `App.ts` serves at the root beside the contract: the OpenAPI document, the reference
 * page, the metrics, and the dashboard (`/` and its files under `/assets/`). They are never aliases
 * of a `/v1` path, and they are named like routes in spans, metrics and the access log.
 */
const ROOT_PAGES: ReadonlyArray<RouteTemplate> = [
  { method: "GET", template: "/", pattern: /^\/$/ },
  { method: "GET", template: "/openapi.json", pattern: /^\/openapi\.json$/ },
  { method: "GET", template: "/docs", pattern: /^\/docs$/ },
  { method: "GET", template: "/metrics", pattern: /^\/metrics$/ },
  { method: "GET", template: "/assets/{file}", pattern: /^\/assets\/.+$/ }
]

const isRootPage = (path: string) => ROOT_PAGES.some((page) => page.pattern.test(path))

const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const isVersioned = (path: string) => path === "/v1" || path.startsWith("/v1/")

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

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const issuesOf = (error: HttpApiError.HttpApiSchemaError) => {
  const issues = formatIssues(error.cause.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => {
      const key = typeof segment === "object" ? segment.key : segment
      return typeof key === "number" ? key : String(key)
    }),
    message: issue.message
  }))
  // Schema's default messages quote the actual value ("Expected …, got …"); a secret must never be echoed back.
  return issues.map((issue) =>
    issue.path.some((segment) => typeof segment === "string" && /password|secret|pkcs12/i.test(segment)) &&
      /\b(got|actual)\b/.test(issue.message)
      ? { ...issue, message: "is not valid" }
      : issue
  )
}

/** Bounds on what a validation error reports, so an error body never grows with the input. */
const MAX_ISSUES = 20
const MAX_ISSUE_MESSAGE = 240

const clip = (text: string) => (text.length > MAX_ISSUE_MESSAGE ? `${text.slice(0, MAX_ISSUE_MESSAGE - 1)}…` : text)

const invalidRequest = (error: HttpApiError.HttpApiSchemaError) => {
  const issues = issuesOf(error)
    .slice(0, MAX_ISSUES)
    .map((issue) => ({ path: issue.path.slice(0, 16).map((s) => (typeof s === "string" ? clip(s) : s)), message: clip(issue.message) }))
  const summary = issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
  return new InvalidRequest({ message: `The request is not valid. ${summary.join("; ")}`, issues })
}

/**
 * A multipart body that could not be read: too many parts or a parse failure is the client's
 * malformed request; a part over its limit (e.g. the credential upload's file size) is a 413.
 */
const multipartError = (error: Multipart.MultipartError): PayloadTooLarge | InvalidRequest => {
  switch (error.reason._tag) {
    case "TooManyParts":
      return new InvalidRequest({ message: "The multipart/form-data body has too many parts." })
    case "Parse":
    case "InternalError":
      return new InvalidRequest({ message: "The multipart/form-data body could not be read." })
    default:
      return new PayloadTooLarge({ message: "A part of the multipart/form-data body is larger than this endpoint accepts." })
  }
}

/** An unreadable body: over the size limit, or not what its content type says. */
const bodyError = (error: HttpServerError.HttpServerError): PayloadTooLarge | InvalidRequest =>
  error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
    ? new PayloadTooLarge()
    : new InvalidRequest({ message: "The request body could not be read as JSON." })

type ApiFailure = InvalidRequest | PayloadTooLarge | ServiceUnavailable | InternalError

/** Sets `Retry-After` on the response this request ends with. */
const withRetryAfter = (seconds: number) => withResponseHeader("retry-after", String(seconds))

/** Seconds a client should wait before retrying while the database is out of reach. */
const DATABASE_RETRY_AFTER_SECONDS = 2

/** An outage is the client's to retry, not our bug (SPEC §2): 503 with `Retry-After`, logged as a warning. */
const databaseUnavailable = withRetryAfter(DATABASE_RETRY_AFTER_SECONDS).pipe(
  Effect.andThen(Effect.logWarning("the database is unreachable: answered 503")),
  Effect.andThen(Effect.fail(new ServiceUnavailable({ retry_after: DATABASE_RETRY_AFTER_SECONDS })))
)

/** Framework failures become the SPEC's error values; anything unknown becomes a 500 without internals. */
const toContractError = <E>(
  cause: Cause.Cause<E>,
  isDeclared: (error: unknown) => boolean
): Effect.Effect<never, E | ApiFailure, HttpServerRequest.HttpServerRequest> => {
  for (const reason of cause.reasons) {
    const value: unknown = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    if (HttpApiError.HttpApiSchemaError.is(value)) {
      if (value.kind === "Body" || value.kind === "ResponseHeaders") break
      return Effect.fail(invalidRequest(value))
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(value)) return Effect.fail(new PayloadTooLarge())
    if (HttpServerError.isHttpServerError(value)) return Effect.fail(bodyError(value))
    if (Multipart.isMultipartError(value)) return Effect.fail(multipartError(value))
    if (isDatabaseUnavailable(value)) return databaseUnavailable
    if (isUnstorableText(value)) {
      return Effect.fail(new InvalidRequest({ message: "The request contains text that cannot be stored (a NUL character)." }))
    }
  }
  const failure = Cause.findErrorOption(cause)
  const undeclared = Option.isSome(failure) && !isDeclared(failure.value)
  if (undeclared || Cause.hasDies(cause) || (!Cause.hasFails(cause) && !Cause.hasInterruptsOnly(cause))) {
    return Effect.andThen(Effect.logError("unexpected failure", cause), Effect.fail(new InternalError()))
  }
  // Contract errors declared on the endpoint pass through unchanged; the API encodes them. A 503
  // names its wait in the body and, as SPEC §2 wants, in `Retry-After` (e.g. the tax authority away).
  if (Option.isSome(failure) && failure.value instanceof ServiceUnavailable) {
    return withRetryAfter(failure.value.retry_after).pipe(Effect.andThen(Effect.failCause(cause)))
  }
  return Effect.failCause(cause)
}


const endpointKey = (group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top) => `${group.identifier}.${endpoint.identifier}`

/**
 * For each endpoint of the API, whether a failure is one of the errors its contract declares (its
 * own and its middlewares'). An undeclared one cannot be encoded, and the framework would answer an
 * empty 500 without logging it.
 */
const declaredErrors = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const table = new Map<string, (error: unknown) => boolean>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors, group }) => {
      const guards = [...errors.values()].flat().map((schema) => Schema.is(schema))
      table.set(endpointKey(group, endpoint), (error) => guards.some((is) => is(error)))
    }
  })
  return table
}

const declaresNothing = () => false

/**
 * The framework answers a body of a content type the endpoint does not accept with a plain-text
 * 415 of its own; the contract's answer is a 400 `invalid_request` naming what the endpoint takes.
 */
const unsupportedContentType = (endpoint: HttpApiEndpoint.Top) => (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 415
    ? Effect.fail(
      new InvalidRequest({ message: `Send the request body as ${[...endpoint.payload.keys()].join(" or ")}.` })
    )
    : Effect.succeed(response)

/** The `ApiErrors` middleware of an API, its error table read from the API's contract when the layer is built. */
export const apiErrorsLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  Layer.sync(ApiErrors, () => {
    const declared = declaredErrors(api)
    return (httpEffect, { endpoint, group }) =>
      httpEffect.pipe(
        Effect.flatMap(unsupportedContentType(endpoint)),
        // An endpoint of another API declares nothing known here: its failures are logged 500s.
        Effect.catchCause((cause) => toContractError(cause, declared.get(endpointKey(group, endpoint)) ?? declaresNothing))
      )
  })

export const ApiErrorsLive = apiErrorsLayer(Api)

/** The contract errors answered before the API runs (a token in the URL or from a browser, no route, oversized body). */
const encodeEarlyError = Schema.encodeSync(
  Schema.Union([ApiKeyInUrl, ApiKeyInBrowser, NotFound, MethodNotAllowed, PayloadTooLarge, InvalidRequest])
)

const respond = (error: ApiKeyInUrl | ApiKeyInBrowser | NotFound | MethodNotAllowed | PayloadTooLarge | InvalidRequest) =>
  HttpServerResponse.jsonUnsafe(encodeEarlyError(error), { status: statusOf(error) })

export interface RouteTemplate {
  readonly method: string
  readonly template: string
  readonly pattern: RegExp
}

/** The route templates of the contract, in OpenAPI form (`/v1/tenants/{tenantId}`), for span names. */
export const routeTemplates = (policies: ReadonlyArray<EndpointPolicy>): ReadonlyArray<RouteTemplate> =>
  policies.map((policy) => ({
    method: policy.method,
    template: policy.path.replace(/:(\w+)/g, "{$1}"),
    pattern: new RegExp(`^${policy.path.replace(/:(\w+)/g, "[^/]+")}$`)
  }))

const segmentsOf = (path: string) => path.split("/").length

/**
 * The template a request's path matches, for its span's name. The templates are indexed once by
 * method and number of segments, so a request tests the few of its shape, not all of them.
 */
export const routeTemplateIndex = (routes: ReadonlyArray<RouteTemplate>) => {
  const index = new Map<string, Array<RouteTemplate>>()
  for (const route of routes) {
    const key = `${route.method} ${segmentsOf(route.template)}`
    index.set(key, [...(index.get(key) ?? []), route])
  }
  return (method: string, path: string): string | undefined =>
    index.get(`${method} ${segmentsOf(path)}`)?.find((route) => route.pattern.test(path))?.template
}

/** `Allow` lists methods in this order (RFC 9110 gives none; the usual one reads best). */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

/**
 * The methods a path takes, for `Allow` (RFC 9110 §10.2.1); none for a path the service does not
 * have. HEAD goes with GET (the router answers it with the GET handler), and OPTIONS with every
 * path the service has (answered below, before routing). Only asked for requests the router found
 * no route for, so it tests every template rather than keeping an index.
 */
export const allowedMethods = (routes: ReadonlyArray<RouteTemplate>) => (path: string): ReadonlyArray<string> => {
  const methods = new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))
  if (isRootPage(path)) methods.add("GET")
  if (methods.size === 0) return []
  if (methods.has("GET")) methods.add("HEAD")
  methods.add("OPTIONS")
  return METHOD_ORDER.filter((method) => methods.has(method))
}

/**
 * The answer to a request the router has no route for. A path the service has answers OPTIONS with
 * `204` and `Allow` (no CORS headers: none are granted), and any other method it does not take
 * with `405 method_not_allowed` and `Allow`. Everything else is `404 not_found`, also a method
 * the path does take (the router refused the request for another reason, such as a path
 * parameter over its length limit).
 */
const unrouted = (allowedOf: (path: string) => ReadonlyArray<string>, method: string, path: string) => {
  const allowed = allowedOf(path)
  if (allowed.length === 0 || (method !== "OPTIONS" && allowed.includes(method))) {
    return respond(new NotFound({ message: "No endpoint matches this method and path." }))
  }
  const allow = { allow: allowed.join(", ") }
  return method === "OPTIONS"
    ? HttpServerResponse.empty({ status: 204, headers: allow })
    : HttpServerResponse.setHeaders(respond(new MethodNotAllowed()), allow)
}

const maxBodySize = ByteSize.bytes(MAX_BODY_BYTES)

const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.method !== "GET" && request.method !== "HEAD" && /\bjson\b/i.test(request.headers["content-type"] ?? "")

/**
 * A JSON body's shape problems, answered before the API parses it (`JsonText.ts`). The body is read
 * here once; the request caches it, so the API reads the same bytes.
 */
const earlyJsonError = (request: HttpServerRequest.HttpServerRequest) =>
  hasJsonBody(request)
    ? request.text.pipe(
      Effect.map((text): PayloadTooLarge | InvalidRequest | null => {
        switch (jsonTextProblem(text)) {
          case "too_deep":
            return new InvalidRequest({ message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.` })
          case "lone_surrogate":
            return new InvalidRequest({
              message: "The JSON body contains an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF), which is not text."
            })
          case null:
            return null
        }
      }),
      Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodySize),
      // An unreadable body is the API's to report, with the rest of its validation.
      Effect.catch((error) =>
        Effect.succeed(
          error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge" ? new PayloadTooLarge() : null
        )
      )
    )
    : Effect.succeed(null)

/**
 * What every request leaves behind once its status is known (SPEC §13): its duration in
 * `http.server.request.duration`, and one access-log line with the principal's ids, which the
 * authentication has put on the server span. The line is written under the server span, so it
 * carries the request's trace id (its `x-request-id`).
 */
const observe = (
  span: Tracer.Span,
  request: HttpServerRequest.HttpServerRequest,
  route: string | undefined,
  status: number,
  elapsedMs: number
) => {
  // Metric attributes are strings; the log line keeps the status a number.
  const attributes: Record<string, string> = {
    "http.request.method": methodOf(request.method),
    "http.response.status_code": String(status)
  }
  if (route !== undefined) attributes["http.route"] = route
  const fields: Record<string, unknown> = {
    ...attributes,
    "http.response.status_code": status,
    duration_ms: Math.round(elapsedMs * 100) / 100
  }
  for (const name of PRINCIPAL_ATTRIBUTES) {
    const value = span.attributes.get(name)
    if (value !== undefined) fields[name] = value
  }
  return Metric.update(Metric.withAttributes(httpServerDuration, attributes), elapsedMs / 1000).pipe(
    // Probes' lines are debug: at the default level, the log is about the service's users.
    Effect.andThen(Effect.logWithLevel(isPolled(request.url) ? "Debug" : "Info")("request").pipe(Effect.annotateLogs(fields))),
    Effect.withParentSpan(span, { captureStackTrace: false })
  )
}

/**
 * Headers only a browser sets (the Fetch standard's forbidden request headers, which page scripts
 * cannot remove). `Sec-Fetch-Mode` is not one of them: Node's own `fetch` sends it too, and a
 * backend using it must not be refused.
 */
const BROWSER_MARKS = ["origin", "sec-fetch-site", "sec-fetch-dest"] as const

/**
 * Keys stay on backends (SPEC §4): the API key of a request that carries a browser's marks, on any
 * path, public ones included. Judged by the token's shape before anything else runs, as a key in
 * the URL is: the key is exposed whether or not it is valid, so an unknown, revoked or expired key
 * gets the same 403 as an active one (a page's script learns nothing of its validity), and the
 * refused request records no use of the key and spends none of its rate limit. The exposure monitor
 * then names the key if one has that token (an unknown one is only counted); a malformed token is
 * no key, and the authentication answers it as usual.
 */
const apiKeyFromBrowser = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (!BROWSER_MARKS.some((name) => headers[name] !== undefined)) return undefined
  const token = /^Bearer +(\S+)$/i.exec(headers["authorization"] ?? "")?.[1]
  return token !== undefined && apiKeyTokenPattern.test(token) ? token : undefined
}

/** The methods the semantic conventions name; any other is `_OTHER`, so a client cannot mint labels. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])
const methodOf = (method: string) => (KNOWN_METHODS.has(method) ? method : "_OTHER")

/** Paths polled by orchestrators and scrapers. */
const POLLED = new Set(["/healthz", "/readyz", "/metrics"])
const isPolled = (url: string) => POLLED.has(pathOf(url))

const PRINCIPAL_ATTRIBUTES = ["tenant.id", "api_key.id", "api_key.environment", "user.id"] as const

/**
 * The router-global middleware. The URL recorded on the span never carries a token. The response
 * headers are set by a pre-response handler because the response is written inside the app.
 */
export const serverMiddleware = (policies: ReadonlyArray<EndpointPolicy>) => {
  const routes = routeTemplates(policies)
  const routeTemplateOf = routeTemplateIndex([...routes, ...ROOT_PAGES])
  const allowedOf = allowedMethods(routes)
  // The contract's own root endpoints (`/healthz`, `/readyz`); every other unprefixed path is an alias of its `/v1` form.
  const rootRoutes = routes.filter((route) => !isVersioned(route.template))
  const aliasOf = (url: string): string => {
    const path = pathOf(url)
    return isVersioned(path) || isRootPage(path) || rootRoutes.some((route) => route.pattern.test(path))
      ? url
      : `/v1${url}`
  }
  return HttpRouter.middleware(
    Effect.map(Effect.all([ExposureReports, TraceSampler]), ([exposure, sampler]) => (app) =>
      Effect.gen(function*() {
        // Real time, not the Clock: a duration is only measured where real I/O takes real time.
        const started = performance.now()
        const request = yield* HttpServerRequest.HttpServerRequest
        const url = aliasOf(request.url)
        // HEAD is served by every GET route: it has that route's template.
        const template = routeTemplateOf(request.method === "HEAD" ? "GET" : request.method, pathOf(url))
        const method = methodOf(request.method)
        const parent = Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers))
        return yield* Effect.useSpan(
          // Without a route the name is the method alone (semantic conventions): a path would make
          // one span name per URL.
          template === undefined ? method : `${method} ${template}`,
          // `useSpan` captures no stack trace (Effect 4's span options for it have no such switch).
          // Probes and scrapes come every few seconds whether or not anyone uses the service: they are
          // traced only when their caller asks (SPEC §13, an idle instance emits no spans).
          { kind: "server", parent, sampled: isPolled(request.url) ? parent?.sampled === true : decide(sampler, parent?.sampled) },
          (span) => {
            span.attribute("http.request.method", method)
            span.attribute("url.path", redactTokens(pathOf(request.url)))
            if (template) span.attribute("http.route", template)
            if (request.headers["user-agent"]) span.attribute("user_agent.original", redactTokens(request.headers["user-agent"]))
            if (Option.isSome(request.remoteAddress)) span.attribute("client.address", request.remoteAddress.value)
            // A fresh trace is this request's alone: its id is the request id. A continued trace
            // may be the caller's for many requests, so our span id is added to keep the id unique.
            const requestId = parent !== undefined ? `${span.traceId}-${span.spanId}` : span.traceId
            const finish = (response: HttpServerResponse.HttpServerResponse) => {
              span.attribute("http.response.status_code", response.status)
              return observe(span, request, template, response.status, performance.now() - started).pipe(
                // nosniff: a stored note's XML (or any body) is only ever what its content type says.
                Effect.as(HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "x-content-type-options": "nosniff" }))
              )
            }
            const handled = Effect.gen(function*() {
              const leaked = tokensIn(request.url)
              if (leaked.length > 0) {
                yield* exposure.report(findTokensInUrl(request.url), "url")
                return respond(new ApiKeyInUrl())
              }
              const fromBrowser = apiKeyFromBrowser(request.headers)
              if (fromBrowser !== undefined) {
                yield* exposure.report([fromBrowser], "browser")
                return respond(new ApiKeyInBrowser())
              }
              if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
                return respond(new PayloadTooLarge())
              }
              const target = url === request.url ? request : request.modify({ url })
              const early = yield* earlyJsonError(target)
              if (early !== null) return respond(early)
              const routed = url === request.url ? app : Effect.provideService(app, HttpServerRequest.HttpServerRequest, target)
              return yield* Effect.provideService(routed, HttpIncomingMessage.MaxBodySize, maxBodySize).pipe(
                Effect.catchIf(
                  (error) => HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound",
                  () => Effect.succeed(unrouted(allowedOf, request.method, pathOf(url)))
                )
              )
            })
            return HttpEffect.appendPreResponseHandler((_, response) => finish(response)).pipe(
              // A request whose caller's trace is not sampled makes no spans below this one.
              Effect.andThen(runWithin(span)(handled))
            )
          }
        )
      })),
    { global: true }
  )
}

/** Our own server span replaces the built-in one, which records full URLs (tokens included). */
export const BuiltInTracerDisabled = Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)
