/**
 * The server span of a request, opened before routing: named after the route template, with the
 * URL's tokens redacted, sampled as the caller and the sampler say; the request's `x-request-id`
 * is its trace id. When the status is known, the request's duration goes to
 * `http.server.request.duration` and one access-log line is written under the span.
 */
import { Effect, Layer, Metric, Option, type Tracer } from "effect"
import { HttpEffect, HttpMiddleware, type HttpServerRequest, HttpServerResponse, HttpTraceContext } from "effect/http"
import { embeddedTokenPattern } from "../domain/Tokens.js"
import { httpServerDuration } from "../telemetry/Metrics.js"
import { decide, type TraceSampler } from "../telemetry/Sampler.js"
import { runWithin } from "../telemetry/TraceContext.js"
import { shownAddress } from "./ClientAddress.js"
import { pathOf } from "./Routing.js"

const redactTokens = (text: string) => text.replace(embeddedTokenPattern, "[REDACTED]")

/** The methods the semantic conventions name; any other is `_OTHER`, so a client cannot mint labels. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])
const methodOf = (method: string) => (KNOWN_METHODS.has(method) ? method : "_OTHER")

/** Paths polled by orchestrators and scrapers. */
const POLLED = new Set(["/healthz", "/readyz", "/metrics"])
const isPolled = (url: string) => POLLED.has(pathOf(url))

const PRINCIPAL_ATTRIBUTES = ["tenant.id", "api_key.id", "api_key.environment", "user.id"] as const

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
  // The client as `ClientAddress.ts` named it (behind a trusted proxy, the one it forwarded for).
  if (Option.isSome(request.remoteAddress)) fields["client.address"] = shownAddress(request.remoteAddress.value)
  for (const name of PRINCIPAL_ATTRIBUTES) {
    const value = span.attributes.get(name)
    if (value !== undefined) fields[name] = value
  }
  return Metric.update(Metric.withAttributes(httpServerDuration, attributes), elapsedMs / 1000).pipe(
    // Probes' lines are debug: at the default level, the log is about the service's users.
    Effect.andThen(
      Effect.logWithLevel(isPolled(request.url) ? "Debug" : "Info")("request").pipe(Effect.annotateLogs(fields))
    ),
    Effect.withParentSpan(span, { captureStackTrace: false })
  )
}

export interface ServedRequest {
  readonly request: HttpServerRequest.HttpServerRequest
  /** The route template the request matches, if any. */
  readonly template: string | undefined
  /** When the request arrived (`performance.now()`). */
  readonly started: number
}

/**
 * Serves a request under its server span. The URL recorded on the span never carries a token. The
 * response headers are set by a pre-response handler because the response is written inside the app.
 */
export const withServerSpan = <E, R>(
  sampler: TraceSampler,
  { request, started, template }: ServedRequest,
  handled: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => {
  const method = methodOf(request.method)
  const parent = Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers))
  return Effect.useSpan(
    // Without a route the name is the method alone (semantic conventions): a path would make
    // one span name per URL.
    template === undefined ? method : `${method} ${template}`,
    // `useSpan` captures no stack trace (Effect 4's span options for it have no such switch).
    // Probes and scrapes come every few seconds whether or not anyone uses the service: they are
    // traced only when their caller asks (SPEC §13, an idle instance emits no spans).
    {
      kind: "server",
      parent,
      sampled: isPolled(request.url) ? parent?.sampled === true : decide(sampler, parent?.sampled)
    },
    (span) => {
      span.attribute("http.request.method", method)
      span.attribute("url.path", redactTokens(pathOf(request.url)))
      if (template) span.attribute("http.route", template)
      if (request.headers["user-agent"]) {
        span.attribute("user_agent.original", redactTokens(request.headers["user-agent"]))
      }
      if (Option.isSome(request.remoteAddress)) {
        span.attribute("client.address", shownAddress(request.remoteAddress.value))
      }
      // The socket's peer: behind a proxy, the proxy (semantic conventions).
      if (Option.isSome(request.peerAddress)) {
        span.attribute("network.peer.address", shownAddress(request.peerAddress.value))
      }
      // A fresh trace is this request's alone: its id is the request id. A continued trace
      // may be the caller's for many requests, so our span id is added to keep the id unique.
      const requestId = parent !== undefined ? `${span.traceId}-${span.spanId}` : span.traceId
      const finish = (response: HttpServerResponse.HttpServerResponse) => {
        span.attribute("http.response.status_code", response.status)
        return observe(span, request, template, response.status, performance.now() - started).pipe(
          // nosniff: a stored note's XML (or any body) is only ever what its content type says.
          Effect.as(
            HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "x-content-type-options": "nosniff" })
          )
        )
      }
      return HttpEffect.appendPreResponseHandler((_, response) => finish(response)).pipe(
        // A request whose caller's trace is not sampled makes no spans below this one.
        Effect.andThen(runWithin(span)(handled))
      )
    }
  )
}

/** Our own server span replaces the built-in one, which records full URLs (tokens included). */
export const BuiltInTracerDisabled = Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)
