/** The API's DPS series: what the shipped national schema (TSSerieDPS, 27/07/2026) takes, and nothing else. */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { Series } from "../../src/domain/Document.js"

const decode = Schema.decodeUnknownResult(Series)

describe("series", () => {
  it("takes 1 to 89999, leading zeros not significant", () => {
    expect(decode("1")).toEqual(Result.succeed("1"))
    expect(decode("00042")).toEqual(Result.succeed("42"))
    expect(decode("89999")).toEqual(Result.succeed("89999"))
  })

  it("refuses zero, 90000 and above, and anything but digits", () => {
    for (const series of ["0", "00000", "90000", "99999", "100000", "1a", ""]) {
      expect(Result.isFailure(decode(series)), series).toBe(true)
    }
  })
})
