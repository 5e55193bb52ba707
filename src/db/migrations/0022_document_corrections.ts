import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The correction letters (CC-e, event 110110) of NF-e documents: each with its number (1 to 20),
 * its text and what the authority said. A letter the authority refused is kept, and its number is
 * free again (the authority registered nothing under it); a registered or pending one holds it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE document_corrections (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      document_id text NOT NULL REFERENCES documents (id),
      sequence integer NOT NULL CHECK (sequence BETWEEN 1 AND 20),
      text text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'registered', 'refused')),
      protocol text,
      error jsonb,
      requested_at timestamptz NOT NULL,
      registered_at timestamptz,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE UNIQUE INDEX document_corrections_number ON document_corrections (document_id, sequence)
      WHERE status <> 'refused'`
  yield* sql`CREATE INDEX document_corrections_document ON document_corrections (document_id, id)`
})
