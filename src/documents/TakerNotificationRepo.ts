/** SQL for a document's mail to its taker (`documents.taker_notification`), as the mail sender reports it. */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { TakerNotification } from "../domain/Document.js"
import type { DocumentId } from "../domain/Ids.js"

const flags = decodeRows(Schema.Struct({ held: Schema.Boolean }))
const notificationJson = (notification: TakerNotification) =>
  JSON.stringify(Schema.encodeSync(Schema.toCodecJson(TakerNotification))(notification))

export class TakerNotificationRepo extends Context.Service<TakerNotificationRepo>()("etd/TakerNotificationRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Writes the mail's state with `ending` (the mail job's end, fenced by its lease) in one
     * statement, and only over the same mail: a cancellation's mail queued meanwhile keeps its place.
     * Returns whether the lease held.
     */
    const record = (documentId: DocumentId, notification: TakerNotification, ending: Statement.Fragment) =>
      flags(sql`
        WITH ended AS (${ending}), recorded AS (
          UPDATE documents SET taker_notification = ${notificationJson(notification)}::jsonb
          WHERE id = ${documentId} AND taker_notification ->> 'kind' = ${notification.kind}
            AND EXISTS (SELECT 1 FROM ended)
          RETURNING 1
        )
        SELECT EXISTS (SELECT 1 FROM ended) AS held`).pipe(Effect.map((rows) => rows[0]!.held))

    return repository("TakerNotificationRepo", { record })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
