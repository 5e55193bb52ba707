import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Goods invoices (NF-e, model 55; NFC-e, model 65) beside the service invoices, in the same table:
 * one lifecycle, queue, idempotency, quota and list. A goods document keeps its sale and its
 * emitter as accepted in `goods` and has no service, amounts or tax content of an NFS-e. Each type
 * is numbered apart: a DPS series, an NF-e series and an NFC-e series of the same number are three
 * sequences at three authorities.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE documents ADD COLUMN goods jsonb`
  yield* sql`ALTER TABLE documents ALTER COLUMN service DROP NOT NULL`
  yield* sql`ALTER TABLE documents ALTER COLUMN amounts DROP NOT NULL`
  yield* sql`ALTER TABLE documents ALTER COLUMN tax DROP NOT NULL`
  yield* sql`
    ALTER TABLE documents ADD CONSTRAINT documents_content_of_type CHECK (
      (type = 'service_invoice' AND goods IS NULL AND service IS NOT NULL AND amounts IS NOT NULL AND tax IS NOT NULL)
      OR (type IN ('product_invoice', 'consumer_invoice') AND goods IS NOT NULL))`
  yield* sql`ALTER TABLE documents DROP CONSTRAINT documents_tenant_id_environment_series_number_key`
  yield* sql`ALTER TABLE documents ADD UNIQUE (tenant_id, environment, type, series, number)`

  yield* sql`ALTER TABLE document_series ADD COLUMN type text NOT NULL DEFAULT 'service_invoice'`
  yield* sql`ALTER TABLE document_series DROP CONSTRAINT document_series_pkey`
  yield* sql`ALTER TABLE document_series ADD PRIMARY KEY (tenant_id, environment, type, series)`
  // A filter by type reads the list's own index range, as the taker's name does: most tenants have
  // one type, so an index of its own would select nearly every row.
})
