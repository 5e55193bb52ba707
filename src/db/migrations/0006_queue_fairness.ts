import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The shared job queue (src/queue/) serves tenants in turn: issuance jobs carry their tenant, as
 * webhook deliveries already do, and both are indexed by tenant and due time while pending.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE document_jobs ADD COLUMN tenant_id text`
  yield* sql`UPDATE document_jobs j SET tenant_id = d.tenant_id FROM documents d WHERE d.id = j.document_id`
  yield* sql`ALTER TABLE document_jobs ALTER COLUMN tenant_id SET NOT NULL`
  // A fair claim walks the tenants with due jobs one index probe at a time, then takes each one's oldest.
  yield* sql`CREATE INDEX document_jobs_by_tenant ON document_jobs (tenant_id, run_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_by_tenant ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending'`
})
