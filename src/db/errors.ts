import type { SqlError } from "@effect/sql/SqlError"

/** PostgreSQL's unique_violation, reported the same way by node-postgres and PGlite. */
export const isUniqueViolation = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "23505"
}
