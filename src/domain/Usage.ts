/**
 * A tenant's daily document counts (`GET …/usage`): the dashboard's chart. Apart from the
 * documents' contract because it is a read of its own, with its own query.
 */
import { Schema, SchemaTransformation } from "effect"

/** `?days=`: text on the wire holding an integer, documented as that integer (see `PageLimit`). */
export const UsageDays = Schema.String.annotate({
  expected: "a string that will be decoded as a number",
  contentMediaType: "application/json",
  contentSchema: { type: "integer", minimum: 1, maximum: 90, default: 30 }
}).pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)).check(
  Schema.makeFilter((n) => Number.isInteger(n) && n >= 1 && n <= 90, {
    message: "days must be an integer from 1 to 90"
  })
)

export const DEFAULT_USAGE_DAYS = 30

export const UsageParams = Schema.Struct({ days: Schema.optionalKey(UsageDays) })

export const DailyUsage = Schema.Struct({
  date: Schema.String.annotate({ format: "date", description: "The UTC day, YYYY-MM-DD." }),
  live: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
    description: "Live documents created that day, whatever their status."
  }),
  test: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({
    description: "Test documents created that day, whatever their status."
  })
}).annotate({ identifier: "DailyUsage", description: "Documents issued on one day (UTC), live and test." })

export const Usage = Schema.Struct({
  object: Schema.Literal("usage"),
  days: Schema.Array(DailyUsage).annotate({
    description: "One entry per UTC day, oldest first, ending today; days without documents count 0."
  })
}).annotate({ identifier: "Usage", description: "The tenant's documents per day and environment over a period." })
export type Usage = typeof Usage.Type
