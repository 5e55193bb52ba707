import { Effect } from "effect"
import { SqlError } from "effect/sql"

/** PostgreSQL's SQLSTATE of a failed statement, as both drivers report it on the error's reason. */
const sqlState = (error: unknown): unknown => {
  if (!SqlError.isSqlError(error)) return undefined
  const cause: unknown = error.reason.cause
  return typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
}

/** PostgreSQL's unique_violation (of one constraint, when named), on either database. */
export const isUniqueViolation = (error: SqlError.SqlError, constraint?: string): boolean =>
  error.reason._tag === "UniqueViolation" && (constraint === undefined || error.reason.constraint === constraint)

/**
 * Text PostgreSQL cannot store (a NUL character, an invalid escape): the client's input, not our
 * failure, so it must become a 400 rather than a 500.
 */
export const isUnstorableText = (error: unknown): boolean => {
  const code = sqlState(error)
  return code === "22021" || code === "22P05"
}

/**
 * SQLSTATEs of a database that is going away or not taking connections: connection exceptions
 * (class 08), admin/crash shutdown and "cannot connect now" (57P01–57P03), too many connections.
 */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300"])

/**
 * Whether a failed statement means the database is out of reach (down, restarting, unreachable,
 * or no connection within the timeout) rather than that the statement was wrong: the request can
 * be retried as it is once the database is back (SPEC §2, `503 service_unavailable`).
 */
export const isDatabaseUnavailable = (error: unknown): boolean => {
  if (!SqlError.isSqlError(error)) return false
  if (error.reason._tag === "ConnectionError") return true
  const code = sqlState(error)
  return typeof code === "string" && (code.startsWith("08") || UNAVAILABLE_STATES.has(code))
}

/**
 * The repository boundary: a failed statement is the database's defect, not an outcome a caller
 * could act on (constraint violations a caller can act on are mapped to typed errors before this).
 */
export const dieOnSqlError = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
  Effect.catchIf(effect, SqlError.isSqlError, Effect.die) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
