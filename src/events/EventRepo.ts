/** SQL for the event outbox (`events`). */
import { type Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { RecordedEvent } from "../domain/Events.js"

const events = decodeRows(RecordedEvent)

export class EventRepo extends Context.Service<EventRepo>()("etd/EventRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (event: RecordedEvent) =>
      sql`
        INSERT INTO events (id, tenant_id, environment, type, data, created_at)
        VALUES (${event.id}, ${event.tenantId}, ${event.environment}, ${event.type},
                ${JSON.stringify(event.data)}::jsonb, ${event.createdAt})`.pipe(Effect.asVoid)

    const findMany = (ids: Arr.NonEmptyReadonlyArray<string>) =>
      events(sql`SELECT id, tenant_id, environment, type, data, created_at FROM events WHERE id IN ${sql.in(ids)}`)

    return repository("EventRepo", { insert, findMany })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
