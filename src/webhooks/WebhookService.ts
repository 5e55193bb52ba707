/**
 * Webhook endpoints and their deliveries (SPEC §9), for one tenant at a time: in the API key's
 * environment, or in either for a member's session (SPEC §5). Sending is the WebhookDispatcher's;
 * this service only queues.
 */
import { Array as Arr, Context, Duration, Effect, Layer, Option, Result } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { Conflict, invalidField, InvalidState, NotFound } from "../domain/Errors.js"
import type { RecordedEvent } from "../domain/Events.js"
import { type DeliveryId, makeId, type WebhookEndpointId } from "../domain/Ids.js"
import { cursorOf, pageSize, toPage } from "../domain/Pagination.js"
import { listedEnvironments } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { TenantService } from "../tenants/TenantService.js"
import {
  type ListDeliveriesParams,
  type ListEndpointsParams,
  MAX_ENDPOINTS,
  type NewWebhookEndpoint,
  type UpdateWebhookEndpoint,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WebhookEndpointWithSecret
} from "./Api.js"
import { DeliveryQueue, endWaitingDeliveries } from "./DeliveryQueue.js"
import { generateWebhookSecret } from "./Signing.js"
import { checkUrl } from "./SsrfGuard.js"
import { webhookPayload } from "./WebhookDispatcher.js"
import {
  type AttemptRow,
  type DeliveryRow,
  type EndpointRow,
  type HealthRow,
  type Owner,
  unknownHealth,
  WebhookRepo
} from "./WebhookRepo.js"

/** How long the previous secret keeps signing after a rotation. */
export const SECRET_OVERLAP = Duration.hours(24)

const healthFields = (health: HealthRow) => ({
  status: health.healthStatus,
  last_success_at: health.lastSuccessAt,
  last_failure_at: health.lastFailureAt,
  consecutive_failures: health.consecutiveFailures
})

const endpointFields = (row: EndpointRow & HealthRow, at: Date) => ({
  id: row.id,
  environment: row.environment,
  url: row.url,
  description: row.description,
  events: row.events,
  enabled: row.enabled,
  disabled_reason: row.disabledReason,
  health: healthFields(row),
  previous_secret_expires_at: row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > at
    ? row.previousSecretExpiresAt
    : null,
  created_at: row.createdAt,
  updated_at: row.updatedAt
})

export const toEndpoint = (row: EndpointRow & HealthRow, at: Date) => new WebhookEndpoint(endpointFields(row, at))

const withSecret = (row: EndpointRow & HealthRow, at: Date) =>
  new WebhookEndpointWithSecret({ ...endpointFields(row, at), secret: row.secret })

const deliveryFields = (row: DeliveryRow) => ({
  id: row.id,
  environment: row.environment,
  endpoint_id: row.endpointId,
  event_id: row.eventId,
  event_type: row.eventType,
  status: row.status,
  attempt_count: row.attempts,
  next_attempt_at: row.nextAttemptAt,
  last_attempt_at: row.lastAttemptAt,
  last_status_code: row.lastStatusCode,
  last_error: row.lastError,
  created_at: row.createdAt,
  updated_at: row.updatedAt
})

export const toDelivery = (row: DeliveryRow) => new WebhookDelivery(deliveryFields(row))

/** The document a `document.*` event carries (`data.object`), by its id. */
const documentIdOf = (event: RecordedEvent) => {
  const object: unknown = (event.data as { readonly object?: unknown } | null)?.object
  return event.type.startsWith("document.") && typeof object === "object" && object !== null && "id" in object &&
      typeof object.id === "string"
    ? object.id
    : null
}

const toDetail = (row: DeliveryRow, attempts: ReadonlyArray<AttemptRow>, event: RecordedEvent | undefined) =>
  new WebhookDeliveryDetail({
    ...deliveryFields(row),
    payload: event === undefined ? null : webhookPayload(event),
    document_id: event === undefined ? null : documentIdOf(event),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: a.startedAt,
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      response_body: a.responseBody,
      error: a.error
    }))
  })

const endpointNotFound = () => new NotFound({ message: "No such webhook endpoint." })
const deliveryNotFound = () => new NotFound({ message: "No such delivery." })

/** Keeps the filter as given, without repeats, so `["document.authorized", "document.authorized"]` is one entry. */
const normalizeEvents = <A extends string>(events: ReadonlyArray<A>) => [...new Set(events)]

