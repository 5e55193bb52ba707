import { Clock, Effect, Schema } from "effect"

/** The current time from the Effect clock (TestClock in tests), never `new Date()` directly. */
export const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

const brasiliaDate = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" })

/**
 * The calendar date of a moment in Brasília time (YYYY-MM-DD): the date a Brazilian invoice
 * carries. From 21:00 on, UTC is already on the next day, and a competence date after the emission
 * date is an error at the national system.
 */
export const brazilianDate = (at: Date): string => brasiliaDate.format(at)

/** The quota period of a moment: its calendar month in UTC, `YYYY-MM`. */
export const quotaPeriod = (at: Date) => at.toISOString().slice(0, 7)

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

/**
 * An RFC 3339 timestamp in a query or body, kept as the client wrote it. Years before 1970 are
 * refused: ids encode their creation time from the epoch, and time filters become id bounds.
 */
export const Timestamp = Schema.String.check(
  Schema.makeFilter((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)) && Date.parse(s) >= 0, {
    message: "must be an RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z"
  })
)
