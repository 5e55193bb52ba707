/**
 * The webhooks contract (SPEC §9): endpoints per tenant and environment, their deliveries with
 * every attempt, replay and recovery. An API key reaches its own environment's; a member's session
 * both (SPEC §5: every member reads, `owner` and `admin` also write).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { KeyOrSessionAuth } from "../domain/Authentication.js"
import { Conflict, InvalidState, NotFound } from "../domain/Errors.js"
import { EventType } from "../domain/Events.js"
import { IdOf, TenantIdParam } from "../domain/Ids.js"
import { endingBeforeDescription, oneCursor, Page, PageLimit } from "../domain/Pagination.js"
import { Environment, managerRoles, memberRoles, RequiredRoles, RequiredScope } from "../domain/Principal.js"
import { DateTime, Timestamp } from "../domain/Time.js"
import {
  DeliveryStatus,
  DisabledReason,
  EventFilter,
  EventFilters,
  HEALTH_WINDOW,
  HealthStatus
} from "../domain/Webhook.js"

export const MAX_ENDPOINTS = 20

const Url = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)).annotate({
  description:
    "Where deliveries are POSTed. `https` in production; private, loopback and other non-public addresses are refused.",
  examples: ["https://example.com/webhooks/nfse"]
})

const Description = Schema.String.check(Schema.isMaxLength(500))

export const EndpointHealth = Schema.Struct({
  status: HealthStatus,
  last_success_at: Schema.NullOr(DateTime).annotate({
    description: `When the latest of the last ${HEALTH_WINDOW} deliveries sent that succeeded was answered.`
  }),
  last_failure_at: Schema.NullOr(DateTime).annotate({
    description: `When the latest of the last ${HEALTH_WINDOW} deliveries sent whose latest attempt did not ` +
      `succeed (failed, or waiting for a retry) was tried.`
  }),
  consecutive_failures: Schema.Number.annotate({
    description: `How many of the latest deliveries sent failed (their latest attempt) since the latest success, ` +
      `counted up to ${HEALTH_WINDOW}.`
  })
}).annotate({
  identifier: "WebhookEndpointHealth",
  description: `Whether the endpoint receives its deliveries, from its latest ${HEALTH_WINDOW} deliveries sent, ` +
    "each by its latest attempt."
})

export class WebhookEndpoint extends Schema.Class<WebhookEndpoint>("WebhookEndpoint")({
  id: Schema.String.annotate({ examples: ["whe_01m8e314reqq8n7ywyftgbkv47"] }),
  object: Schema.tag("webhook_endpoint"),
  environment: Environment,
  url: Schema.String,
  description: Schema.NullOr(Schema.String),
  events: Schema.Array(EventFilter),
  enabled: Schema.Boolean,
  disabled_reason: Schema.NullOr(DisabledReason),
  health: EndpointHealth,
  previous_secret_expires_at: Schema.NullOr(DateTime).annotate({
    description:
      "During a secret rotation: until when the previous secret still signs deliveries, alongside the new one."
  }),
  created_at: DateTime,
  updated_at: DateTime
}, { description: "A URL of the tenant's that receives signed events (Standard Webhooks) of its environment." }) {}

export class WebhookEndpointWithSecret
  extends WebhookEndpoint.extend<WebhookEndpointWithSecret>("WebhookEndpointWithSecret")({
    secret: Schema.String.annotate({
      description:
        "The signing secret (`whsec_…`), shown only in this response. Verify deliveries with any Standard Webhooks library."
    })
  }, {
    description: "A webhook endpoint with its signing secret, shown only when created or when the secret is rotated."
  })
{}

export const NewWebhookEndpoint = Schema.Struct({
  url: Url,
  events: EventFilters,
  description: Schema.optionalKey(Description),
  environment: Schema.optionalKey(Environment.annotate({
    description: "Which environment's events the endpoint receives. Required from a member's session; an API key " +
      "may omit it (its own environment) or name its own environment, not the other one."
  }))
}).annotate({
  identifier: "NewWebhookEndpoint",
  description: "A webhook endpoint to create: its HTTPS URL and the events it receives."
})
export type NewWebhookEndpoint = typeof NewWebhookEndpoint.Type

export const UpdateWebhookEndpoint = Schema.Struct({
  url: Schema.optionalKey(Url),
  events: Schema.optionalKey(EventFilters),
  description: Schema.optionalKey(Schema.NullOr(Description)),
  enabled: Schema.optionalKey(Schema.Boolean.annotate({
    description:
      "`false` stops deliveries (new events are not queued for it); `true` re-enables an endpoint disabled for any reason."
  }))
}).annotate({
  identifier: "UpdateWebhookEndpoint",
  description: "Changes to a webhook endpoint: each field given replaces the stored one."
})
export type UpdateWebhookEndpoint = typeof UpdateWebhookEndpoint.Type

export class WebhookDelivery extends Schema.Class<WebhookDelivery>("WebhookDelivery")({
  id: Schema.String.annotate({ examples: ["dlv_01m8e314reqq8n7ywyftgbkv47"] }),
  object: Schema.tag("webhook_delivery"),
  environment: Environment,
  endpoint_id: Schema.String,
  event_id: Schema.String.annotate({ description: "Also the `webhook-id` header of every attempt." }),
  event_type: EventType,
  status: DeliveryStatus,
  attempt_count: Schema.Int.annotate({ examples: [1] }),
  next_attempt_at: Schema.NullOr(DateTime),
  last_attempt_at: Schema.NullOr(DateTime),
  last_status_code: Schema.NullOr(Schema.Int.annotate({ examples: [200] })),
  last_error: Schema.NullOr(Schema.String),
  created_at: DateTime,
  updated_at: DateTime
}, { description: "One event sent to one webhook endpoint: its state and the last attempt's outcome." }) {}

export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int.annotate({ examples: [1] }),
  started_at: DateTime,
  status_code: Schema.NullOr(Schema.Int.annotate({ examples: [200] })),
  latency_ms: Schema.Int.annotate({ examples: [184] }),
  response_body: Schema.NullOr(Schema.String).annotate({ description: "The first 1 KiB of the response body." }),
  error: Schema.NullOr(Schema.String).annotate({
    description: "Why no HTTP answer was had (timeout, refused address, connection error)."
  })
}).annotate({
  identifier: "WebhookDeliveryAttempt",
  description: "One attempt of a delivery: when, the endpoint's status code, latency and the start of its answer."
})

/** The body every attempt of a delivery sends: the event. */
const DeliveryPayload = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  created_at: Schema.String,
  environment: Environment,
  tenant_id: Schema.String,
  data: Schema.Unknown.annotate({ description: "`{object}`: what the event is about, as it was then." })
}).annotate({
  identifier: "WebhookDeliveryPayload",
  description: "The body of a delivery's requests: the event, as the endpoint receives it."
})

