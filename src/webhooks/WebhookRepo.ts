/**
 * SQL for webhook endpoints, deliveries and their attempts. Every read of an endpoint or a
 * delivery through the API is bounded by tenant, and by environment for an API key, so other
 * tenants' (and a key's other environment's) rows are simply not there (404).
 */
import { type Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { keyset } from "../db/Keyset.js"
import { decodeRows, repository, type StatementParts } from "../db/Repository.js"
import { EventType } from "../domain/Events.js"
import { DeliveryId, encodeId, TenantId, WebhookEndpointId } from "../domain/Ids.js"
import type { Cursor } from "../domain/Pagination.js"
import { Environment, type TenantReach } from "../domain/Principal.js"
import {
  DeliveryStatus,
  DisabledReason,
  EventFilter,
  FAILING_AFTER,
  HEALTH_WINDOW,
  HealthStatus
} from "../domain/Webhook.js"

export const EndpointRow = Schema.Struct({
  id: WebhookEndpointId,
  tenantId: TenantId,
  environment: Environment,
  url: Schema.String,
  description: Schema.NullOr(Schema.String),
  events: Schema.Array(EventFilter),
  enabled: Schema.Boolean,
  disabledReason: Schema.NullOr(DisabledReason),
  secret: Schema.String,
  previousSecret: Schema.NullOr(Schema.String),
  previousSecretExpiresAt: Schema.NullOr(Schema.Date),
  failingSince: Schema.NullOr(Schema.Date),
  deletedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type EndpointRow = typeof EndpointRow.Type

/** An endpoint's health, from its latest deliveries sent (`healthOf`). */
export const HealthRow = Schema.Struct({
  healthStatus: HealthStatus,
  lastSuccessAt: Schema.NullOr(Schema.Date),
  lastFailureAt: Schema.NullOr(Schema.Date),
  consecutiveFailures: Schema.Number
})
export type HealthRow = typeof HealthRow.Type

export const EndpointWithHealthRow = Schema.Struct({ ...EndpointRow.fields, ...HealthRow.fields })
export type EndpointWithHealthRow = typeof EndpointWithHealthRow.Type

export const DeliveryRow = Schema.Struct({
  id: DeliveryId,
  eventId: Schema.String,
  endpointId: WebhookEndpointId,
  tenantId: TenantId,
  environment: Environment,
  eventType: EventType,
  status: DeliveryStatus,
  attempts: Schema.Number,
  runAttempts: Schema.Number,
  nextAttemptAt: Schema.NullOr(Schema.Date),
  lastAttemptAt: Schema.NullOr(Schema.Date),
  lastStatusCode: Schema.NullOr(Schema.Number),
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type DeliveryRow = typeof DeliveryRow.Type

export const AttemptRow = Schema.Struct({
  deliveryId: DeliveryId,
  attempt: Schema.Number,
  startedAt: Schema.Date,
  statusCode: Schema.NullOr(Schema.Number),
  latencyMs: Schema.Number,
  responseBody: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String)
})
export type AttemptRow = typeof AttemptRow.Type

const endpoints = decodeRows(EndpointRow)
const endpointsWithHealth = decodeRows(EndpointWithHealthRow)
const healths = decodeRows(HealthRow)
const deliveries = decodeRows(DeliveryRow)
const attempts = decodeRows(AttemptRow)
const deliveryIds = decodeRows(Schema.Struct({ id: DeliveryId }))
const counts = decodeRows(Schema.Struct({ count: Schema.Number }))
const failingSinces = decodeRows(Schema.Struct({ failingSince: Schema.Date }))
const targets = decodeRows(EndpointRow.mapFields((fields) => ({
  id: fields.id,
  url: fields.url,
  enabled: fields.enabled,
  deletedAt: fields.deletedAt,
  secret: fields.secret,
  previousSecret: fields.previousSecret,
  previousSecretExpiresAt: fields.previousSecretExpiresAt,
  failingSince: fields.failingSince
})))

/** An endpoint that sent nothing yet. */
export const unknownHealth: HealthRow = {
  healthStatus: "unknown",
  lastSuccessAt: null,
  lastFailureAt: null,
  consecutiveFailures: 0
}

/** Whose endpoints and deliveries a request reaches: a key's environment, or both for a member's session. */
export type Owner = TenantReach

export class WebhookRepo extends Context.Service<WebhookRepo>()("etd/WebhookRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const json = (value: unknown) => JSON.stringify(value)
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

    /** The owner's tenant, in its environment when it has one. */
    const ownedBy = (owner: Owner) => [
      sql`tenant_id = ${owner.tenantId}`,
      ...(owner.environment === undefined ? [] : [sql`environment = ${owner.environment}`])
    ]

    /**
     * The columns of HealthRow for the endpoint `e`, as a lateral subquery over its latest
     * HEALTH_WINDOW deliveries that were sent (have an attempt); each delivery counts by its latest
     * attempt: succeeded, or not (failed, or pending a retry). It walks webhook_deliveries_by_endpoint
     * newest first and stops at the window, so a list of endpoints stays one bounded statement.
     */
    const healthOfEndpoint = sql`LATERAL (
      SELECT
        CASE
          WHEN count(*) = 0 THEN 'unknown'
          WHEN coalesce(min(recent.rank) FILTER (WHERE recent.status = 'succeeded'), ${HEALTH_WINDOW + 1})
            > least(count(*), ${FAILING_AFTER}) THEN 'failing'
          ELSE 'healthy'
        END AS health_status,
        max(recent.last_attempt_at) FILTER (WHERE recent.status = 'succeeded') AS last_success_at,
        max(recent.last_attempt_at) FILTER (WHERE recent.status <> 'succeeded') AS last_failure_at,
        (coalesce(min(recent.rank) FILTER (WHERE recent.status = 'succeeded') - 1, count(*)))::int
          AS consecutive_failures
      FROM (
        SELECT d.status, d.last_attempt_at, row_number() OVER (ORDER BY d.id DESC) AS rank
        FROM (
          SELECT d.id, d.status, d.last_attempt_at FROM webhook_deliveries AS d
          WHERE d.endpoint_id = e.id AND d.last_attempt_at IS NOT NULL
            AND EXISTS (SELECT 1 FROM webhook_delivery_attempts AS a WHERE a.delivery_id = d.id)
          ORDER BY d.id DESC LIMIT ${HEALTH_WINDOW}
        ) AS d
      ) AS recent
    ) AS health ON true`

    const countEndpoints = (tenantId: TenantId, environment: Environment) =>
      counts(sql`
        SELECT count(*)::int AS count FROM webhook_endpoints
        WHERE tenant_id = ${tenantId} AND environment = ${environment} AND deleted_at IS NULL`).pipe(
        Effect.map((rows) => rows[0]?.count ?? 0)
      )

    const insertEndpoint = (
      row: Omit<
        EndpointRow,
        "previousSecret" | "previousSecretExpiresAt" | "failingSince" | "deletedAt" | "disabledReason"
      >
    ) =>
      sql`
        INSERT INTO webhook_endpoints (id, tenant_id, environment, url, description, events, enabled, secret, created_at, updated_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.environment}, ${row.url}, ${row.description}, ${
        json(row.events)
      }::jsonb,
                ${row.enabled}, ${row.secret}, ${row.createdAt}, ${row.updatedAt})`.pipe(
        Effect.asVoid
      )

    /** The endpoint with its health. */
    const findEndpoint = (owner: Owner, id: WebhookEndpointId) =>
      endpointsWithHealth(sql`
        SELECT e.*, health.* FROM webhook_endpoints AS e LEFT JOIN ${healthOfEndpoint}
        WHERE ${sql.and([sql`e.id = ${id}`, ...ownedBy(owner), sql`e.deleted_at IS NULL`])}`).pipe(
        Effect.map(first)
      )

    /** One endpoint's health (after a change that answers with the endpoint). */
    const healthOf = (id: WebhookEndpointId) =>
      healths(sql`SELECT health.* FROM webhook_endpoints AS e LEFT JOIN ${healthOfEndpoint} WHERE e.id = ${id}`).pipe(
        Effect.map((rows) => rows[0] ?? unknownHealth)
      )

    const findEndpointForUpdate = (owner: Owner, id: WebhookEndpointId) =>
      endpoints(sql`
        SELECT * FROM webhook_endpoints
        WHERE ${sql.and([sql`id = ${id}`, ...ownedBy(owner), sql`deleted_at IS NULL`])}
        FOR UPDATE`).pipe(Effect.map(first))

    /** One environment's endpoints (a key's), or both environments' (a member's session) in one statement. */
    const listEndpoints = (
      tenantId: TenantId,
      environments: Arr.NonEmptyReadonlyArray<Environment>,
      limit: number,
      cursor: Cursor | undefined
    ) => {
      const page = keyset(sql, sql`e.id`, "desc", cursor)
      return endpointsWithHealth(sql`
        SELECT e.*, health.* FROM webhook_endpoints AS e LEFT JOIN ${healthOfEndpoint}
        WHERE ${
        sql.and([
          sql`e.tenant_id = ${tenantId}`,
          sql`e.environment IN ${sql.in(environments)}`,
          sql`e.deleted_at IS NULL`,
          ...page.where
        ])
      }
        ORDER BY ${page.orderBy} LIMIT ${limit + 1}`)
    }

    const updateEndpoint = (id: WebhookEndpointId, fields: {
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
        WHERE id = ${id}`.pipe(Effect.asVoid)

    const rotateSecret = (id: WebhookEndpointId, secret: string, previous: string, previousExpiresAt: Date, at: Date) =>
      sql`
        UPDATE webhook_endpoints
        SET secret = ${secret}, previous_secret = ${previous}, previous_secret_expires_at = ${previousExpiresAt}, updated_at = ${at}
        WHERE id = ${id}`.pipe(Effect.asVoid)

    const deleteEndpoint = (id: WebhookEndpointId, at: Date) =>
      sql`
        UPDATE webhook_endpoints SET deleted_at = ${at}, enabled = false, updated_at = ${at} WHERE id = ${id}`.pipe(
        Effect.asVoid
      )

    /** An endpoint's pending deliveries (to end them when it is no longer sent to). */
    const pendingOf = (endpointId: WebhookEndpointId) =>
      deliveryIds(sql`SELECT id FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status = 'pending'`).pipe(
        Effect.map((rows) => rows.map((row) => row.id))
      )

    const listDeliveries = (owner: Owner, endpointId: WebhookEndpointId, filters: {
      readonly limit: number
      readonly cursor?: Cursor | undefined
      readonly status?: DeliveryStatus | undefined
      readonly eventType?: EventType | undefined
    }) => {
      const page = keyset(sql, sql`id`, "desc", filters.cursor)
      return deliveries(sql`
        SELECT * FROM webhook_deliveries
        WHERE ${
        sql.and([
          sql`endpoint_id = ${endpointId}`,
          ...ownedBy(owner),
          ...(filters.status ? [sql`status = ${filters.status}`] : []),
          ...(filters.eventType ? [sql`event_type = ${filters.eventType}`] : []),
          ...page.where
        ])
      }
        ORDER BY ${page.orderBy} LIMIT ${filters.limit + 1}`)
    }

    const findDelivery = (owner: Owner, id: DeliveryId) =>
      deliveries(sql`
        SELECT * FROM webhook_deliveries WHERE ${sql.and([sql`id = ${id}`, ...ownedBy(owner)])}`).pipe(
        Effect.map(first)
      )

    const attemptsOf = (deliveryId: DeliveryId) =>
      attempts(sql`
        SELECT delivery_id, attempt, started_at, status_code, latency_ms, response_body, error
        FROM webhook_delivery_attempts WHERE delivery_id = ${deliveryId} ORDER BY id`)

    /** An endpoint's failed deliveries created since a time (to send them again after an outage). */
    const failedSince = (endpointId: WebhookEndpointId, since: Date) =>
      deliveryIds(sql`
        SELECT id FROM webhook_deliveries
        WHERE endpoint_id = ${endpointId} AND status = 'failed' AND created_at >= ${since}`).pipe(
        Effect.map((rows) => rows.map((row) => row.id))
      )

    /** The ids of the endpoints that receive an event of this type. */
    /**
     * One delivery of an event to each enabled endpoint subscribed to it, as the CTE
     * `queued_deliveries`, written only where `written` holds (the event was), and the NOTIFY that
     * wakes the dispatchers when there was one. The rows are DeliveryQueue's (its `row`). A delivery's
     * id is made here, where the endpoints are known: the time of its creation, as every id starts,
     * then 16 characters of a digest of the event and endpoint ids (hex digits are in the ids'
     * alphabet), unique as the pair is.
     */
    const queueingDeliveries = (
      delivery: {
        readonly eventId: string
        readonly tenantId: TenantId
        readonly environment: Environment
        readonly eventType: string
        readonly traceparent: string | null
        readonly at: Date
      },
      written: Statement.Fragment,
      channel: string
    ): StatementParts => {
      // The prefix and the time: the id of that time, without its 16 random characters.
      const timed = encodeId("delivery", delivery.at.getTime(), new Uint8Array(10)).slice(0, -16)
      return {
        // Casts: in INSERT … SELECT the parameters' types are not taken from the columns.
        ctes: sql`queued_deliveries AS (
          INSERT INTO webhook_deliveries (id, event_id, endpoint_id, tenant_id, environment, event_type, traceparent,
            status, next_attempt_at, created_at, updated_at)
          SELECT ${timed}::text || substr(md5(${delivery.eventId}::text || e.id), 1, 16), ${delivery.eventId}::text,
                 e.id, e.tenant_id, e.environment, ${delivery.eventType}::text, ${delivery.traceparent}::text, 'pending',
                 ${delivery.at}::timestamptz, ${delivery.at}::timestamptz, ${delivery.at}::timestamptz
          FROM webhook_endpoints AS e
          WHERE ${written} AND e.tenant_id = ${delivery.tenantId}::text AND e.environment = ${delivery.environment}::text
            AND e.enabled AND e.deleted_at IS NULL
            AND (e.events @> '["*"]'::jsonb OR e.events @> ${json([delivery.eventType])}::jsonb)
          RETURNING 1)`,
        // PostgreSQL sends it at commit, so a dispatcher never wakes before the rows exist.
        select: sql`(SELECT pg_notify(${channel}, 'queued') FROM (SELECT 1 FROM queued_deliveries LIMIT 1) AS one)`
      }
    }

    /** What sending deliveries needs of their endpoints (also when disabled or deleted meanwhile), in one statement. */
    const deliveryTargets = (ids: Arr.NonEmptyReadonlyArray<WebhookEndpointId>) =>
      targets(sql`
        SELECT id, url, enabled, deleted_at, secret, previous_secret, previous_secret_expires_at, failing_since
        FROM webhook_endpoints WHERE id IN ${sql.in(ids)}`)

    /** Every attempt that was sent is kept (SPEC §9). */
    const insertAttempt = (attempt: AttemptRow) =>
      sql`INSERT INTO webhook_delivery_attempts ${sql.insert(attempt)}`.pipe(Effect.asVoid)

    /**
     * The attempt kept and the delivery's fenced end (`ending`) in one statement: every write of a
     * WITH runs, so the attempt is kept when the lease was lost. Whether the end was written.
     */
    const keepAttemptEnding = (attempt: AttemptRow, ending: Statement.Fragment) =>
      sql<{ readonly ended: number }>`
        WITH kept AS (INSERT INTO webhook_delivery_attempts ${sql.insert(attempt)} RETURNING 1),
          ended AS (${ending})
        SELECT (SELECT count(*) FROM ended)::int AS ended`.pipe(Effect.map((rows) => rows[0]?.ended === 1))

    /** The endpoint answered: it is no longer failing. */
    const clearFailing = (endpointId: WebhookEndpointId) =>
      Effect.asVoid(
        sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`
      )

    /** Marks the endpoint failing since `at` unless it already was; returns since when it fails. */
    const markFailing = (endpointId: WebhookEndpointId, at: Date) =>
      failingSinces(sql`
        UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${at})
        WHERE id = ${endpointId} RETURNING failing_since`).pipe(
        Effect.map((rows) => Option.map(first(rows), (row) => row.failingSince))
      )

    /** Disables an endpoint the dispatcher gave up on (its pending deliveries are the queue's to end). */
    const disableEndpoint = (endpointId: WebhookEndpointId, reason: "gone" | "failing", at: Date) =>
      sql`
        UPDATE webhook_endpoints SET enabled = false, disabled_reason = ${reason}, updated_at = ${at}
        WHERE id = ${endpointId} AND enabled`.pipe(Effect.asVoid)

    return repository("WebhookRepo", {
      countEndpoints,
      insertEndpoint,
      findEndpoint,
      healthOf,
      findEndpointForUpdate,
      listEndpoints,
      updateEndpoint,
      rotateSecret,
      deleteEndpoint,
      pendingOf,
      listDeliveries,
      findDelivery,
      attemptsOf,
      failedSince,
      queueingDeliveries,
      deliveryTargets,
      insertAttempt,
      keepAttemptEnding,
      clearFailing,
      markFailing,
      disableEndpoint
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
