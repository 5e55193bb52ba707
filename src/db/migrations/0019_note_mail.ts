import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Notes e-mailed to their takers: the tenant's switch and sender name, and on each document the
 * state of its latest mail to the taker (null until the note is authorized).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE tenants
      ADD COLUMN note_mail_enabled boolean NOT NULL DEFAULT true,
      ADD COLUMN note_mail_sender_name text`
  yield* sql`ALTER TABLE documents ADD COLUMN taker_notification jsonb`
})
