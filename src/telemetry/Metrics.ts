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

// The `unit` attribute is where Effect's exporters read a metric's unit from (both leave it out of the labels).
export const httpServerDuration = Metric.histogram("http.server.request.duration", {
  description: "Duration of HTTP server requests, by method, route template and status",
  boundaries: LATENCY_BUCKETS,
  attributes: { unit: "s" }
})

export const documents = Metric.counter("etd.documents", {
  description: "Documents reaching a status (queued, authorized, rejected, failed, cancelled), by environment",
  incremental: true,
  attributes: { unit: "{document}" }
})

export const queueDepth = Metric.gauge("etd.queue.depth", {
  description: "Jobs waiting or in progress, by queue (issuance, webhooks)",
  attributes: { unit: "{job}" }
})

export const queueOldestAge = Metric.gauge("etd.queue.oldest_age", {
  description: "Age of the oldest job that is due and not done, by queue (0 when none is)",
  attributes: { unit: "s" }
})

export const authorityDuration = Metric.histogram("etd.authority.request.duration", {
  description: "Duration of calls to the tax authority, by system and operation",
  boundaries: AUTHORITY_BUCKETS,
  attributes: { unit: "s" }
})

export const authorityRequests = Metric.counter("etd.authority.requests", {
  description: "Calls to the tax authority by system, operation and outcome (ok, or the error)",
  incremental: true,
  attributes: { unit: "{request}" }
})

export const webhookDeliveries = Metric.counter("etd.webhook.deliveries", {
  description: "Webhook delivery attempts by outcome (succeeded, retrying, failed, disabled)",
  incremental: true,
  attributes: { unit: "{attempt}" }
})

export const webhookDuration = Metric.histogram("etd.webhook.delivery.duration", {
  description: "Time from the start of a webhook attempt to its answer or error",
  boundaries: LATENCY_BUCKETS,
  attributes: { unit: "s" }
})

export const quotaUsage = Metric.gauge("etd.quota.usage", {
  description: "Live documents this month as a share of the tenant's monthly quota",
  attributes: { unit: "1" }
})

export const quotaExceeded = Metric.counter("etd.quota.exceeded", {
  description: "Live documents refused because the tenant's monthly quota was used up",
  incremental: true,
  attributes: { unit: "{request}" }
})

export const exposureAlerts = Metric.counter("etd.api_key.exposures", {
  description: "Exposure alerts raised for API keys and sessions, by where the token was seen",
  incremental: true,
  attributes: { unit: "{alert}" }
})

export const exposureCandidates = Metric.counter("etd.exposure.candidates", {
  description: "Token-shaped strings the guards saw, by source and outcome",
  incremental: true,
  attributes: { unit: "{token}" }
})

export const credentialTimeToExpiry = Metric.gauge("etd.credential.time_to_expiry", {
  description: "Seconds until each active certificate expires (negative once expired)",
  attributes: { unit: "s" }
})

export const rateLimitFallbacks = Metric.counter("etd.rate_limit.fallbacks", {
  description: "Requests limited by this instance alone because Redis was unreachable",
  incremental: true,
  attributes: { unit: "{request}" }
})

export const processMemory = Metric.gauge("process.memory.usage", {
  description: "Resident set size of the process",
  attributes: { unit: "By" }
})

const PROMETHEUS_UNITS: Record<string, string> = { s: "_seconds", By: "_bytes", "1": "_ratio" }

const catalogue = [
  { metric: httpServerDuration, unit: "s", counter: false },
  { metric: documents, unit: "{document}", counter: true },
  { metric: queueDepth, unit: "{job}", counter: false },
  { metric: queueOldestAge, unit: "s", counter: false },
  { metric: authorityDuration, unit: "s", counter: false },
  { metric: authorityRequests, unit: "{request}", counter: true },
  { metric: webhookDeliveries, unit: "{attempt}", counter: true },
  { metric: webhookDuration, unit: "s", counter: false },
  { metric: quotaUsage, unit: "1", counter: false },
  { metric: quotaExceeded, unit: "{request}", counter: true },
  { metric: exposureAlerts, unit: "{alert}", counter: true },
  { metric: exposureCandidates, unit: "{token}", counter: true },
  { metric: credentialTimeToExpiry, unit: "s", counter: false },
  { metric: rateLimitFallbacks, unit: "{request}", counter: true },
  { metric: processMemory, unit: "By", counter: false }
]

/** The Prometheus name of each metric: `http.server.request.duration` → `http_server_request_duration_seconds`. */
export const prometheusNames: ReadonlyMap<string, string> = new Map(
  catalogue.map(({ counter, metric, unit }) => [
    metric.id,
    metric.id.replace(/\./g, "_") + (PROMETHEUS_UNITS[unit] ?? "") + (counter ? "_total" : "")
  ])
)

export const prometheusName = (id: string) => prometheusNames.get(id) ?? id
