import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The provider's registration (SPEC §5), kept as the API's own JSON: its fields are read and written
 * together, merged key by key on update (`||`), and nothing queries inside it. Existing tenants start
 * with none declared.
 *
 * A document keeps the municipality it was accepted under (cLocEmi): it is part of its DPS id, the
 * submission id the worker reconciles by, so a later change of the tenant's address must not change
 * it. Documents accepted before this column were issued where their service was provided (null).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tenants ADD COLUMN registration jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* sql`ALTER TABLE documents ADD COLUMN issuer_municipality_code text`
})
