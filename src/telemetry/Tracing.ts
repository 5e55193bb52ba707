/**
 * OTLP export of traces and metrics, configured by the standard OTEL_* variables. With no
 * endpoint set nothing is exported (spans still exist, so `x-request-id` still carries a trace id).
 * Logs are not exported over OTLP on purpose: they leave through stdout, behind the token guard.
 */
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "@effect/opentelemetry"
import { FetchHttpClient } from "@effect/platform"
import { Config, Effect, Layer, Option, Redacted } from "effect"

const keyValues = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split(",")
      .map((pair) => pair.split("=").map((part) => decodeURIComponent(part.trim())))
      .filter((pair): pair is [string, string] => pair.length === 2 && pair[0] !== "")
  )

const otelConfig = Config.all({
  endpoint: Config.option(Config.nonEmptyString("OTEL_EXPORTER_OTLP_ENDPOINT")),
  disabled: Config.boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("etd-service")),
  attributes: Config.string("OTEL_RESOURCE_ATTRIBUTES").pipe(Config.map(keyValues), Config.withDefault({})),
  headers: Config.redacted("OTEL_EXPORTER_OTLP_HEADERS").pipe(Config.option)
})

export const TracingLive = Layer.unwrapEffect(
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
