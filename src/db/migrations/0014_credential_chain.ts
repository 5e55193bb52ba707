import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * ICP-Brasil trust (SPEC §8 "Trust"): a credential records whether its certificate chained to a
 * trusted root when it was uploaded, and only such a credential proves its tenant's tax id.
 *
 * No stored certificate was ever checked for a chain, and the vault keeps the end-entity
 * certificate alone (not the intermediates its file carried), so none can be re-evaluated: every
 * existing credential is marked `verified_chain = false`, and no tenant keeps a verification made
 * before this check existed. A self-signed certificate may have claimed someone else's CNPJ and
 * shut its real owner out (SPEC §5); the rightful holder proves it again by uploading its
 * ICP-Brasil certificate. The credentials themselves stay usable wherever a verified chain is not
 * required (test documents).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE credentials ADD COLUMN verified_chain boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE tenants SET verified = false WHERE verified`
})
