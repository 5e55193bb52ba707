/**
 * The event outbox. Events are inserted in the same transaction as the state change that causes
 * them, so a rolled-back change leaves no event and a committed one never loses its event. The
 * same transaction creates one webhook delivery per matching endpoint (webhooks/FanOut.ts).
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import type { EventType } from "../webhooks/Events.js"
import { fanOut } from "../webhooks/FanOut.js"

// The list of event types lives with their payload schemas (webhooks/Events.ts).
export type { EventType }

export interface NewEvent {
  readonly tenantId: string
  readonly environment: Environment
  readonly type: EventType
  readonly object: unknown
}

export class EventLog extends Context.Service<EventLog>()("etd/EventLog", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Call inside the transaction of the change the event reports. */
    const record = Effect.fn("EventLog.record")(function*(event: NewEvent) {
      const id = yield* makeId("event")
      const createdAt = yield* now
      // A savepoint inside the caller's transaction, or a transaction of its own when there is none:
      // either way the event and its webhook deliveries are written together or not at all.
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO events (id, tenant_id, environment, type, data, created_at)
          VALUES (${id}, ${event.tenantId}, ${event.environment}, ${event.type},
                  ${JSON.stringify({ object: event.object })}::jsonb, ${createdAt})`
        yield* fanOut(sql, { id, tenantId: event.tenantId, environment: event.environment, type: event.type, createdAt })
      }))
      return id
    })

    return { record } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
