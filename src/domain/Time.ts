import { Clock, Effect, Schema, SchemaTransformation } from "effect"

/** The current time from the Effect clock (TestClock in tests), never `new Date()` directly. */
export const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

const brasiliaDate = new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" })

/**
 * The calendar date of a moment in Brasília time (YYYY-MM-DD): the date a Brazilian invoice
 * carries. From 21:00 on, UTC is already on the next day, and a competence date after the emission
 * date is an error at the national system.
 */
export const brazilianDate = (at: Date): string => brasiliaDate.format(at)

/** The last period computed and the moments it spans, [from, to): nearly every call falls in it. */
let lastPeriod = { from: 0, to: 0, period: "" }

/** The quota period of a moment: its calendar month in UTC, `YYYY-MM`. */
export const quotaPeriod = (at: Date): string => {
  const millis = at.getTime()
  if (millis >= lastPeriod.from && millis < lastPeriod.to) return lastPeriod.period
  const from = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)
  lastPeriod = {
    from,
    to: Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1),
    period: at.toISOString().slice(0, 7)
  }
  return lastPeriod.period
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i

/**
 * An RFC 3339 timestamp in a query or body, kept as the client wrote it. Years before 1970 are
 * refused: ids encode their creation time from the epoch, and time filters become id bounds.
 */
export const Timestamp = Schema.String.annotate({ format: "date-time" }).check(
  Schema.makeFilter((s) => RFC3339.test(s) && !Number.isNaN(Date.parse(s)) && Date.parse(s) >= 0, {
    message: "must be an RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z"
  })
)

/**
 * A moment the API answers with: a `Date` in our code, an RFC 3339 UTC string on the wire (as
 * `Schema.Date` encodes it). Its wire side says `format: date-time`, so generated clients type it
 * as a timestamp rather than any string; `Schema.Date` alone documents a bare string.
 */
export const DateTime = Schema.Date.annotate({
  toCodecJson: () =>
    Schema.link<Date>()(
      Schema.String.annotate({
        format: "date-time",
        expected: "a string that will be decoded as a Date",
        examples: ["2026-11-27T09:30:00.000Z"]
      }),
      SchemaTransformation.dateFromString
    )
})
