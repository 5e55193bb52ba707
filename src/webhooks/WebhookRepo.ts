/**
 * SQL for webhook endpoints, deliveries and their attempts. Every read of an endpoint or a
 * delivery through the API is bounded by tenant and environment, so other tenants' and other
 * environments' rows are simply not there (404).
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { repository } from "../db/Repository.js"
import type { Environment } from "../domain/Principal.js"
import type { DeliveryStatus } from "./Api.js"
import type { EventType } from "../domain/Events.js"

export interface EndpointRow {
  readonly id: string
  readonly tenantId: string
  readonly environment: Environment
  readonly url: string
  readonly description: string | null
  readonly events: ReadonlyArray<string>
  readonly enabled: boolean
  readonly disabledReason: "manual" | "gone" | "failing" | null
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: Date | null
  readonly failingSince: Date | null
  readonly deletedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface DeliveryRow {
  readonly id: string
  readonly eventId: string
  readonly endpointId: string
  readonly tenantId: string
  readonly environment: Environment
  readonly eventType: EventType
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly runAttempts: number
  readonly nextAttemptAt: Date | null
  readonly lockedBy: string | null
  readonly lockedUntil: Date | null
  readonly lastAttemptAt: Date | null
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly traceparent: string | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export type AttemptRow = {
  readonly deliveryId: string
  readonly attempt: number
  readonly startedAt: Date
  readonly statusCode: number | null
  readonly latencyMs: number
  readonly responseBody: string | null
  readonly error: string | null
}

export interface Owner {
  readonly tenantId: string
  readonly environment: Environment
}

export class WebhookRepo extends Context.Service<WebhookRepo>()("etd/WebhookRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const json = (value: unknown) => JSON.stringify(value)
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

    const countEndpoints = (owner: Owner) =>
      sql<{ count: number }>`
        SELECT count(*)::int AS count FROM webhook_endpoints
        WHERE tenant_id = ${owner.tenantId} AND environment = ${owner.environment} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]?.count ?? 0),
        Effect.withSpan("WebhookRepo.countEndpoints")
      )

    const insertEndpoint = (row: Omit<EndpointRow, "previousSecret" | "previousSecretExpiresAt" | "failingSince" | "deletedAt" | "disabledReason">) =>
      sql`
        INSERT INTO webhook_endpoints (id, tenant_id, environment, url, description, events, enabled, secret, created_at, updated_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.environment}, ${row.url}, ${row.description}, ${json(row.events)}::jsonb,
                ${row.enabled}, ${row.secret}, ${row.createdAt}, ${row.updatedAt})`.pipe(
        Effect.asVoid,
        Effect.withSpan("WebhookRepo.insertEndpoint")
      )

    const findEndpoint = (owner: Owner, id: string) =>
      sql<EndpointRow>`
        SELECT * FROM webhook_endpoints
        WHERE id = ${id} AND tenant_id = ${owner.tenantId} AND environment = ${owner.environment} AND deleted_at IS NULL`.pipe(
        Effect.map(first),
        Effect.withSpan("WebhookRepo.findEndpoint")
      )

    const findEndpointForUpdate = (owner: Owner, id: string) =>
      sql<EndpointRow>`
        SELECT * FROM webhook_endpoints
        WHERE id = ${id} AND tenant_id = ${owner.tenantId} AND environment = ${owner.environment} AND deleted_at IS NULL
        FOR UPDATE`.pipe(Effect.map(first), Effect.withSpan("WebhookRepo.findEndpointForUpdate"))

    const listEndpoints = (owner: Owner, limit: number, startingAfter: string | undefined) =>
      sql<EndpointRow>`
        SELECT * FROM webhook_endpoints
        WHERE ${
        sql.and([
          sql`tenant_id = ${owner.tenantId}`,
          sql`environment = ${owner.environment}`,
          sql`deleted_at IS NULL`,
          ...(startingAfter ? [sql`id < ${startingAfter}`] : [])
        ])
      }
        ORDER BY id DESC LIMIT ${limit + 1}`.pipe(Effect.withSpan("WebhookRepo.listEndpoints"))

    const updateEndpoint = (id: string, fields: {
      readonly url: string
      readonly events: ReadonlyArray<string>
      readonly description: string | null
      readonly enabled: boolean
      readonly disabledReason: EndpointRow["disabledReason"]
      readonly failingSince: Date | null
      readonly updatedAt: Date
    }) =>
      sql`
        UPDATE webhook_endpoints
        SET url = ${fields.url}, events = ${json(fields.events)}::jsonb, description = ${fields.description},
            enabled = ${fields.enabled}, disabled_reason = ${fields.disabledReason}, failing_since = ${fields.failingSince},
            updated_at = ${fields.updatedAt}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.withSpan("WebhookRepo.updateEndpoint"))

    const rotateSecret = (id: string, secret: string, previous: string, previousExpiresAt: Date, at: Date) =>
      sql`
        UPDATE webhook_endpoints
        SET secret = ${secret}, previous_secret = ${previous}, previous_secret_expires_at = ${previousExpiresAt}, updated_at = ${at}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.withSpan("WebhookRepo.rotateSecret"))

    const deleteEndpoint = (id: string, at: Date) =>
      sql`
        UPDATE webhook_endpoints SET deleted_at = ${at}, enabled = false, updated_at = ${at} WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.withSpan("WebhookRepo.deleteEndpoint")
      )

    /** Pending deliveries of an endpoint that is no longer sent to; ones in flight settle on their own. */
    const failPending = (endpointId: string, reason: string, at: Date) =>
      sql`
        UPDATE webhook_deliveries
        SET status = 'failed', next_attempt_at = NULL, last_error = ${reason}, updated_at = ${at}
        WHERE endpoint_id = ${endpointId} AND status = 'pending' AND (locked_until IS NULL OR locked_until <= ${at})`.pipe(
        Effect.asVoid,
        Effect.withSpan("WebhookRepo.failPending")
      )

    const listDeliveries = (owner: Owner, endpointId: string, filters: {
      readonly limit: number
      readonly startingAfter?: string | undefined
      readonly status?: DeliveryStatus | undefined
      readonly eventType?: EventType | undefined
    }) =>
      sql<DeliveryRow>`
        SELECT * FROM webhook_deliveries
        WHERE ${
        sql.and([
          sql`endpoint_id = ${endpointId}`,
          sql`tenant_id = ${owner.tenantId}`,
          sql`environment = ${owner.environment}`,
          ...(filters.status ? [sql`status = ${filters.status}`] : []),
          ...(filters.eventType ? [sql`event_type = ${filters.eventType}`] : []),
          ...(filters.startingAfter ? [sql`id < ${filters.startingAfter}`] : [])
        ])
      }
        ORDER BY id DESC LIMIT ${filters.limit + 1}`.pipe(Effect.withSpan("WebhookRepo.listDeliveries"))

    const findDelivery = (owner: Owner, id: string) =>
      sql<DeliveryRow>`
        SELECT * FROM webhook_deliveries
        WHERE id = ${id} AND tenant_id = ${owner.tenantId} AND environment = ${owner.environment}`.pipe(
        Effect.map(first),
        Effect.withSpan("WebhookRepo.findDelivery")
      )

    const attemptsOf = (deliveryId: string) =>
      sql<AttemptRow>`
        SELECT delivery_id, attempt, started_at, status_code, latency_ms, response_body, error
        FROM webhook_delivery_attempts WHERE delivery_id = ${deliveryId} ORDER BY id`.pipe(
        Effect.withSpan("WebhookRepo.attemptsOf")
      )

    /**
     * Due now, with a fresh retry schedule. Any lease is cleared: a dispatcher still in flight on it
     * then finds its lease lost and writes nothing, and the requeued delivery is sent afresh.
     */
    const requeue = (deliveryId: string, at: Date) =>
      sql`
        UPDATE webhook_deliveries
        SET status = 'pending', run_attempts = 0, next_attempt_at = ${at}, locked_by = NULL, locked_until = NULL,
            updated_at = ${at}
        WHERE id = ${deliveryId}`.pipe(Effect.asVoid, Effect.withSpan("WebhookRepo.requeue"))

    const requeueFailedSince = (endpointId: string, since: Date, at: Date) =>
      sql<{ id: string }>`
        UPDATE webhook_deliveries
        SET status = 'pending', run_attempts = 0, next_attempt_at = ${at}, locked_by = NULL, locked_until = NULL,
            updated_at = ${at}
        WHERE endpoint_id = ${endpointId} AND status = 'failed' AND created_at >= ${since}
        RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.withSpan("WebhookRepo.requeueFailedSince"))

    /** The ids of the endpoints that receive an event of this type. */
    const subscribedEndpoints = (tenantId: string, environment: Environment, type: string) =>
      sql<{ id: string }>`
        SELECT id FROM webhook_endpoints
        WHERE tenant_id = ${tenantId} AND environment = ${environment} AND enabled AND deleted_at IS NULL
          AND (events @> '["*"]'::jsonb OR events @> ${json([type])}::jsonb)
        ORDER BY id`.pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.withSpan("WebhookRepo.subscribedEndpoints"))

    /** What sending a delivery needs of its endpoint (also when it was disabled or deleted meanwhile). */
    const deliveryTarget = (endpointId: string) =>
      sql<Pick<EndpointRow, "url" | "enabled" | "deletedAt" | "secret" | "previousSecret" | "previousSecretExpiresAt">>`
        SELECT url, enabled, deleted_at, secret, previous_secret, previous_secret_expires_at
        FROM webhook_endpoints WHERE id = ${endpointId}`.pipe(Effect.map(first), Effect.withSpan("WebhookRepo.deliveryTarget"))

    /** Every attempt that was sent is kept (SPEC §9). */
    const insertAttempt = (attempt: AttemptRow) =>
      sql`INSERT INTO webhook_delivery_attempts ${sql.insert(attempt)}`.pipe(Effect.asVoid, Effect.withSpan("WebhookRepo.insertAttempt"))

    /** The endpoint answered: it is no longer failing. */
    const clearFailing = (endpointId: string) =>
      sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`.pipe(
        Effect.asVoid,
        Effect.withSpan("WebhookRepo.clearFailing")
      )

    /** Marks the endpoint failing since `at` unless it already was; returns since when it fails. */
    const markFailing = (endpointId: string, at: Date) =>
      sql<{ failingSince: Date }>`
        UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${at})
        WHERE id = ${endpointId} RETURNING failing_since`.pipe(
        Effect.map((rows) => Option.map(first(rows), (row) => row.failingSince)),
        Effect.withSpan("WebhookRepo.markFailing")
      )

    /** Disables an endpoint the dispatcher gave up on, with its pending deliveries. */
    const disableEndpoint = (endpointId: string, reason: "gone" | "failing", at: Date) =>
      Effect.andThen(
        sql`
          UPDATE webhook_endpoints SET enabled = false, disabled_reason = ${reason}, updated_at = ${at}
          WHERE id = ${endpointId} AND enabled`,
        failPending(endpointId, "endpoint disabled", at)
      ).pipe(Effect.withSpan("WebhookRepo.disableEndpoint"))

    return repository({
      countEndpoints,
      insertEndpoint,
      findEndpoint,
      findEndpointForUpdate,
      listEndpoints,
      updateEndpoint,
      rotateSecret,
      deleteEndpoint,
      failPending,
      listDeliveries,
      findDelivery,
      attemptsOf,
      requeue,
      requeueFailedSince,
      subscribedEndpoints,
      deliveryTarget,
      insertAttempt,
      clearFailing,
      markFailing,
      disableEndpoint
    })
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
