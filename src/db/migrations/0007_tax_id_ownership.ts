import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Tax id ownership (SPEC §5): several tenants may name one tax id until one of them proves it with
 * an A1 certificate issued to it; that tenant is `verified`, and it alone holds the tax id.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tenants ADD COLUMN verified boolean NOT NULL DEFAULT false`
  // Until now every stored certificate had to carry its tenant's tax id, and tax ids were unique:
  // a tenant with any credential, even an expired or replaced one, has proven its tax id already.
  yield* sql`UPDATE tenants t SET verified = true WHERE EXISTS (SELECT 1 FROM credentials c WHERE c.tenant_id = t.id)`
  yield* sql`DROP INDEX tenants_tax_id`
  yield* sql`CREATE INDEX tenants_by_tax_id ON tenants (tax_id)`
  // One verified tenant per tax id: of two concurrent verifications, the second to commit fails here.
  yield* sql`CREATE UNIQUE INDEX tenants_verified_tax_id ON tenants (tax_id) WHERE verified`

  // The simulator keeps its records per tenant, so two tenants that share a tax id (and therefore
  // the DPS ids of their documents) never read or adopt each other's submissions. Existing records
  // belong to the one document with their submission id in their system's environment (tax ids
  // were unique until now); a record no document names can never be asked about again.
  yield* sql`ALTER TABLE authority_sim_records ADD COLUMN tenant_id text`
  yield* sql`
    UPDATE authority_sim_records r SET tenant_id = d.tenant_id
    FROM documents d
    WHERE d.submission_id = r.submission_id
      AND d.environment = CASE r.system WHEN 'production' THEN 'live' ELSE 'test' END`
  yield* sql`DELETE FROM authority_sim_records WHERE tenant_id IS NULL`
  yield* sql`ALTER TABLE authority_sim_records ALTER COLUMN tenant_id SET NOT NULL`
  yield* sql`ALTER TABLE authority_sim_records DROP CONSTRAINT authority_sim_records_pkey`
  yield* sql`ALTER TABLE authority_sim_records ADD PRIMARY KEY (system, tenant_id, submission_id)`
})
