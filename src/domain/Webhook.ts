/**
 * Webhook endpoints and deliveries (SPEC §9): the parts the webhooks' repository and API share.
 */
import { Schema } from "effect"
import { EventType } from "./Events.js"

export const EventFilter = Schema.Union([EventType, Schema.Literal("*")])

export const EventFilters = Schema.Array(EventFilter).check(
  Schema.isMinLength(1, { message: "events must name at least one event type, or be [\"*\"]" }),
  Schema.isMaxLength(16),
  Schema.makeFilter((events) =>
    !events.includes("*") || events.length === 1
      ? undefined
      : "\"*\" (every event) cannot be combined with other event types"
  )
).annotate({
  description: "The event types sent to this endpoint, or `[\"*\"]` for every type (including ones added later)."
})

export const DisabledReason = Schema.Literals(["manual", "gone", "failing"]).annotate({
  description:
    "`manual`: disabled through the API; `gone`: the endpoint answered 410; `failing`: every delivery failed for 5 days."
})

export const DeliveryStatus = Schema.Literals(["pending", "succeeded", "failed"]).annotate({
  description:
    "`pending`: waiting for its next attempt; `succeeded`: a 2xx answer; `failed`: retries exhausted or the endpoint was disabled."
})
export type DeliveryStatus = typeof DeliveryStatus.Type

/** How many of an endpoint's latest deliveries sent decide its health (docs/webhooks.md). */
export const HEALTH_WINDOW = 20
/** An endpoint is failing when none of its latest this-many deliveries sent (all, when fewer) succeeded. */
export const FAILING_AFTER = 3

export const HealthStatus = Schema.Literals(["healthy", "failing", "unknown"]).annotate({
  description: `\`unknown\`: no delivery sent yet; \`failing\`: none of the latest ${FAILING_AFTER} deliveries sent ` +
    `(or none at all, when fewer were sent) succeeded; \`healthy\`: otherwise.`
})
export type HealthStatus = typeof HealthStatus.Type
