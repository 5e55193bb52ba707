/**
 * The metrics in Prometheus text (SPEC §13), served where the operator chooses:
 *
 * - `METRICS_PORT`: a port of its own, without authentication, for a scraper on a private network;
 *   it listens on `METRICS_HOST` (127.0.0.1 unless the operator names the private interface, or
 *   0.0.0.0 inside a container whose port only the scraper reaches) and serves `GET /metrics` alone;
 * - `METRICS_TOKEN`: `GET /metrics` on the API port, for a scraper that sends
 *   `Authorization: Bearer <METRICS_TOKEN>`.
 *
 * With neither, `/metrics` is not served (a 404 like any unknown path): metrics reveal tenants' ids
 * and traffic, so they are never public by default. OTLP export (`Tracing.ts`) is independent.
 */
import { Config, Duration, Effect, Layer, Metric, Option, Redacted, Schedule } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import { processMemory, prometheusName } from "./Metrics.js"
import { untraced } from "./TraceContext.js"

const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"

export const metricsConfig = Config.all({
  port: Config.option(Config.Port("METRICS_PORT")),
  /** The address the metrics port listens on: this machine alone unless the operator opens it. */
  host: Config.String("METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
  token: Config.option(Config.Redacted("METRICS_TOKEN")),
  /** How often the gauges that are sampled (queues, memory) are read. */
  sampleInterval: Config.Duration("METRICS_SAMPLE_INTERVAL").pipe(Config.withDefault(Duration.seconds(15)))
})

const exposition = PrometheusMetrics.format({ metricNameMapper: prometheusName })

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

const notFound = HttpServerResponse.jsonUnsafe({
  code: "not_found",
  message: "No endpoint matches this method and path."
}, {
  status: 404
})

const unauthorized = HttpServerResponse.jsonUnsafe(
  { code: "missing_credentials", message: "Send the metrics token as Authorization: Bearer <METRICS_TOKEN>." },
  { status: 401, headers: { "www-authenticate": `Bearer realm="metrics"` } }
)

/** `GET /metrics` on the API port: behind METRICS_TOKEN, or absent. */
export const MetricsRouteLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const { token } = yield* Effect.orDie(metricsConfig)
    yield* router.add(
      "GET",
      "/metrics",
      Effect.gen(function*() {
        if (Option.isNone(token)) return notFound
        const request = yield* HttpServerRequest.HttpServerRequest
        const given = /^Bearer (\S+)$/i.exec(request.headers["authorization"] ?? "")?.[1]
        if (given === undefined || !sameSecret(given, Redacted.value(token.value))) return unauthorized
        return HttpServerResponse.text(yield* exposition, { contentType: PROMETHEUS_TEXT })
      })
    )
  })
)

/** The separate metrics port, when METRICS_PORT is set, and the sampled gauges. */
export const MetricsServerLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const { host, port, sampleInterval } = yield* Effect.orDie(metricsConfig)
    yield* Effect.forkScoped(
      untraced(Effect.repeat(
        Effect.suspend(() => Metric.update(processMemory, process.memoryUsage.rss())),
        Schedule.spaced(sampleInterval)
      ))
    )
    if (Option.isNone(port)) return
    const context = yield* Effect.context<never>()
    const server = createServer((request, response) => {
      if (request.method !== "GET" || (request.url ?? "").split("?")[0] !== "/metrics") {
        response.writeHead(404, { "content-type": "application/json" }).end(
          JSON.stringify({ code: "not_found", message: "This port serves GET /metrics only." })
        )
        return
      }
      response.writeHead(200, { "content-type": PROMETHEUS_TEXT })
        .end(PrometheusMetrics.formatUnsafe(context, { metricNameMapper: prometheusName }))
    })
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.once("error", (error) => resume(Effect.die(error)))
        server.listen(port.value, host, () => resume(Effect.void))
      }),
      () => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    )
    yield* Effect.logInfo(`metrics on ${host}:${port.value}`)
  })
)
