/**
 * The event outbox. Events are inserted in the same transaction as the state change that causes
 * them, so a rolled-back change leaves no event and a committed one never loses its event.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { makeId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"

export type EventType =
  | "document.authorized"
  | "document.rejected"
  | "document.failed"
  | "document.cancelled"
  | "document.cancellation_failed"
  | "quota.threshold"
  | "api_key.exposed"
  | "credential.expiring"

export interface NewEvent {
  readonly tenantId: string
  readonly environment: Environment
  readonly type: EventType
  readonly object: unknown
}

export class EventLog extends Effect.Service<EventLog>()("etd/EventLog", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Call inside the transaction of the change the event reports. */
    const record = Effect.fn("EventLog.record")(function*(event: NewEvent) {
      const id = yield* makeId("event")
      const createdAt = yield* now
      yield* sql`
        INSERT INTO events (id, tenant_id, environment, type, data, created_at)
        VALUES (${id}, ${event.tenantId}, ${event.environment}, ${event.type},
                ${JSON.stringify({ object: event.object })}::jsonb, ${createdAt})`
      return id
    })

    return { record } as const
  })
}) {}
