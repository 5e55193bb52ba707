/**
 * The server span of a request, opened before routing: named after the route template, with the
 * URL's tokens redacted, sampled as the caller and the sampler say; the request's `x-request-id`
 * is its trace id. When the status is known, the request's duration goes to
 * `http.server.request.duration` and one access-log line is written with the span's ids.
 *
 * Every request pays for this, so it does no more than each request needs: a span that is not
 * sampled is never exported, so it gets no attributes of ours (the authentication still writes the
 * principal's ids on it, for the access log); the metric's series handles are made once per
 * method, status and route; the access-log line carries its fields and span with it instead of
 * opening a scope of log annotations under the span.
 */
import { type Context, Effect, Layer, Metric, Option, type Tracer } from "effect"
import { HttpEffect, HttpMiddleware, type HttpServerRequest, HttpServerResponse, HttpTraceContext } from "effect/http"
import { embeddedTokenPattern, percentDecoded } from "../domain/Tokens.js"
import { LineWithFields } from "../telemetry/Logger.js"
import { httpServerDuration } from "../telemetry/Metrics.js"
import { decide, type TraceSampler } from "../telemetry/Sampler.js"
import { runWithin } from "../telemetry/TraceContext.js"
import { shownAddress } from "./ClientAddress.js"
import { pathOf } from "./Routing.js"

const redactTokens = (text: string) => (text.includes("etd_") ? text.replace(embeddedTokenPattern, "[REDACTED]") : text)

/**
 * A URL's path as its span shows it, with no token: a percent-encoded token is a token all the
 * same, so a path that decodes to one is shown decoded, redacted.
 */
const shownPath = (url: string) => {
  const path = pathOf(url)
  const decoded = percentDecoded(path)
  const redacted = redactTokens(decoded)
  return redacted !== decoded ? redacted : path
}

/** The methods the semantic conventions name; any other is `_OTHER`, so a client cannot mint labels. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"])
const methodOf = (method: string) => (KNOWN_METHODS.has(method) ? method : "_OTHER")

/** Paths polled by orchestrators and scrapers. */
const POLLED = new Set(["/healthz", "/readyz", "/metrics"])

const PRINCIPAL_ATTRIBUTES = ["tenant.id", "api_key.id", "api_key.environment", "user.id"] as const

/** The caller's trace context; most requests send none, and then no header is parsed. */
const callerSpan = (headers: HttpServerRequest.HttpServerRequest["headers"]) =>
  headers["traceparent"] === undefined && headers["b3"] === undefined && headers["x-b3-traceid"] === undefined
    ? undefined
    : Option.getOrUndefined(HttpTraceContext.fromHeaders(headers))

type Series = typeof httpServerDuration

/**
 * The duration histogram's handle for one method, status and route. A handle made per request
 * would compute its series key on every update; these sets are bounded (the known methods, the
 * statuses the service answers, its route templates, or none).
 */
const durationSeries = new Map<string | undefined, Map<string, Map<number, Series>>>()
const seriesOf = (method: string, status: number, route: string | undefined): Series => {
  let byMethod = durationSeries.get(route)
  if (byMethod === undefined) durationSeries.set(route, byMethod = new Map())
  let byStatus = byMethod.get(method)
  if (byStatus === undefined) byMethod.set(method, byStatus = new Map())
  let series = byStatus.get(status)
  if (series === undefined) {
    // Metric attributes are strings; the log line keeps the status a number.
    const attributes: Record<string, string> = {
      "http.request.method": method,
      "http.response.status_code": String(status)
    }
    if (route !== undefined) attributes["http.route"] = route
    byStatus.set(status, series = Metric.withAttributes(httpServerDuration, attributes))
  }
  return series
}

// Probes' lines are debug: at the default level, the log is about the service's users.
const logInfo = Effect.logWithLevel("Info")
const logDebug = Effect.logWithLevel("Debug")

