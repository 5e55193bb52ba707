import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Notes e-mailed to their takers: the tenant's switch and sender name, and on each document the
 * state of its latest mail to the taker (null until the note is authorized).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // On for the tenants created from now on; off for those that exist already, whose takers never
  // had mail from us: their owners turn it on when they choose (docs/api.md, "Notes e-mailed to takers").
  yield* sql`
    ALTER TABLE tenants
      ADD COLUMN note_mail_enabled boolean NOT NULL DEFAULT false,
      ADD COLUMN note_mail_sender_name text`
  yield* sql`ALTER TABLE tenants ALTER COLUMN note_mail_enabled SET DEFAULT true`
  yield* sql`ALTER TABLE documents ADD COLUMN taker_notification jsonb`
  // A note's mail that is not sent after all (the switch turned off, a test note to a stranger, the
  // note cancelled first) ends `withheld`, neither sent nor given up.
  yield* sql`ALTER TABLE mail_jobs DROP CONSTRAINT mail_jobs_state_check`
  yield* sql`ALTER TABLE mail_jobs ADD CONSTRAINT mail_jobs_state_check CHECK (state IN ('pending', 'sent', 'failed', 'withheld'))`
})
