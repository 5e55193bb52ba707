import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The state authorizers' last status answers, shared by every instance: one row per environment,
 * state and document type. An instance takes the asking of a row by moving its `claimed_at` (only
 * when no one took it within the interval), so the authorities are asked once per interval whatever
 * the number of instances; every instance shows the rows in `/readyz` and its gauge. `status` is null
 * until the first answer.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE authorizer_status (
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      state text NOT NULL,
      type text NOT NULL CHECK (type IN ('product_invoice', 'consumer_invoice')),
      status text CHECK (status IN ('in_operation', 'paused', 'unreachable', 'no_certificate')),
      code text,
      reason text,
      checked_at timestamptz,
      claimed_at timestamptz NOT NULL,
      PRIMARY KEY (environment, state, type)
    )`
})
