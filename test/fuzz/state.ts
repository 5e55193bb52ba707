/**
 * "No state change on a rejected request": a fingerprint of the database taken before and after
 * each request the service refuses. Every table of the schema is hashed row by row, so a table added
 * later is covered without a change here, except what the service changes on its own while the
 * fuzz runs, which no request decides:
 *
 * - tables only background work writes: the authority simulator's records, events and their webhook
 *   deliveries (written with the state change that causes them, which is itself fingerprinted, or
 *   by the workers), the authority's files of a note (stored by the worker with its authorization,
 *   or by a successful file request), and security alerts, which SPEC §4 raises for a refused request too (a token
 *   in the URL, a key sent from a browser);
 * - columns the workers move: a document's progress through the authority, a job's lease, an
 *   endpoint's failure tracking;
 * - the refusals an Idempotency-Key records on purpose: SPEC §6 replays "the original status and
 *   body" to a retry with the same key, errors included, so such a refusal stores its answer. A
 *   claim left behind (no answer) or a stored success is still a change;
 * - outgoing mail (written with the change that causes it, then moved by the mail sender), and the
 *   password-reset links, which a reset request makes after its answer (so that a known and an
 *   unknown address take the same time): a later request's fingerprint may see them land.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const BACKGROUND_TABLES = new Set([
  "authority_sim_records",
  "document_files",
  "events",
  "webhook_deliveries",
  "webhook_delivery_attempts",
  "security_alerts",
  "mail_jobs",
  "etd_migrations"
])

const BACKGROUND_COLUMNS: Readonly<Record<string, ReadonlyArray<string>>> = {
  documents: ["status", "authority", "rejection", "cancellation", "attempts", "last_error", "updated_at"],
  document_jobs: ["state", "attempts", "run_at", "first_attempt_at", "locked_by", "locked_until", "updated_at"],
  webhook_endpoints: ["enabled", "disabled_reason", "failing_since", "updated_at"]
}

const RECORDED_REFUSALS: Readonly<Record<string, string>> = {
  idempotency_keys: "response_status IS NULL OR response_status < 400",
  user_tokens: "purpose <> 'password_reset'"
}

export type Fingerprint = ReadonlyMap<string, string>

const quote = (identifier: string) => `"${identifier.replaceAll("\"", "\"\"")}"`

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`

/** One statement that hashes every fingerprinted table, built once from the schema's table list. */
export const makeFingerprint = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ readonly tableName: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
    ORDER BY table_name`
  const hashed = tables.map((t) => t.tableName).filter((name) => !BACKGROUND_TABLES.has(name))
  const selects = hashed.map((name) => {
    const row = `(to_jsonb(t) - ARRAY[${(BACKGROUND_COLUMNS[name] ?? []).map(literal).join(", ")}]::text[])::text`
    const where = RECORDED_REFUSALS[name] === undefined ? "" : ` WHERE ${RECORDED_REFUSALS[name]}`
    return `SELECT ${literal(name)} AS table_name, count(*)::int AS row_count, ` +
      `md5(coalesce(string_agg(${row}, ',' ORDER BY ${row}), '')) AS digest FROM ${quote(name)} t${where}`
  })
  const statement = selects.join(" UNION ALL ")
  return sql.unsafe<{ readonly tableName: string; readonly rowCount: number; readonly digest: string }>(statement).pipe(
    Effect.map((rows): Fingerprint => new Map(rows.map((r) => [r.tableName, `${r.rowCount} rows, ${r.digest}`])))
  )
})

/** The tables whose fingerprint differs, with both sides, or an empty list. */
export const changedTables = (before: Fingerprint, after: Fingerprint): ReadonlyArray<string> =>
  [...new Set([...before.keys(), ...after.keys()])].flatMap((table) =>
    before.get(table) === after.get(table) ? [] : [`${table}: ${before.get(table)} -> ${after.get(table)}`]
  )
