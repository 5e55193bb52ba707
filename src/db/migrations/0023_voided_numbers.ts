import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Number voiding (inutilização): ranges of NF-e/NFC-e numbers of a series that no note used (drawn
 * for documents the authority rejected, or that failed), voided at the authority so the gap in
 * the series is accounted for. A refused request is kept; its range may be asked again.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE voided_numbers (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      environment text NOT NULL,
      type text NOT NULL CHECK (type IN ('product_invoice', 'consumer_invoice')),
      series text NOT NULL,
      from_number integer NOT NULL,
      to_number integer NOT NULL,
      reason text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'registered', 'refused')),
      protocol text,
      error jsonb,
      requested_at timestamptz NOT NULL,
      registered_at timestamptz,
      updated_at timestamptz NOT NULL,
      CHECK (from_number >= 1 AND from_number <= to_number)
    )`
  yield* sql`CREATE INDEX voided_numbers_series ON voided_numbers (tenant_id, environment, type, series, from_number)`
  yield* sql`CREATE INDEX voided_numbers_list ON voided_numbers (tenant_id, environment, id)`
})