export class WebhookService extends Context.Service<WebhookService>()("etd/WebhookService", {
  make: Effect.gen(function*() {
    const repo = yield* WebhookRepo
    const events = yield* EventLog
    const inTransaction = yield* makeTransaction
    const deliveries = yield* DeliveryQueue
    const tenants = yield* TenantService
    const config = yield* AppConfig
    const urlPolicy = { allowLoopback: config.webhooks.allowPrivateTargets, requireHttps: config.production }

    /** An obviously bad target is refused when it is registered; the dispatcher checks again at connect time. */
    const validUrl = (url: string) =>
      Result.match(checkUrl(url, urlPolicy), {
        onFailure: (unsafe) => Effect.fail(invalidField(["url"], unsafe.message)),
        onSuccess: (parsed) => Effect.succeed(parsed.href)
      })

    const endpointOf = (owner: Owner, id: WebhookEndpointId) =>
      Effect.flatMap(
        repo.findEndpoint(owner, id),
        Option.match({
          onNone: () => Effect.fail(endpointNotFound()),
          onSome: Effect.succeed
        })
      )

    const endPending = endWaitingDeliveries(repo, deliveries)

    /**
     * The environment a new endpoint belongs to: the one the body names, which a member's session
     * must give and a key may give only as its own, or else the key's.
     */
    const environmentOf = (owner: Owner, input: NewWebhookEndpoint) => {
      const invalid = (problem: string) => Effect.fail(invalidField(["environment"], problem))
      if (owner.environment === undefined) {
        return input.environment === undefined
          ? invalid("required from a member's session: live or test")
          : Effect.succeed(input.environment)
      }
      return input.environment === undefined || input.environment === owner.environment
        ? Effect.succeed(owner.environment)
        : invalid(
          `this API key is for the ${owner.environment} environment; it cannot register a ${input.environment} endpoint`
        )
    }

    const create = Effect.fn("WebhookService.createEndpoint")(function*(owner: Owner, input: NewWebhookEndpoint) {
      const environment = yield* environmentOf(owner, input)
      const url = yield* validUrl(input.url)
      return yield* Effect.gen(function*() {
        yield* tenants.lock(owner.tenantId)
        const count = yield* repo.countEndpoints(owner.tenantId, environment)
        if (count >= MAX_ENDPOINTS) {
          return yield* new Conflict({
            message: `At most ${MAX_ENDPOINTS} webhook endpoints per tenant and environment; delete or reuse one.`
          })
        }
        const at = yield* now
        const row: EndpointRow = {
          id: yield* makeId("webhookEndpoint"),
          tenantId: owner.tenantId,
          environment,
          url,
          description: input.description ?? null,
          events: normalizeEvents(input.events),
          enabled: true,
          disabledReason: null,
          secret: generateWebhookSecret(),
          previousSecret: null,
          previousSecretExpiresAt: null,
          failingSince: null,
          deletedAt: null,
          createdAt: at,
          updatedAt: at
        }
        yield* repo.insertEndpoint(row)
        yield* Effect.annotateCurrentSpan({ "webhook_endpoint.id": row.id })
        return withSecret({ ...row, ...unknownHealth }, at)
      }).pipe(inTransaction)
    })

    const list = Effect.fn("WebhookService.listEndpoints")(function*(owner: Owner, params: ListEndpointsParams) {
      const cursor = cursorOf(params)
      const environments = listedEnvironments(owner.environment, params.environment)
      const rows = Arr.isReadonlyArrayNonEmpty(environments)
        ? yield* repo.listEndpoints(owner.tenantId, environments, pageSize(params.limit), cursor)
        : []
      const at = yield* now
      const page = toPage(rows, pageSize(params.limit), cursor)
      return { ...page, data: page.data.map((row) => toEndpoint(row, at)) }
    })

    const get = Effect.fn("WebhookService.getEndpoint")(function*(owner: Owner, id: WebhookEndpointId) {
      const row = yield* repo.findEndpoint(owner, id)
      if (Option.isNone(row)) return yield* endpointNotFound()
      return toEndpoint(row.value, yield* now)
    })

    const update = Effect.fn("WebhookService.updateEndpoint")(
      function*(owner: Owner, id: WebhookEndpointId, input: UpdateWebhookEndpoint) {
        const url = input.url === undefined ? undefined : yield* validUrl(input.url)
        return yield* Effect.gen(function*() {
          const found = yield* repo.findEndpointForUpdate(owner, id)
          if (Option.isNone(found)) return yield* endpointNotFound()
          const row = found.value
          const at = yield* now
          const enabled = input.enabled ?? row.enabled
          const next = {
            url: url ?? row.url,
            events: input.events === undefined ? row.events : normalizeEvents(input.events),
            description: input.description === undefined ? row.description : input.description,
            enabled,
            disabledReason: enabled
              ? null
              : input.enabled === false && row.enabled
              ? "manual" as const
              : row.disabledReason,
            // Re-enabling starts the 5-day failure clock afresh.
            failingSince: enabled && !row.enabled ? null : row.failingSince,
            updatedAt: at
          }
          yield* repo.updateEndpoint(row.id, next)
          if (!enabled && row.enabled) yield* endPending(row.id, "endpoint disabled")
          return toEndpoint({ ...row, ...next, ...(yield* repo.healthOf(row.id)) }, at)
        }).pipe(inTransaction)
      }
    )

    const remove = Effect.fn("WebhookService.deleteEndpoint")(function*(owner: Owner, id: WebhookEndpointId) {
      return yield* Effect.gen(function*() {
        const row = yield* endpointOf(owner, id)
        const at = yield* now
        yield* repo.deleteEndpoint(row.id, at)
        yield* endPending(row.id, "endpoint deleted")
        return { id: row.id, object: "webhook_endpoint" as const, deleted: true as const }
      }).pipe(inTransaction)
    })

    const rotateSecret = Effect.fn("WebhookService.rotateSecret")(function*(owner: Owner, id: WebhookEndpointId) {
      return yield* Effect.gen(function*() {
        const found = yield* repo.findEndpointForUpdate(owner, id)
        if (Option.isNone(found)) return yield* endpointNotFound()
        const row = found.value
        const at = yield* now
        const secret = generateWebhookSecret()
        const expiresAt = new Date(at.getTime() + Duration.toMillis(SECRET_OVERLAP))
        yield* repo.rotateSecret(row.id, secret, row.secret, expiresAt, at)
        return withSecret({
          ...row,
          ...(yield* repo.healthOf(row.id)),
          secret,
          previousSecret: row.secret,
          previousSecretExpiresAt: expiresAt,
          updatedAt: at
        }, at)
      }).pipe(inTransaction)
    })

    const listDeliveries = Effect.fn("WebhookService.listDeliveries")(function*(
      owner: Owner,
      endpointId: WebhookEndpointId,
      params: ListDeliveriesParams
    ) {
      yield* endpointOf(owner, endpointId)
      const cursor = cursorOf(params)
      const rows = yield* repo.listDeliveries(owner, endpointId, {
        limit: pageSize(params.limit),
        cursor,
        status: params.status,
        eventType: params.event_type
      })
      const page = toPage(rows, pageSize(params.limit), cursor)
      return { ...page, data: page.data.map(toDelivery) }
    })

    const getDelivery = Effect.fn("WebhookService.getDelivery")(function*(owner: Owner, id: DeliveryId) {
      const row = yield* repo.findDelivery(owner, id)
      if (Option.isNone(row)) return yield* deliveryNotFound()
      const [event] = yield* events.findMany([row.value.eventId])
      return toDetail(row.value, yield* repo.attemptsOf(id), event)
    })

    const requireEnabled = (endpoint: EndpointRow) =>
      endpoint.enabled
        ? Effect.void
        : Effect.fail(
          new InvalidState({ message: "The webhook endpoint is disabled; enable it first (PATCH enabled: true)." })
        )

    const replay = Effect.fn("WebhookService.replayDelivery")(function*(owner: Owner, id: DeliveryId) {
      yield* Effect.gen(function*() {
        const found = yield* repo.findDelivery(owner, id)
        if (Option.isNone(found)) return yield* deliveryNotFound()
        const endpoint = yield* repo.findEndpointForUpdate(owner, found.value.endpointId)
        if (Option.isNone(endpoint)) {
          return yield* new InvalidState({ message: "The delivery's webhook endpoint was deleted." })
        }
        yield* requireEnabled(endpoint.value)
        // A fresh retry schedule, due now.
        yield* deliveries.requeue([id], { runAttempts: 0 })
        yield* deliveries.wake
      }).pipe(inTransaction)
      return yield* getDelivery(owner, id)
    })

    const recover = Effect.fn("WebhookService.recoverDeliveries")(
      function*(owner: Owner, endpointId: WebhookEndpointId, since: Date) {
        return yield* Effect.gen(function*() {
          const found = yield* repo.findEndpointForUpdate(owner, endpointId)
          if (Option.isNone(found)) return yield* endpointNotFound()
          yield* requireEnabled(found.value)
          const recovered = yield* deliveries.requeue(yield* repo.failedSince(endpointId, since), { runAttempts: 0 })
          if (recovered > 0) yield* deliveries.wake
          return { object: "webhook_recovery" as const, endpoint_id: endpointId, since, recovered }
        }).pipe(inTransaction)
      }
    )

    return { create, list, get, update, remove, rotateSecret, listDeliveries, getDelivery, replay, recover } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([WebhookRepo.layer, DeliveryQueue.layer, TenantService.layer, Transaction.layer])
  )
}
