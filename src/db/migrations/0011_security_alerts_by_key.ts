import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A key's exposure alerts, read with every list of the tenant's keys (the `exposure` of an API
 * key, SPEC §15): without an index each key of the page would scan every alert of the service.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX security_alerts_by_api_key ON security_alerts (api_key_id, created_at) WHERE api_key_id IS NOT NULL`
})
