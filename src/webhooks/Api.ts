/**
 * The webhooks contract (SPEC §9): endpoints per tenant and environment (the key's environment),
 * their deliveries with every attempt, replay and recovery.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, InvalidState, NotFound } from "../domain/Errors.js"
import { IdOf } from "../domain/Ids.js"
import { Timestamp } from "../domain/Time.js"
import { Page, PageLimit } from "../domain/Pagination.js"
import { Environment, RequiredScope } from "../domain/Principal.js"
import { ApiKeyAuth } from "../keys/Authentication.js"
import { EventType } from "./Events.js"

export const MAX_ENDPOINTS = 20

export const EventFilter = Schema.Union(EventType, Schema.Literal("*"))

export const EventFilters = Schema.Array(EventFilter).pipe(
  Schema.minItems(1, { message: () => "events must name at least one event type, or be [\"*\"]" }),
  Schema.maxItems(16),
  Schema.filter((events) => !events.includes("*") || events.length === 1, {
    message: () => "\"*\" (every event) cannot be combined with other event types"
  })
).annotations({
  description: "The event types sent to this endpoint, or `[\"*\"]` for every type (including ones added later)."
})

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)).annotations({
  description: "Where deliveries are POSTed. `https` in production; private, loopback and other non-public addresses are refused.",
  examples: ["https://example.com/webhooks/nfse"]
})

const Description = Schema.String.pipe(Schema.maxLength(500))

export const DisabledReason = Schema.Literal("manual", "gone", "failing").annotations({
  description: "`manual`: disabled through the API; `gone`: the endpoint answered 410; `failing`: every delivery failed for 5 days."
})

export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")({
  id: Schema.String,
  object: Schema.tag("webhook_endpoint"),
  environment: Environment,
  url: Schema.String,
  description: Schema.NullOr(Schema.String),
  events: Schema.Array(EventFilter),
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(DisabledReason),
  previous_secret_expires_at: Schema.NullOr(Schema.Date).annotations({
    description: "During a secret rotation: until when the previous secret still signs deliveries, alongside the new one."
  }),
  created_at: Schema.Date,
  updated_at: Schema.Date
}) {}

export class WebhookEndpointWithSecret extends WebhookEndpoint.extend<WebhookEndpointWithSecret>("WebhookEndpointWithSecret")({
  secret: Schema.String.annotations({
    description: "The signing secret (`whsec_…`), shown only in this response. Verify deliveries with any Standard Webhooks library."
  })
}) {}

export const NewWebhookEndpoint = Schema.Struct({
  url: Url,
  events: EventFilters,
  description: Schema.optional(Description)
}).annotations({ identifier: "NewWebhookEndpoint", parseOptions: { errors: "all" } })
export type NewWebhookEndpoint = typeof NewWebhookEndpoint.Type

export const UpdateWebhookEndpoint = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(EventFilters),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean.annotations({
    description: "`false` stops deliveries (new events are not queued for it); `true` re-enables an endpoint disabled for any reason."
  }))
}).annotations({ identifier: "UpdateWebhookEndpoint", parseOptions: { errors: "all" } })
export type UpdateWebhookEndpoint = typeof UpdateWebhookEndpoint.Type

export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed").annotations({
  description: "`pending`: waiting for its next attempt; `succeeded`: a 2xx answer; `failed`: retries exhausted or the endpoint was disabled."
})
export type DeliveryStatus = typeof DeliveryStatus.Type

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: Schema.String,
  object: Schema.tag("webhook_delivery"),
  environment: Environment,
  endpoint_id: Schema.String,
  event_id: Schema.String.annotations({ description: "Also the `webhook-id` header of every attempt." }),
  event_type: EventType,
  status: DeliveryStatus,
  attempt_count: Schema.Int,
  next_attempt_at: Schema.NullOr(Schema.Date),
  last_attempt_at: Schema.NullOr(Schema.Date),
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date
}) {}

export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int,
  started_at: Schema.Date,
  status_code: Schema.NullOr(Schema.Int),
  latency_ms: Schema.Int,
  response_body: Schema.NullOr(Schema.String).annotations({ description: "The first 1 KiB of the response body." }),
  error: Schema.NullOr(Schema.String).annotations({ description: "Why no HTTP answer was had (timeout, refused address, connection error)." })
}).annotations({ identifier: "WebhookDeliveryAttempt" })

export class WebhookDeliveryDetail extends WebhookDelivery.extend<WebhookDeliveryDetail>("WebhookDeliveryDetail")({
  attempts: Schema.Array(DeliveryAttempt)
}) {}


export const ListEndpointsParams = Schema.Struct({
  limit: Schema.optional(PageLimit),
  starting_after: Schema.optional(IdOf("webhookEndpoint"))
}).annotations({ parseOptions: { errors: "all" } })
export type ListEndpointsParams = typeof ListEndpointsParams.Type

export const ListDeliveriesParams = Schema.Struct({
  limit: Schema.optional(PageLimit),
  starting_after: Schema.optional(IdOf("delivery")),
  status: Schema.optional(DeliveryStatus),
  event_type: Schema.optional(EventType)
}).annotations({ parseOptions: { errors: "all" } })
export type ListDeliveriesParams = typeof ListDeliveriesParams.Type

export const RecoverDeliveries = Schema.Struct({
  since: Timestamp.annotations({ description: "Failed deliveries created at or after this time are sent again." })
}).annotations({ identifier: "RecoverDeliveries" })

export const Recovery = Schema.Struct({
  object: Schema.Literal("webhook_recovery"),
  endpoint_id: Schema.String,
  since: Schema.Date,
  recovered: Schema.Int.annotations({ description: "How many failed deliveries were queued again." })
}).annotations({ identifier: "WebhookRecovery" })

export const DeletedEndpoint = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("webhook_endpoint"),
  deleted: Schema.Literal(true)
}).annotations({ identifier: "DeletedWebhookEndpoint" })

const tenantPath = HttpApiSchema.param("tenantId", IdOf("tenant"))
const endpointPath = HttpApiSchema.param("endpointId", IdOf("webhookEndpoint"))
const deliveryPath = HttpApiSchema.param("deliveryId", IdOf("delivery"))

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("createEndpoint")`/v1/tenants/${tenantPath}/webhook-endpoints`
      .setPayload(NewWebhookEndpoint)
      .addSuccess(WebhookEndpointWithSecret, { status: 201 })
      .addError(Conflict)
      .annotate(RequiredScope, "webhooks:write")
      .annotate(
        OpenApi.Description,
        `Registers an endpoint for the key's environment and answers with its signing secret, shown only once. At most ${MAX_ENDPOINTS} endpoints per tenant and environment (\`409 conflict\` beyond).`
      )
  )
  .add(
    HttpApiEndpoint.get("listEndpoints")`/v1/tenants/${tenantPath}/webhook-endpoints`
      .setUrlParams(ListEndpointsParams)
      .addSuccess(Page(WebhookEndpoint))
      .annotate(RequiredScope, "webhooks:read")
  )
  .add(
    HttpApiEndpoint.get("getEndpoint")`/v1/tenants/${tenantPath}/webhook-endpoints/${endpointPath}`
      .addSuccess(WebhookEndpoint)
      .addError(NotFound)
      .annotate(RequiredScope, "webhooks:read")
  )
  .add(
    HttpApiEndpoint.patch("updateEndpoint")`/v1/tenants/${tenantPath}/webhook-endpoints/${endpointPath}`
      .setPayload(UpdateWebhookEndpoint)
      .addSuccess(WebhookEndpoint)
      .addError(NotFound)
      .annotate(RequiredScope, "webhooks:write")
      .annotate(OpenApi.Description, "Changes the URL, the event filter, the description, or enables / disables the endpoint.")
  )
  .add(
    HttpApiEndpoint.del("deleteEndpoint")`/v1/tenants/${tenantPath}/webhook-endpoints/${endpointPath}`
      .addSuccess(DeletedEndpoint)
      .addError(NotFound)
      .annotate(RequiredScope, "webhooks:write")
      .annotate(OpenApi.Description, "Removes the endpoint; its pending deliveries are not sent. Its delivery history stays readable by id.")
  )
  .add(
    HttpApiEndpoint.post("rotateSecret")`/v1/tenants/${tenantPath}/webhook-endpoints/${endpointPath}/rotate-secret`
      .addSuccess(WebhookEndpointWithSecret)
      .addError(NotFound)
      .annotate(RequiredScope, "webhooks:write")
      .annotate(
        OpenApi.Description,
        "Issues a new signing secret, shown only once. For 24 hours every delivery carries two signatures (new and previous secret), so receivers can switch without missing one."
      )
  )
  .add(
    HttpApiEndpoint.get("listDeliveries")`/v1/tenants/${tenantPath}/webhook-endpoints/${endpointPath}/deliveries`
      .setUrlParams(ListDeliveriesParams)
      .addSuccess(Page(WebhookDelivery))
      .addError(NotFound)
      .annotate(RequiredScope, "webhooks:read")
  )
  .add(
    HttpApiEndpoint.post("recoverDeliveries")`/v1/tenants/${tenantPath}/webhook-endpoints/${endpointPath}/recover`
      .setPayload(RecoverDeliveries)
      .addSuccess(Recovery, { status: 202 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(RequiredScope, "webhooks:write")
      .annotate(
        OpenApi.Description,
        "Queues again, for immediate delivery with a fresh retry schedule, every failed delivery of the endpoint created since `since`. The endpoint must be enabled."
      )
  )
  .add(
    HttpApiEndpoint.get("getDelivery")`/v1/tenants/${tenantPath}/deliveries/${deliveryPath}`
      .addSuccess(WebhookDeliveryDetail)
      .addError(NotFound)
      .annotate(RequiredScope, "webhooks:read")
      .annotate(OpenApi.Description, "One delivery with every attempt: status code, latency, the first 1 KiB of the response, or the error.")
  )
  .add(
    HttpApiEndpoint.post("replayDelivery")`/v1/tenants/${tenantPath}/deliveries/${deliveryPath}/replay`
      .addSuccess(WebhookDeliveryDetail, { status: 202 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(RequiredScope, "webhooks:write")
      .annotate(
        OpenApi.Description,
        "Sends the delivery again now (same `webhook-id`, fresh timestamp and signature), whatever its status, with a fresh retry schedule. The endpoint must be enabled."
      )
  )
  .middleware(ApiKeyAuth)
  .annotate(OpenApi.Title, "Webhooks")
{}
