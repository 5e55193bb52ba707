import { describe, expect, it } from "@effect/vitest"
import { quotaPeriod } from "../../src/domain/Time.js"

describe("quotaPeriod", () => {
  it("is the calendar month in UTC, whatever order the moments come in", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["2026-01-31T23:59:59.999Z", "2026-01"],
      ["2026-02-01T00:00:00.000Z", "2026-02"],
      ["2026-01-31T23:59:59.999Z", "2026-01"],
      ["2026-02-28T23:59:59.999Z", "2026-02"],
      ["2026-03-01T00:00:00.000Z", "2026-03"],
      ["2025-12-31T23:59:59.999Z", "2025-12"],
      ["2026-01-01T00:00:00.000Z", "2026-01"],
      // Still February in São Paulo: the period is UTC's.
      ["2026-03-01T01:00:00.000Z", "2026-03"],
      ["2028-02-29T12:00:00.000Z", "2028-02"],
      ["1970-01-01T00:00:00.000Z", "1970-01"]
    ]
    for (const [at, period] of cases) expect(quotaPeriod(new Date(at)), at).toBe(period)
  })

  it("refuses an invalid date as toISOString does", () => {
    expect(() => quotaPeriod(new Date(Number.NaN))).toThrow(RangeError)
  })
})
