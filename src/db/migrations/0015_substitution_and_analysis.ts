import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Substitution (SPEC §6): a note replaced by a corrected one ends `substituted`, and the two link
 * each other (`substitutes` on the new one, `substituted_by` on the original); the new one keeps its
 * reason (`substitution`, the DPS's `subst` group). A cancellation past its deadline may go to the
 * municipality's analysis (`cancellation_in_analysis`).
 *
 * One substitute in flight per original: the partial unique index lets a second one in only once
 * the first was refused (rejected or failed), so two concurrent substitutions cannot both be taken.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE documents DROP CONSTRAINT documents_status_check`
  yield* sql`
    ALTER TABLE documents ADD CONSTRAINT documents_status_check CHECK (status IN
      ('queued', 'submitting', 'authorized', 'rejected', 'failed', 'cancel_requested', 'cancelled',
       'cancellation_in_analysis', 'substituted'))`
  yield* sql`ALTER TABLE documents ADD COLUMN substitutes text REFERENCES documents (id)`
  yield* sql`ALTER TABLE documents ADD COLUMN substituted_by text REFERENCES documents (id)`
  yield* sql`ALTER TABLE documents ADD COLUMN substitution jsonb`
  yield* sql`
    CREATE UNIQUE INDEX documents_one_substitute ON documents (substitutes)
    WHERE substitutes IS NOT NULL AND status NOT IN ('rejected', 'failed')`
})
