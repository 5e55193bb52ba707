/** SQL for the event outbox (`events`). */
import { type Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { decodeRows, repository, type StatementParts } from "../db/Repository.js"
import { RecordedEvent } from "../domain/Events.js"

const events = decodeRows(RecordedEvent)

export class EventRepo extends Context.Service<EventRepo>()("etd/EventRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * The event's insert as the CTE `recorded_event` (returning its id), written only where `gate`
     * holds, followed by what `alongside` writes when it was written (its deliveries).
     */
    const recording = (
      event: RecordedEvent,
      gate: Statement.Fragment,
      alongside: (written: Statement.Fragment) => StatementParts
    ): StatementParts => {
      const then = alongside(sql`EXISTS (SELECT 1 FROM recorded_event)`)
      return {
        // Casts: in INSERT … SELECT the parameters' types are not taken from the columns.
        ctes: sql`recorded_event AS (
          INSERT INTO events (id, tenant_id, environment, type, data, created_at)
          SELECT ${event.id}::text, ${event.tenantId}::text, ${event.environment}::text, ${event.type}::text,
                 ${JSON.stringify(event.data)}::jsonb, ${event.createdAt}::timestamptz
          WHERE ${gate}
          RETURNING id), ${then.ctes}`,
        select: then.select
      }
    }

    /** The event and what `alongside` writes with it, in one statement (atomic by itself). */
    const record = (event: RecordedEvent, alongside: (written: Statement.Fragment) => StatementParts) => {
      const parts = recording(event, sql`true`, alongside)
      return sql`WITH ${parts.ctes} SELECT ${parts.select}`.pipe(Effect.asVoid)
    }

    const findMany = (ids: Arr.NonEmptyReadonlyArray<string>) =>
      events(sql`SELECT id, tenant_id, environment, type, data, created_at FROM events WHERE id IN ${sql.in(ids)}`)

    return repository("EventRepo", { recording, record, findMany })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
