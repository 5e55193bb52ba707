/**
 * OTLP export of traces and metrics, configured by the standard OTEL_* variables. With no
 * endpoint set nothing is exported (spans still exist, so `x-request-id` still carries a trace id).
 * Logs are not exported over OTLP on purpose: they leave through stdout, behind the token guard.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"

const keyValues = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(",")
      .map((pair) => pair.split("=").map((part) => decodeURIComponent(part.trim())))
      .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== "")
  )

const otelConfig = Config.all({
  endpoint: Config.option(Config.NonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("etd-service")),
  attributes: Config.String("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.map(keyValues), Config.withDefault({})),
  headers: Config.Redacted("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.option)
})

export const TracingLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* Effect.orDie(otelConfig)
    if (config.disabled || Option.isNone(config.endpoint)) return Layer.empty
    const base = config.endpoint.value.replace(/\/$/, "")
    const options = {
      resource: { serviceName: config.serviceName, serviceVersion: "1.0.0", attributes: config.attributes },
      headers: Option.match(config.headers, { onNone: () => ({}), onSome: (h) => keyValues(Redacted.value(h)) })
    }
    return Layer.mergeAll(
      OtlpTracer.layer({ ...options, url: `${base}/v1/traces` }),
      OtlpMetrics.layer({ ...options, url: `${base}/v1/metrics` })
    ).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
  })
)
