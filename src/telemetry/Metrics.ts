/**
 * Every metric of the service (SPEC §13), named by the OpenTelemetry semantic conventions where one
 * exists (`http.server.request.duration`) and under `etd.` where none does. Exported over OTLP
 * under these names, and as Prometheus text at `GET /metrics` under the names OpenTelemetry's
 * Prometheus exporters give them (dots as `_`, the unit as a suffix, `_total` on counters), so a
 * dashboard reads the same series whichever way they travel. `observability/metrics.md` documents
 * each one for SREs.
 */
import { Metric } from "effect"

/** Seconds, for latencies: 5 ms to 10 s, as the semantic conventions advise for HTTP durations. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
/** Seconds, for calls to the tax authority, which can take tens of seconds. */
const AUTHORITY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60]

/** Prometheus suffixes of the units that have one (a `{thing}` count has none). */
const PROMETHEUS_UNITS: Record<string, string> = { s: "_seconds", By: "_bytes", "1": "_ratio" }

const names = new Map<string, string>()

/**
 * Each metric is declared once, with its unit: Effect's exporters read the unit from the `unit`
 * attribute (the Prometheus text leaves it out of the labels; OTLP also sends it as a data-point
 * attribute, which observability/otel-collector.yaml drops), and the Prometheus name is derived here.
 */
const declare = (name: string, unit: string, counter: boolean) => {
  names.set(name, name.replace(/\./g, "_") + (PROMETHEUS_UNITS[unit] ?? "") + (counter ? "_total" : ""))
  return { unit }
}
const counter = (name: string, unit: string, description: string) =>
  Metric.counter(name, { description, incremental: true, attributes: declare(name, unit, true) })
const gauge = (name: string, unit: string, description: string) =>
  Metric.gauge(name, { description, attributes: declare(name, unit, false) })
const histogram = (name: string, unit: string, description: string, boundaries: ReadonlyArray<number>) =>
  Metric.histogram(name, { description, boundaries, attributes: declare(name, unit, false) })

export const httpServerDuration = histogram(
  "http.server.request.duration",
  "s",
  "Duration of HTTP server requests, by method, route template and status",
  LATENCY_BUCKETS
)
export const documents = counter(
  "etd.documents",
  "{document}",
  "Documents reaching a status (queued, contingency, authorized, rejected, failed, cancelled), by environment"
)
export const queueDepth = gauge(
  "etd.queue.depth",
  "{job}",
  "Jobs waiting or in progress, by queue (issuance, webhooks)"
)
export const queueOldestAge = gauge(
  "etd.queue.oldest_age",
  "s",
  "Age of the oldest job that is due and not done, by queue (0 when none is)"
)
export const authorityDuration = histogram(
  "etd.authority.request.duration",
  "s",
  "Duration of calls to the tax authority, by system and operation",
  AUTHORITY_BUCKETS
)
export const authorityRequests = counter(
  "etd.authority.requests",
  "{request}",
  "Calls to the tax authority by system, operation and outcome (ok, or the error)"
)
export const webhookDeliveries = counter(
  "etd.webhook.deliveries",
  "{attempt}",
  "Webhook delivery attempts by outcome (succeeded, retrying, failed, disabled)"
)
export const mailMessages = counter(
  "etd.mail.messages",
  "{attempt}",
  "Mail sending attempts by outcome (sent, retrying, failed, withheld)"
)
export const webhookDuration = histogram(
  "etd.webhook.delivery.duration",
  "s",
  "Time from the start of a webhook attempt to its answer or error",
  LATENCY_BUCKETS
)
export const quotaUsage = gauge(
  "etd.quota.usage",
  "1",
  "Live documents this month as a share of the tenant's monthly quota"
)
export const quotaExceeded = counter(
  "etd.quota.exceeded",
  "{request}",
  "Live documents refused because the tenant's monthly quota was used up"
)
export const exposureAlerts = counter(
  "etd.api_key.exposures",
  "{alert}",
  "Exposure alerts raised for API keys and sessions, by where the token was seen"
)
export const exposureCandidates = counter(
  "etd.exposure.candidates",
  "{token}",
  "Token-shaped strings the guards saw, by source and outcome"
)
export const authorizerInOperation = gauge(
  "etd.authority.authorizer.in_operation",
  "{authorizer}",
  "1 when a state's authorizer answered its status service in operation (107) at the last check, else 0; by " +
    "environment, state and document type"
)
export const credentialTimeToExpiry = gauge(
  "etd.credential.time_to_expiry",
  "s",
  "Seconds until each tenant's certificate expires (negative once expired)"
)
export const rateLimitFallbacks = counter(
  "etd.rate_limit.fallbacks",
  "{request}",
  "Requests limited by this instance alone because Redis was unreachable"
)
export const processMemory = gauge("process.memory.usage", "By", "Resident set size of the process")

/** The Prometheus name of each metric: `http.server.request.duration` → `http_server_request_duration_seconds`. */
export const prometheusNames: ReadonlyMap<string, string> = names

export const prometheusName = (id: string) => names.get(id) ?? id
