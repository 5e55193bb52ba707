import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The tenant's option for the Simples Nacional: the national NFS-e system refuses a DPS
 * whose regime contradicts its register, so each tenant says which one it is in. Existing tenants
 * start outside the Simples, which is what every DPS declared until now.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE tenants ADD COLUMN simples_nacional text NOT NULL DEFAULT 'not_opted'
      CONSTRAINT tenants_simples_nacional CHECK (simples_nacional IN ('not_opted', 'mei', 'me_epp'))`
})
