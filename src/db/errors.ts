import type { SqlError } from "@effect/sql/SqlError"

const pgError = (error: unknown): { code?: unknown; constraint?: unknown } | undefined => {
  const cause: unknown = typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined
  return typeof cause === "object" && cause !== null ? cause : undefined
}

/** PostgreSQL's unique_violation, reported the same way by node-postgres and PGlite. */
export const isUniqueViolation = (error: SqlError, constraint?: string): boolean => {
  const cause = pgError(error)
  return cause?.code === "23505" && (constraint === undefined || cause.constraint === constraint)
}

/**
 * Text PostgreSQL cannot store (a NUL character, an invalid escape): the client's input, not our
 * failure, so it must become a 400 rather than a 500.
 */
export const isUnstorableText = (error: unknown): boolean => {
  const code = pgError(error)?.code
  return code === "22021" || code === "22P05"
}