/** The attributes of a sampled server span (a span that is not sampled is never read but for the access log). */
const describe = (
  span: Tracer.Span,
  request: HttpServerRequest.HttpServerRequest,
  method: string,
  template: string | undefined,
  client: string | undefined
) => {
  span.attribute("http.request.method", method)
  span.attribute("url.path", shownPath(request.url))
  if (template) span.attribute("http.route", template)
  const userAgent = request.headers["user-agent"]
  if (userAgent) span.attribute("user_agent.original", redactTokens(userAgent))
  if (client !== undefined) span.attribute("client.address", client)
  // The socket's peer: behind a proxy, the proxy (semantic conventions).
  const peer = request.peerAddress
  if (Option.isSome(peer)) span.attribute("network.peer.address", shownAddress(peer.value))
}

export interface ServedRequest {
  /** The context the request is served in: its pre-response handlers, the metrics' registry. */
  readonly context: Context.Context<never>
  readonly request: HttpServerRequest.HttpServerRequest
  /** The route template the request matches, if any. */
  readonly template: string | undefined
  /** When the request arrived (`performance.now()`). */
  readonly started: number
}

/**
 * Serves a request under its server span. The URL recorded on the span never carries a token. The
 * response headers, the duration and the access-log line are done by a pre-response handler, which
 * sees every answer, the framework's error responses included.
 */
export const withServerSpan = <E, R>(
  sampler: TraceSampler,
  { context, request, started, template }: ServedRequest,
  handled: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, Exclude<R, Tracer.ParentSpan>> => {
  const method = methodOf(request.method)
  const parent = callerSpan(request.headers)
  const polled = POLLED.has(pathOf(request.url))
  // Probes and scrapes come every few seconds whether or not anyone uses the service: they are
  // traced only when their caller asks (SPEC §13, an idle instance emits no spans).
  const sampled = polled ? parent?.sampled === true : decide(sampler, parent?.sampled)
  const remote = request.remoteAddress
  // The client as `ClientAddress.ts` named it (behind a trusted proxy, the one it forwarded for).
  const client = Option.isSome(remote) ? shownAddress(remote.value) : undefined
  return Effect.useSpan(
    // Without a route the name is the method alone (semantic conventions): a path would make
    // one span name per URL. `useSpan` captures no stack trace.
    template === undefined ? method : `${method} ${template}`,
    { kind: "server", parent, sampled },
    (span) => {
      if (sampled) describe(span, request, method, template, client)
      HttpEffect.appendPreResponseHandlerUnsafe(context, (_, response) => {
        const status = response.status
        const elapsedMs = performance.now() - started
        if (sampled) span.attribute("http.response.status_code", status)
        seriesOf(method, status, template).updateUnsafe(elapsedMs / 1000, context)
        // One access-log line per request (SPEC §13), with the principal's ids, which the
        // authentication has put on the span, and the span's trace id (the request's id).
        const fields: Record<string, unknown> = {
          "http.request.method": method,
          "http.response.status_code": status
        }
        if (template !== undefined) fields["http.route"] = template
        fields["duration_ms"] = Math.round(elapsedMs * 100) / 100
        if (client !== undefined) fields["client.address"] = client
        const attributes = span.attributes
        for (const name of PRINCIPAL_ATTRIBUTES) {
          const value = attributes.get(name)
          if (value !== undefined) fields[name] = value
        }
        // A fresh trace is this request's alone: its id is the request id. A continued trace
        // may be the caller's for many requests, so our span id is added to keep the id unique.
        const requestId = parent !== undefined ? `${span.traceId}-${span.spanId}` : span.traceId
        return Effect.as(
          (polled ? logDebug : logInfo)(new LineWithFields("request", fields, span)),
          // nosniff: a stored note's XML (or any body) is only ever what its content type says.
          HttpServerResponse.setHeaders(response, { "x-request-id": requestId, "x-content-type-options": "nosniff" })
        )
      })
      // A request whose trace is not sampled makes no spans below this one.
      return runWithin(span)(handled)
    }
  )
}

/** Our own server span replaces the built-in one, which records full URLs (tokens included). */
export const BuiltInTracerDisabled = Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)
