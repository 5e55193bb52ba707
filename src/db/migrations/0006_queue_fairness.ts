import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The shared job queue (src/queue/) claims fairly across tenants: issuance jobs carry their
 * tenant, as webhook deliveries already do.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE document_jobs ADD COLUMN tenant_id text`
  yield* sql`UPDATE document_jobs j SET tenant_id = d.tenant_id FROM documents d WHERE d.id = j.document_id`
  yield* sql`ALTER TABLE document_jobs ALTER COLUMN tenant_id SET NOT NULL`
})
