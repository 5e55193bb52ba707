import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The built-in tax-authority simulator's own records (src/authority/simulator/Simulator.ts). They stand for
 * the remote authority's database: the service's own tables never reference them, and the
 * simulator writes them in transactions of its own.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE authority_sim_records (
      system text NOT NULL CHECK (system IN ('production', 'homologation')),
      submission_id text NOT NULL,
      -- 'received': the id has been submitted but no NFS-e exists for it (rejected, unavailable).
      status text NOT NULL CHECK (status IN ('received', 'authorized', 'cancelled')),
      submit_attempts integer NOT NULL DEFAULT 0,
      lookups integer NOT NULL DEFAULT 0,
      last_outcome text,
      document jsonb,
      nfse_number bigint,
      access_key text UNIQUE,
      protocol text,
      authorized_at timestamptz,
      cancelled_at timestamptz,
      cancel_protocol text,
      cancel_reason_code text,
      cancel_reason text,
      received_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (system, submission_id),
      CHECK (status = 'received' OR (access_key IS NOT NULL AND protocol IS NOT NULL AND authorized_at IS NOT NULL)),
      CHECK (status <> 'cancelled' OR (cancelled_at IS NOT NULL AND cancel_protocol IS NOT NULL))
    )`
  // NFS-e numbers are the authority's to assign. A sequence is not rolled back with a transaction,
  // so a number is never handed out twice, whatever happens to the transaction that drew it.
  yield* sql`CREATE SEQUENCE authority_sim_nfse_numbers`
})
