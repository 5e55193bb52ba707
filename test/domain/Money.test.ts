import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import {
  Centavos,
  formatRate,
  MAX_CENTAVOS,
  normalizeRate,
  parseRate,
  Rate,
  RATE_SCALE,
  RateTenThousandths
} from "../../src/domain/Money.js"
import { jsonSchemaOf } from "../support/jsonSchema.js"

const INVALID_RATES = [
  "2,00",
  "-1",
  "101",
  "100.01",
  "100.00001",
  "abc",
  "2.12345",
  "",
  " 2",
  "2 ",
  "2.",
  ".5",
  "1e1",
  "+2",
  "0x10",
  "123",
  "2.0.0",
  "NaN",
  "Infinity",
  "٢"
]

describe("Centavos", () => {
  const decode = Schema.decodeUnknownResult(Centavos)

  it("accepts non-negative safe integers up to the maximum", () => {
    for (const v of [0, 1, 150000, MAX_CENTAVOS]) {
      expect(Result.getOrThrow(decode(v))).toBe(v)
    }
  })

  it("rejects floats, negatives, non-numbers and anything above the maximum", () => {
    for (const v of [1.5, 0.1, -1, Number.NaN, Infinity, MAX_CENTAVOS + 1, 9_007_199_254_740_991, "100", null]) {
      expect(Result.isFailure(decode(v)), String(v)).toBe(true)
    }
  })

  it("documents itself as a bounded integer in JSON Schema", () => {
    expect(jsonSchemaOf(Centavos)).toMatchObject({ type: "integer", minimum: 0, maximum: MAX_CENTAVOS })
  })
})

describe("Rate", () => {
  it("parses to exact ten-thousandths of a percent", () => {
    expect(parseRate("2.00")).toEqual(Result.succeed(20_000))
    expect(parseRate("2.5")).toEqual(Result.succeed(25_000))
    expect(parseRate("2.50")).toEqual(Result.succeed(25_000))
    expect(parseRate("5")).toEqual(Result.succeed(50_000))
    expect(parseRate("0")).toEqual(Result.succeed(0))
    expect(parseRate("0.0001")).toEqual(Result.succeed(1))
    expect(parseRate("3.3333")).toEqual(Result.succeed(33_333))
    expect(parseRate("99.9999")).toEqual(Result.succeed(999_999))
    expect(parseRate("100")).toEqual(Result.succeed(100 * RATE_SCALE))
    expect(parseRate("100.0000")).toEqual(Result.succeed(100 * RATE_SCALE))
    expect(parseRate("02.00")).toEqual(Result.succeed(20_000))
  })

  it("does not inherit binary floating point error (0.07 * 10000 = 700.0000000000001)", () => {
    expect(parseFloat("0.07") * 10_000).not.toBe(700)
    expect(parseRate("0.07")).toEqual(Result.succeed(700))
    expect(parseRate("4.35")).toEqual(Result.succeed(43_500))
  })

  it("rejects malformed and out-of-range rates", () => {
    for (const bad of INVALID_RATES) {
      const result = parseRate(bad)
      expect(Result.isFailure(result), JSON.stringify(bad)).toBe(true)
      expect(Result.isFailure(Schema.decodeUnknownResult(Rate)(bad)), JSON.stringify(bad)).toBe(true)
    }
    expect(Result.isFailure(Schema.decodeUnknownResult(Rate)(2))).toBe(true)
  })

  it("formats canonically with at least two decimals", () => {
    const cases: Array<[string, string]> = [
      ["2", "2.00"],
      ["2.0", "2.00"],
      ["2.00", "2.00"],
      ["02.00", "2.00"],
      ["2.5", "2.50"],
      ["2.50", "2.50"],
      ["2.125", "2.125"],
      ["2.1250", "2.125"],
      ["0", "0.00"],
      ["0.0001", "0.0001"],
      ["100", "100.00"],
      ["99.9999", "99.9999"],
      ["5.1", "5.10"],
      ["5.12", "5.12"],
      ["5.1200", "5.12"]
    ]
    for (const [input, expected] of cases) {
      expect(normalizeRate(input), input).toEqual(Result.succeed(expected))
    }
  })

  it("round-trips every representable rate through format and parse", () => {
    const mismatches: Array<number> = []
    for (let tt = 0; tt <= 100 * RATE_SCALE; tt++) {
      if (Result.getOrUndefined(parseRate(formatRate(tt))) !== tt) mismatches.push(tt)
    }
    expect(mismatches).toEqual([])
  })

  it("RateTenThousandths decodes to the integer and encodes the canonical string", () => {
    expect(Schema.decodeUnknownSync(RateTenThousandths)("2.5")).toBe(25_000)
    expect(Schema.encodeSync(RateTenThousandths)(25_000)).toBe("2.50")
    expect(Result.isFailure(Schema.decodeUnknownResult(RateTenThousandths)("2,5"))).toBe(true)
  })

  it("documents itself as a string with a pattern", () => {
    const schema = jsonSchemaOf(Rate)
    expect(schema.type).toBe("string")
    const pattern = new RegExp(schema.pattern as string)
    expect(pattern.test("2.00")).toBe(true)
    expect(pattern.test("100")).toBe(true)
    expect(pattern.test("101")).toBe(false)
  })
})
