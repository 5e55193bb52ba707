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
 * The repository boundary: a failed statement is the database's defect, not an outcome a caller
 * could act on (constraint violations a caller can act on are mapped to typed errors before this).
 */
export const dieOnSqlError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError.SqlError>, R> =>
  Effect.catchIf(effect, SqlError.isSqlError, Effect.die) as Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