export class WebhookDeliveryDetail extends WebhookDelivery.extend<WebhookDeliveryDetail>("WebhookDeliveryDetail")({
  attempts: Schema.Array(DeliveryAttempt),
  payload: Schema.NullOr(DeliveryPayload).annotate({
    description: "The body every attempt sends, as JSON: the event (null if the event is not found)."
  }),
  document_id: Schema.NullOr(Schema.String).annotate({
    description: "The document a `document.*` event is about (its `data.object.id`); null for other events."
  })
}, { description: "A webhook delivery with every attempt made, the body they send and the document it is about." }) {}

export const ListEndpointsParams = Schema.Struct({
  environment: Schema.optionalKey(Environment.annotate({
    description: "Only this environment's endpoints. A member's session sees both environments without it; for an " +
      "API key it narrows the key's own environment, so the other one gives an empty page."
  })),
  limit: Schema.optionalKey(PageLimit),
  starting_after: Schema.optionalKey(IdOf("webhookEndpoint")),
  ending_before: Schema.optionalKey(IdOf("webhookEndpoint").annotate({ description: endingBeforeDescription }))
}).check(oneCursor)
export type ListEndpointsParams = typeof ListEndpointsParams.Type

export const ListDeliveriesParams = Schema.Struct({
  limit: Schema.optionalKey(PageLimit),
  starting_after: Schema.optionalKey(IdOf("delivery")),
  ending_before: Schema.optionalKey(IdOf("delivery").annotate({ description: endingBeforeDescription })),
  status: Schema.optionalKey(DeliveryStatus),
  event_type: Schema.optionalKey(EventType)
}).check(oneCursor)
export type ListDeliveriesParams = typeof ListDeliveriesParams.Type

export const RecoverDeliveries = Schema.Struct({
  since: Timestamp.annotate({ description: "Failed deliveries created at or after this time are sent again." })
}).annotate({ identifier: "RecoverDeliveries", description: "Which failed deliveries to queue again." })

export const Recovery = Schema.Struct({
  object: Schema.Literal("webhook_recovery"),
  endpoint_id: Schema.String,
  since: DateTime,
  recovered: Schema.Int.annotate({ description: "How many failed deliveries were queued again." })
}).annotate({ identifier: "WebhookRecovery", description: "How many failed deliveries were queued again." })

export const DeletedEndpoint = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("webhook_endpoint"),
  deleted: Schema.Literal(true)
}).annotate({ identifier: "DeletedWebhookEndpoint", description: "The webhook endpoint was deleted." })

