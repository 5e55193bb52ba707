/**
 * Fan-out of an event to the tenant's webhook endpoints. Runs inside the transaction that records
 * the event (EventLog.record), so an event and its deliveries commit or roll back together.
 */
import { Array as Arr, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"

/**
 * NOTIFY channel: Postgres delivers it at commit, so a dispatcher never wakes before the rows exist.
 * The payload must not be empty: @effect/sql-pg's `listen` drops empty notifications.
 */
export const DELIVERIES_CHANNEL = "etd_webhook_deliveries"

export interface RecordedEvent {
  readonly id: string
  readonly tenantId: string
  readonly environment: Environment
  readonly type: string
  readonly createdAt: Date
}


export const fanOut = (sql: SqlClient.SqlClient, event: RecordedEvent) =>
  Effect.gen(function*() {
    const endpoints = yield* sql<{ id: string }>`
      SELECT id FROM webhook_endpoints
      WHERE tenant_id = ${event.tenantId} AND environment = ${event.environment}
        AND enabled AND deleted_at IS NULL
        AND (events @> '["*"]'::jsonb OR events @> ${JSON.stringify([event.type])}::jsonb)
      ORDER BY id`
    if (endpoints.length === 0) return 0
    const parent = yield* currentTraceparent
    const rows = yield* Effect.forEach(endpoints, (endpoint) =>
      Effect.map(makeId("delivery"), (id) => ({
        id,
        eventId: event.id,
        endpointId: endpoint.id,
        tenantId: event.tenantId,
        environment: event.environment,
        eventType: event.type,
        status: "pending",
        nextAttemptAt: event.createdAt,
        traceparent: parent,
        createdAt: event.createdAt,
        updatedAt: event.createdAt
      })))
    // One row per endpoint, and there is at least one (checked above).
    if (!Arr.isArrayNonEmpty(rows)) return 0
    yield* sql`INSERT INTO webhook_deliveries ${sql.insert(rows)}`
    yield* sql`SELECT pg_notify(${DELIVERIES_CHANNEL}, 'queued')`
    return rows.length
  }).pipe(Effect.withSpan("Webhooks.fanOut"))
