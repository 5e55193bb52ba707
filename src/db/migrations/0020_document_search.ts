import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Finding a document (SPEC §6's list filters) by its taker's CPF/CNPJ, its NFS-e number or its DPS
 * number in any series: each an equality within a tenant and environment, newest first, so each
 * gets the list's index shape with its key before the id. A part of the taker's name has no
 * equality to index: it is checked while reading the list's own (tenant, environment, id) range.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX documents_by_taker_tax_id ON documents (tenant_id, environment, (taker->>'tax_id'), id DESC)
    WHERE taker->>'tax_id' IS NOT NULL`
  yield* sql`
    CREATE INDEX documents_by_nfse_number ON documents (tenant_id, environment, (authority->>'nfse_number'), id DESC)
    WHERE authority->>'nfse_number' IS NOT NULL`
  yield* sql`CREATE INDEX documents_by_number ON documents (tenant_id, environment, number, id DESC)`
})
