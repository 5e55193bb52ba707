import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import {
  Amounts,
  AmountsInput,
  Centavos,
  computeAmounts,
  formatRate,
  InvalidAmounts,
  MAX_CENTAVOS,
  normalizeRate,
  parseRate,
  Rate,
  RATE_SCALE,
  RateTenThousandths
} from "../../src/domain/Money.js"
import { jsonSchemaOf } from "../support/jsonSchema.js"

const ok = (input: Parameters<typeof computeAmounts>[0]) => Result.getOrThrow(computeAmounts(input))
const fail = (input: Parameters<typeof computeAmounts>[0]): InvalidAmounts => {
  const result = computeAmounts(input)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

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

describe("computeAmounts", () => {
  it("derives base, ISS and total", () => {
    expect(ok({ services: 150_000, deductions: 10_000, issRate: "5.00" })).toEqual({
      services: 150_000,
      deductions: 10_000,
      base: 140_000,
      iss_rate: "5.00",
      iss_amount: 7_000,
      total: 150_000
    })
  })

  it("defaults deductions to zero", () => {
    expect(ok({ services: 10_000, issRate: "2" })).toMatchObject({ deductions: 0, base: 10_000, iss_amount: 200 })
    expect(ok({ services: 10_000, deductions: undefined, issRate: "2" }).deductions).toBe(0)
  })

  it("rounds half up to the centavo", () => {
    const iss = (base: number, issRate: string) => ok({ services: base, issRate }).iss_amount
    expect(iss(12_345, "2.00")).toBe(247) // 246.9
    expect(iss(125, "2")).toBe(3) // 2.5 -> up
    expect(iss(75, "2")).toBe(2) // 1.5 -> up (half-even would give 2 as well)
    expect(iss(25, "2")).toBe(1) // 0.5 -> up (half-even would give 0)
    expect(iss(124, "2")).toBe(2) // 2.48
    expect(iss(24, "2")).toBe(0) // 0.48
    expect(iss(1, "49.9999")).toBe(0) // 0.499999
    expect(iss(1, "50")).toBe(1) // 0.5
    expect(iss(33, "3.3333")).toBe(1) // 1.099989
    expect(iss(99_999, "4.9999")).toBe(5_000) // 4999.850001
    expect(iss(12_345, "0")).toBe(0)
  })

  it("treats equivalent rate spellings identically", () => {
    const a = ok({ services: 12_345, issRate: "2.5" })
    const b = ok({ services: 12_345, issRate: "2.50" })
    const c = ok({ services: 12_345, issRate: "2.5000" })
    expect(a).toEqual(b)
    expect(b).toEqual(c)
    expect(a.iss_rate).toBe("2.50")
    expect(a.iss_amount).toBe(309) // 308.625
  })

  it("is exact for large amounts where floating point would not be", () => {
    expect(ok({ services: 1_000_000_000_00, issRate: "5" }).iss_amount).toBe(5_000_000_000)
    expect(ok({ services: MAX_CENTAVOS, issRate: "5" }).iss_amount).toBe(500_000_000_000)
    // 1e13 * 999_999 exceeds 2^53: the float product is not exact, the BigInt one is.
    expect(ok({ services: MAX_CENTAVOS, issRate: "99.9999" }).iss_amount).toBe(9_999_990_000_000)
    expect(Number.isSafeInteger((MAX_CENTAVOS - 1) * 999_999)).toBe(false)
    // 9_999_989_999_999.000001 -> truncation of the tiny fraction must not be lost to float error.
    expect(ok({ services: MAX_CENTAVOS - 1, issRate: "99.9999" }).iss_amount).toBe(9_999_989_999_999)
    // 4_999_999_999_999.5 -> up, at the top of the range.
    expect(ok({ services: MAX_CENTAVOS - 1, issRate: "50" }).iss_amount).toBe(5_000_000_000_000)
    expect(ok({ services: MAX_CENTAVOS, issRate: "100" }).iss_amount).toBe(MAX_CENTAVOS)
  })

  it("property: agrees with an independent calculation on random inputs", () => {
    let seed = 42
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    for (let n = 0; n < 2_000; n++) {
      const services = Math.floor(next() * 1_000_000)
      const deductions = Math.floor(next() * (services + 1))
      const tt = Math.floor(next() * (100 * RATE_SCALE + 1))
      const rate = formatRate(tt)
      const base = services - deductions
      // base * tt < 1e12, so this float expression is exact for these inputs.
      const expected = Math.floor((base * tt + 500_000) / 1_000_000)
      const result = ok({ services, deductions, issRate: rate })
      expect(result.base).toBe(base)
      expect(result.iss_amount, `${base} @ ${rate}`).toBe(expected)
      expect(result.total).toBe(services)
    }
  })

  it("fails when deductions exceed services", () => {
    const error = fail({ services: 100, deductions: 101, issRate: "2" })
    expect(error).toBeInstanceOf(InvalidAmounts)
    expect(error.path).toEqual(["deductions"])
    expect(error.message).toMatch(/deductions/)
    expect(ok({ services: 100, deductions: 100, issRate: "2" })).toMatchObject({ base: 0, iss_amount: 0 })
  })

  it("fails on invalid rates", () => {
    for (const bad of INVALID_RATES) {
      expect(fail({ services: 100, issRate: bad }).path, bad).toEqual(["iss_rate"])
    }
  })

  it("fails on amounts that are not bounded integer centavos", () => {
    expect(fail({ services: 100.5, issRate: "2" }).path).toEqual(["services"])
    expect(fail({ services: -1, issRate: "2" }).path).toEqual(["services"])
    expect(fail({ services: 9_007_199_254_740_991, issRate: "2" }).path).toEqual(["services"])
    expect(fail({ services: MAX_CENTAVOS + 1, issRate: "2" }).path).toEqual(["services"])
    expect(fail({ services: Number.NaN, issRate: "2" }).path).toEqual(["services"])
    expect(fail({ services: 100, deductions: 0.5, issRate: "2" }).path).toEqual(["deductions"])
  })

  it.effect("is usable from Effect code, failing with a typed error", () =>
    Effect.gen(function*() {
      // A Result is no longer an Effect in v4: lift it with Effect.fromResult.
      const amounts = yield* Effect.fromResult(computeAmounts({ services: 1_000, issRate: "3" }))
      expect(amounts.iss_amount).toBe(30)
      const error = yield* Effect.flip(Effect.fromResult(computeAmounts({ services: 1, deductions: 2, issRate: "3" })))
      expect(error._tag).toBe("InvalidAmounts")
    }))
})

describe("Amounts schemas", () => {
  it("AmountsInput validates the request shape", () => {
    const decode = Schema.decodeUnknownResult(AmountsInput)
    expect(Result.isSuccess(decode({ services: 100, iss_rate: "2.00" }))).toBe(true)
    expect(Result.isFailure(decode({ services: 100.5, iss_rate: "2.00" }))).toBe(true)
    expect(Result.isFailure(decode({ services: 100, iss_rate: 2 }))).toBe(true)
    expect(Result.isFailure(decode({ services: 100, iss_rate: "2,00" }))).toBe(true)
  })

  it("computeAmounts output satisfies the Amounts schema and both produce JSON Schemas", () => {
    const amounts = ok({ services: 12_345, deductions: 45, issRate: "2.5" })
    expect(Schema.encodeSync(Amounts)(amounts)).toEqual(amounts)
    expect(() => jsonSchemaOf(Amounts)).not.toThrow()
    expect(() => jsonSchemaOf(AmountsInput)).not.toThrow()
  })
})