const endpointParams = { tenantId: TenantIdParam, endpointId: IdOf("webhookEndpoint") }
const deliveryParams = { tenantId: TenantIdParam, deliveryId: IdOf("delivery") }

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("createEndpoint", "/tenants/:tenantId/webhook-endpoints", {
      params: { tenantId: TenantIdParam },
      payload: NewWebhookEndpoint,
      success: WebhookEndpointWithSecret.pipe(HttpApiSchema.status(201)),
      error: Conflict
    })
      .annotate(OpenApi.Summary, "Create a webhook endpoint")
      .annotate(RequiredScope, "webhooks:write")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        `Registers an endpoint for one environment (the key's, or \`environment\`, which a member's session must give) and answers with its signing secret, shown only once. At most ${MAX_ENDPOINTS} endpoints per tenant and environment (\`409 conflict\` beyond).`
      )
  )
  .add(
    HttpApiEndpoint.get("listEndpoints", "/tenants/:tenantId/webhook-endpoints", {
      params: { tenantId: TenantIdParam },
      query: ListEndpointsParams,
      success: Page(WebhookEndpoint)
    })
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(
        OpenApi.Description,
        "The tenant's webhook endpoints, newest first: the key's environment's, or both environments' for a member's session, narrowed by `environment`. The signing secret is never listed."
      )
      .annotate(RequiredScope, "webhooks:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.get("getEndpoint", "/tenants/:tenantId/webhook-endpoints/:endpointId", {
      params: endpointParams,
      success: WebhookEndpoint,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Get a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "One webhook endpoint, without its signing secret: of the key's environment, or of either for a member's session."
      )
      .annotate(RequiredScope, "webhooks:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.patch("updateEndpoint", "/tenants/:tenantId/webhook-endpoints/:endpointId", {
      params: endpointParams,
      payload: UpdateWebhookEndpoint,
      success: WebhookEndpoint,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Update a webhook endpoint")
      .annotate(RequiredScope, "webhooks:write")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Changes the URL, the event filter, the description, or enables / disables the endpoint."
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteEndpoint", "/tenants/:tenantId/webhook-endpoints/:endpointId", {
      params: endpointParams,
      success: DeletedEndpoint,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Delete a webhook endpoint")
      .annotate(RequiredScope, "webhooks:write")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Removes the endpoint; its pending deliveries are not sent. Its delivery history stays readable by id."
      )
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/tenants/:tenantId/webhook-endpoints/:endpointId/rotate-secret", {
      params: endpointParams,
      success: WebhookEndpointWithSecret,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Rotate a webhook endpoint's secret")
      .annotate(RequiredScope, "webhooks:write")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Issues a new signing secret, shown only once. For 24 hours every delivery carries two signatures (new and previous secret), so receivers can switch without missing one."
      )
  )
  .add(
    HttpApiEndpoint.get("listDeliveries", "/tenants/:tenantId/webhook-endpoints/:endpointId/deliveries", {
      params: endpointParams,
      query: ListDeliveriesParams,
      success: Page(WebhookDelivery),
      error: NotFound
    })
      .annotate(OpenApi.Summary, "List an endpoint's deliveries")
      .annotate(
        OpenApi.Description,
        "The endpoint's deliveries, newest first, filtered by `status` and `event_type`. `GET /v1/tenants/{tenantId}/deliveries/{deliveryId}` shows one with its attempts."
      )
      .annotate(RequiredScope, "webhooks:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.post("recoverDeliveries", "/tenants/:tenantId/webhook-endpoints/:endpointId/recover", {
      params: endpointParams,
      payload: RecoverDeliveries,
      success: Recovery.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidState]
    })
      .annotate(OpenApi.Summary, "Resend failed deliveries")
      .annotate(RequiredScope, "webhooks:write")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Queues again, for immediate delivery with a fresh retry schedule, every failed delivery of the endpoint created since `since`. The endpoint must be enabled."
      )
  )
  .add(
    HttpApiEndpoint.get("getDelivery", "/tenants/:tenantId/deliveries/:deliveryId", {
      params: deliveryParams,
      success: WebhookDeliveryDetail,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Get a delivery")
      .annotate(RequiredScope, "webhooks:read")
      .annotate(RequiredRoles, memberRoles)
      .annotate(
        OpenApi.Description,
        "One delivery with every attempt: status code, latency, the first 1 KiB of the response, or the error."
      )
  )
  .add(
    HttpApiEndpoint.post("replayDelivery", "/tenants/:tenantId/deliveries/:deliveryId/replay", {
      params: deliveryParams,
      success: WebhookDeliveryDetail.pipe(HttpApiSchema.status(202)),
      error: [NotFound, InvalidState]
    })
      .annotate(OpenApi.Summary, "Replay a delivery")
      .annotate(RequiredScope, "webhooks:write")
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Sends the delivery again now (same `webhook-id`, fresh timestamp and signature), whatever its status, with a fresh retry schedule. The endpoint must be enabled."
      )
  )
  .middleware(KeyOrSessionAuth)
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Endpoints that receive the tenant's events (signed with Standard Webhooks), their deliveries with every attempt, replays and recovery. Per environment: an API key sees and manages its own environment's; a member's session sees both, and an `owner` or `admin` manages them (`403 forbidden` for a `developer`)."
  )
{}
