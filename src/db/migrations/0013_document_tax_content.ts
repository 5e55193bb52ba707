import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A document's whole tax content: the taker may be absent (a note to an unidentified consumer),
 * an intermediary and the declared tax details (ISS, federal group, approximate taxes, export data,
 * deductions) are stored with it, and the amounts gain discounts, retentions and the net value.
 * Existing documents had none of these: no discount, nothing withheld, net value = services.
 */
/** The amounts of documents stored before: no discount, nothing withheld, net value = services. */
export const backfillAmounts = (sql: SqlClient.SqlClient) =>
  sql`
    UPDATE documents SET amounts = jsonb_build_object(
      'source', 'computed',
      'unconditional_discount', 0,
      'conditional_discount', 0,
      'benefit_reduction', 0,
      'iss_withheld', 0,
      'federal_withheld', 0,
      'total_withheld', 0,
      'net', amounts->'services'
    ) || amounts
    WHERE NOT amounts ? 'net'`

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE documents ALTER COLUMN taker DROP NOT NULL`
  yield* sql`ALTER TABLE documents ADD COLUMN intermediary jsonb`
  yield* sql`ALTER TABLE documents ADD COLUMN tax jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* backfillAmounts(sql)
})
