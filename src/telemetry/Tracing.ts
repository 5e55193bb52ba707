/**
 * OTLP export of traces and metrics, configured by the standard OTEL_* variables. With no
 * endpoint set nothing is exported (spans still exist, so `x-request-id` still carries a trace id).
 * Logs are not exported over OTLP on purpose: they leave through stdout, behind the token guard.
 */
import { Config, Duration, Effect, Layer, Option, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { serviceInstanceId, serviceNameConfig, serviceVersion } from "./Resource.js"

/**
 * `key=value` pairs separated by commas, as the OTEL_* list variables are written. A value may
 * itself contain `=` (a Basic credential's base64 padding): only the first `=` separates.
 */
export const keyValues = (text: string): Record<string, string> => {
  const pairs: Record<string, string> = {}
  for (const item of text.split(",")) {
    const separator = item.indexOf("=")
    if (separator <= 0) continue
    const key = decodeOrKeep(item.slice(0, separator).trim())
    if (key !== "") pairs[key] = decodeOrKeep(item.slice(separator + 1).trim())
  }
  return pairs
}

/** Values are percent-encoded by the specification; a stray `%` is taken as written. */
const decodeOrKeep = (text: string) => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

const otelConfig = Config.all({
  endpoint: Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesEndpoint: Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  metricsEndpoint: Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")),
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  serviceName: serviceNameConfig,
  attributes: Config.String("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.map(keyValues), Config.withDefault({})),
  headers: Config.Redacted("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.option),
  metricsInterval: Config.Int("OTEL_METRIC_EXPORT_INTERVAL").pipe(Config.withDefault(60_000))
})

export const TracingLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* Effect.orDie(otelConfig)
    if (config.disabled) return Layer.empty
    // The base endpoint gets the signal's path; a signal's own endpoint is used as written (the specification's rule).
    const base = Option.map(config.endpoint, (url) => url.replace(/\/$/, ""))
    const tracesUrl = Option.orElse(config.tracesEndpoint, () => Option.map(base, (url) => `${url}/v1/traces`))
    const metricsUrl = Option.orElse(config.metricsEndpoint, () => Option.map(base, (url) => `${url}/v1/metrics`))
    const options = {
      resource: {
        serviceName: config.serviceName,
        serviceVersion,
        attributes: { "service.instance.id": serviceInstanceId, ...config.attributes }
      },
      headers: Option.match(config.headers, { onNone: () => ({}), onSome: (h) => keyValues(Redacted.value(h)) })
    }
    const traces = Option.match(tracesUrl, {
      onNone: () => Layer.empty,
      onSome: (url) => OtlpTracer.layer({ ...options, url })
    })
    const metrics = Option.match(metricsUrl, {
      onNone: () => Layer.empty,
      onSome: (url) => OtlpMetrics.layer({ ...options, url, exportInterval: Duration.millis(config.metricsInterval) })
    })
    return Layer.merge(traces, metrics).pipe(
      Layer.provide(OtlpSerialization.layerJson),
      Layer.provide(FetchHttpClient.layer)
    )
  })
)
