import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The audit log: what an operator did outside the API (SPEC §5: undoing a tax id's verification),
 * who says they did it, why, and to which tenant. Entries are only ever inserted; a tenant's
 * entries are read newest first.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE audit_log (
      id text PRIMARY KEY,
      action text NOT NULL,
      actor text NOT NULL,
      reason text NOT NULL,
      tenant_id text REFERENCES tenants (id),
      details jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX audit_log_by_tenant ON audit_log (tenant_id, id)`
})
