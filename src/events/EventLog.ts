/**
 * The event outbox. Events are inserted in the same transaction as the state change that causes
 * them, so a rolled-back change leaves no event and a committed one never loses its event. The
 * same transaction hands the event to `EventFanOut` (implemented by the webhooks module, which
 * queues one delivery per matching endpoint).
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { dieOnSqlError } from "../db/errors.js"
import { decodeRows } from "../db/Repository.js"
import type { EventType } from "../domain/Events.js"
import { makeId } from "../domain/Ids.js"
import { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"

export interface NewEvent {
  readonly tenantId: string
  readonly environment: Environment
  readonly type: EventType
  readonly object: unknown
}

export const RecordedEvent = Schema.Struct({
  id: Schema.String,
  tenantId: Schema.String,
  environment: Environment,
  type: Schema.String,
  /** `{ object }`, as stored and as sent. */
  data: Schema.Unknown,
  createdAt: Schema.Date
})
export type RecordedEvent = typeof RecordedEvent.Type

/** Whoever must hear of every recorded event, inside the event's transaction (the webhooks). */
export class EventFanOut extends Context.Service<EventFanOut, {
  readonly fanOut: (event: RecordedEvent) => Effect.Effect<void>
}>()("etd/EventFanOut") {
  /** No subscriber: for tests of modules that record events but do not look at deliveries. */
  static readonly none = Layer.succeed(this, { fanOut: () => Effect.void })
}

const events = decodeRows(RecordedEvent)

export class EventLog extends Context.Service<EventLog>()("etd/EventLog", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const subscriber = yield* EventFanOut

    /** Call inside the transaction of the change the event reports. */
    const record = Effect.fn("EventLog.record")(function*(event: NewEvent) {
      const recorded: RecordedEvent = {
        id: yield* makeId("event"),
        tenantId: event.tenantId,
        environment: event.environment,
        type: event.type,
        data: { object: event.object },
        createdAt: yield* now
      }
      // A savepoint inside the caller's transaction, or a transaction of its own when there is none:
      // either way the event and what it fans out to are written together or not at all.
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`
          INSERT INTO events (id, tenant_id, environment, type, data, created_at)
          VALUES (${recorded.id}, ${recorded.tenantId}, ${recorded.environment}, ${recorded.type},
                  ${JSON.stringify(recorded.data)}::jsonb, ${recorded.createdAt})`
        yield* subscriber.fanOut(recorded)
      })).pipe(dieOnSqlError)
      return recorded.id
    })

    const find = (id: string) =>
      events(sql`SELECT id, tenant_id, environment, type, data, created_at FROM events WHERE id = ${id}`).pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        dieOnSqlError,
        Effect.withSpan("EventLog.find")
      )

    return { record, find } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
