import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * NFC-e offline contingency: a note issued offline while its state authority could not be reached
 * is `contingency` until its transmission is answered, and keeps what it was issued with (its
 * access key, since when, why, its deadline) in `contingency` from then on.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE documents DROP CONSTRAINT documents_status_check`
  yield* sql`
    ALTER TABLE documents ADD CONSTRAINT documents_status_check CHECK (status IN
      ('queued', 'submitting', 'contingency', 'authorized', 'rejected', 'failed', 'cancel_requested', 'cancelled',
       'cancellation_in_analysis', 'substituted'))`
  yield* sql`ALTER TABLE documents ADD COLUMN contingency jsonb`
  yield* sql`
    ALTER TABLE documents ADD CONSTRAINT documents_contingency_of_nfce
    CHECK (contingency IS NULL OR type = 'consumer_invoice')`
})
