import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { Amounts, formatRate, type InvalidAmounts, MAX_CENTAVOS, RATE_SCALE } from "../../src/domain/Money.js"
import { computeTaxes, issIsComputed, type TaxComputationInput } from "../../src/domain/TaxComputation.js"
import { jsonSchemaOf } from "../support/jsonSchema.js"

type Input = Partial<TaxComputationInput> & { readonly services: number }
const full = (input: Input): TaxComputationInput => ({ issComputed: true, issWithheld: false, ...input })
const ok = (input: Input) => Result.getOrThrow(computeTaxes(full(input)))
const fail = (input: Input): InvalidAmounts => {
  const result = computeTaxes(full(input))
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("computeTaxes: the plain note", () => {
  it("derives base, ISS, net value and total", () => {
    expect(ok({ services: 150_000, deductions: 10_000, issRate: "5.00" })).toEqual({
      source: "computed",
      services: 150_000,
      unconditional_discount: 0,
      conditional_discount: 0,
      deductions: 10_000,
      benefit_reduction: 0,
      base: 140_000,
      iss_rate: "5.00",
      iss_amount: 7_000,
      iss_withheld: 0,
      federal_withheld: 0,
      total_withheld: 0,
      net: 150_000,
      total: 150_000
    })
  })

  it("rounds half up to the centavo", () => {
    const iss = (base: number, issRate: string) => ok({ services: base, issRate }).iss_amount
    expect(iss(12_345, "2.00")).toBe(247) // 246.9
    expect(iss(125, "2")).toBe(3) // 2.5 -> up
    expect(iss(25, "2")).toBe(1) // 0.5 -> up (half-even would give 0)
    expect(iss(124, "2")).toBe(2) // 2.48
    expect(iss(1, "49.9999")).toBe(0) // 0.499999
    expect(iss(1, "50")).toBe(1) // 0.5
    expect(iss(99_999, "4.9999")).toBe(5_000) // 4999.850001
    expect(iss(12_345, "0")).toBe(0)
  })

  it("is exact for large amounts where floating point would not be", () => {
    expect(ok({ services: MAX_CENTAVOS, issRate: "99.9999" }).iss_amount).toBe(9_999_990_000_000)
    expect(ok({ services: MAX_CENTAVOS - 1, issRate: "99.9999" }).iss_amount).toBe(9_999_989_999_999)
    expect(ok({ services: MAX_CENTAVOS - 1, issRate: "50" }).iss_amount).toBe(5_000_000_000_000)
  })

  it("leaves the ISS out when the note does not compute it or no rate is known", () => {
    expect(ok({ services: 10_000, issRate: "2", issComputed: false })).toMatchObject({ iss_amount: null, net: 10_000 })
    expect(ok({ services: 10_000 })).toMatchObject({ iss_rate: null, iss_amount: null, base: 10_000 })
  })

  it("fails on amounts that are not bounded integer centavos, naming the document's field", () => {
    expect(fail({ services: 100.5, issRate: "2" }).path).toEqual(["amounts", "services"])
    expect(fail({ services: -1 }).path).toEqual(["amounts", "services"])
    expect(fail({ services: MAX_CENTAVOS + 1 }).path).toEqual(["amounts", "services"])
    expect(fail({ services: 100, deductions: 0.5 }).path).toEqual(["amounts", "deductions"])
    expect(fail({ services: 100, federal: { irrf: -1 } }).path).toEqual(["federal", "irrf_withheld"])
    for (const bad of ["2,00", "-1", "101", "2.12345", "", "abc"]) {
      expect(fail({ services: 100, issRate: bad }).path, bad).toEqual(["amounts", "iss_rate"])
    }
  })

  it("satisfies the Amounts schema, which has a JSON Schema", () => {
    const amounts = ok({ services: 12_345, deductions: 45, issRate: "2.5" })
    expect(Schema.encodeSync(Amounts)(amounts)).toEqual(amounts)
    expect(() => jsonSchemaOf(Amounts)).not.toThrow()
  })
})

describe("computeTaxes: worked by hand", () => {
  it("a B2B note: ISS withheld by the taker and every federal retention, the shipped schema's vTotalRet", () => {
    // R$ 10.000,00, unconditional discount 100,00 -> base 9.900,00; ISS 5 % = 495,00 (withheld).
    // INSS 11 % of 10.000 = 1.100,00; IRRF 1,5 % = 150,00; CSLL 1 % = 100,00.
    // vTotalRet = vRetCP + vRetIRRF + vRetCSLL + ISS withheld = 1.100 + 150 + 100 + 495 = 1.845,00.
    // vLiq = vServ - vDescCond - vDescIncond - vTotalRet = 10.000 - 0 - 100 - 1.845 = 8.055,00.
    const amounts = ok({
      services: 1_000_000,
      unconditionalDiscount: 10_000,
      issRate: "5",
      issWithheld: true,
      federal: { inss: 110_000, irrf: 15_000, csll: 10_000 }
    })
    expect(amounts).toMatchObject({
      base: 990_000,
      iss_amount: 49_500,
      iss_withheld: 49_500,
      federal_withheld: 135_000,
      total_withheld: 184_500,
      net: 805_500
    })
  })

  it("both discounts and no ISS withheld: the ISS is not a retention", () => {
    // R$ 2.000,00, unconditional 150,00, conditional 50,00; ISS 2 % of 1.850,00 = 37,00, not withheld.
    // IRRF 30,00 and CSLL 20,00: vTotalRet 50,00; vLiq = 2.000 - 50 - 150 - 50 = 1.750,00.
    expect(
      ok({
        services: 200_000,
        unconditionalDiscount: 15_000,
        conditionalDiscount: 5_000,
        issRate: "2",
        federal: { irrf: 3_000, csll: 2_000 }
      })
    ).toMatchObject({ base: 185_000, iss_amount: 3_700, iss_withheld: 0, total_withheld: 5_000, net: 175_000 })
  })

  it("a conditional discount lowers the net value, not the ISS base", () => {
    // R$ 1.000,00 with R$ 50,00 conditional: base 1.000,00, ISS 3 % = 30,00, net 950,00.
    expect(ok({ services: 100_000, conditionalDiscount: 5_000, issRate: "3" })).toMatchObject({
      base: 100_000,
      iss_amount: 3_000,
      net: 95_000
    })
  })

  it("deductions by percentage, by documents, and a municipal benefit", () => {
    // pDR 40 % of R$ 333,33 = 133,332 -> 133,33; base 200,00.
    expect(ok({ services: 33_333, deductionRate: "40", issRate: "2" })).toMatchObject({
      deductions: 13_333,
      base: 20_000,
      iss_amount: 400
    })
    expect(ok({ services: 100_000, deductionDocuments: [10_000, 2_550] })).toMatchObject({
      deductions: 12_550,
      base: 87_450
    })
    // Benefit 10 % of (1.000 - 100 unconditional) = 90,00 -> base 810,00; ISS 2 % = 16,20.
    expect(ok({ services: 100_000, unconditionalDiscount: 10_000, benefitReductionRate: "10", issRate: "2" }))
      .toMatchObject({ benefit_reduction: 9_000, base: 81_000, iss_amount: 1_620 })
  })

  it("refuses what would make a value negative, on the field responsible", () => {
    expect(fail({ services: 100, unconditionalDiscount: 101 }).path).toEqual(["amounts", "unconditional_discount"])
    expect(fail({ services: 100, unconditionalDiscount: 60, conditionalDiscount: 50 }).path)
      .toEqual(["amounts", "conditional_discount"])
    expect(fail({ services: 100, unconditionalDiscount: 60, deductions: 50 }).path).toEqual(["amounts", "deductions"])
    expect(fail({ services: 100, deductionDocuments: [60, 50] }).path).toEqual(["amounts", "deduction_documents"])
    expect(fail({ services: 100, benefitReductionAmount: 101 }).path)
      .toEqual(["iss", "municipal_benefit", "reduction_amount"])
    const negative = fail({ services: 1_000, conditionalDiscount: 500, federal: { irrf: 400, csll: 200 } })
    expect(negative.path).toEqual(["federal"])
    expect(negative.message).toMatch(/net value would be negative/)
    // Exactly the payable value withheld is a net value of zero, not an error.
    expect(ok({ services: 1_000, conditionalDiscount: 500, federal: { irrf: 500 } }).net).toBe(0)
    // The ISS withheld alone (its base is not lowered by a conditional discount) names the ISS, not `federal`.
    const issAlone = fail({
      services: 100_000,
      conditionalDiscount: 99_000,
      issRate: "5",
      issComputed: true,
      issWithheld: true
    })
    expect(issAlone.path).toEqual(["iss", "withheld_by"])
  })

  it("refuses a discount as large as the services' value, each on its own (E0431, E0432)", () => {
    expect(fail({ services: 100_000, unconditionalDiscount: 100_000 })).toMatchObject({
      path: ["amounts", "unconditional_discount"],
      message: "amounts.unconditional_discount must be less than the services' value"
    })
    expect(fail({ services: 100_000, conditionalDiscount: 100_000 }).path)
      .toEqual(["amounts", "conditional_discount"])
    // One centavo less is a note; two discounts that together reach the value are too (net zero).
    expect(ok({ services: 100_000, unconditionalDiscount: 99_999 }).base).toBe(1)
    expect(ok({ services: 100_000, unconditionalDiscount: 50_000, conditionalDiscount: 50_000 }).net).toBe(0)
  })
})

describe("issIsComputed", () => {
  it("outside the Simples always, within it only when withheld, never for an untaxed service", () => {
    expect(issIsComputed({ regime: "not_opted", taxable: true, withheld: false })).toBe(true)
    expect(issIsComputed({ regime: "me_epp", taxable: true, withheld: false })).toBe(false)
    expect(issIsComputed({ regime: "me_epp", taxable: true, withheld: true })).toBe(true)
    expect(issIsComputed({ regime: "mei", taxable: true, withheld: false })).toBe(false)
    expect(issIsComputed({ regime: "not_opted", taxable: false, withheld: false })).toBe(false)
  })
})

const centavos = (max: number) => fc.integer({ min: 0, max })
// ISS rates up to 10 % (the schema's pAliq takes at most 9.99), with 4 decimals.
const rate = fc.integer({ min: 0, max: 10 * RATE_SCALE }).map(formatRate)

/** A consistent note: discounts ≤ 70 %, ISS ≤ 10 %, retentions ≤ 15 %, so its parts fit in the services' value. */
const note = fc.record({
  services: fc.integer({ min: 1, max: 1_000_000_000 }),
  unconditionalShare: fc.double({ min: 0, max: 0.5, noNaN: true }),
  conditionalShare: fc.double({ min: 0, max: 0.2, noNaN: true }),
  deductionShare: fc.double({ min: 0, max: 0.4, noNaN: true }),
  rate: fc.option(rate, { nil: undefined }),
  regime: fc.constantFrom("not_opted" as const, "mei" as const, "me_epp" as const),
  taxable: fc.boolean(),
  withheld: fc.boolean(),
  retentionShares: fc.array(fc.double({ min: 0, max: 0.05, noNaN: true }), { minLength: 3, maxLength: 3 })
}).map((n) => {
  const part = (share: number) => Math.floor(n.services * share)
  const [inss, irrf, csll] = n.retentionShares.map(part) as [number, number, number]
  const withheld = n.taxable && n.withheld
  return {
    services: n.services,
    unconditionalDiscount: part(n.unconditionalShare),
    conditionalDiscount: part(n.conditionalShare),
    deductions: part(n.deductionShare),
    issRate: n.rate,
    issComputed: issIsComputed({ regime: n.regime, taxable: n.taxable, withheld }),
    issWithheld: withheld,
    federal: { inss, irrf, csll }
  } satisfies TaxComputationInput
})

describe("computeTaxes: properties across regimes and combinations", () => {
  it("every figure is an exact, non-negative integer number of centavos, and net ≤ services", () => {
    fc.assert(fc.property(note, (input) => {
      const amounts = Result.getOrThrow(computeTaxes(input))
      for (const value of Object.values(amounts)) {
        if (typeof value === "number") expect(Number.isSafeInteger(value) && value >= 0).toBe(true)
      }
      expect(amounts.net).toBeLessThanOrEqual(amounts.services)
      expect(amounts.base).toBeLessThanOrEqual(amounts.services)
    }))
  })

  it("the retentions sum up and the net value is the layout's vLiq", () => {
    fc.assert(fc.property(note, (input) => {
      const amounts = Result.getOrThrow(computeTaxes(input))
      const f = input.federal
      const federal = f.inss + f.irrf + f.csll
      expect(amounts.federal_withheld).toBe(federal)
      expect(amounts.total_withheld).toBe(amounts.iss_withheld + federal)
      expect(amounts.net).toBe(
        input.services - input.unconditionalDiscount - input.conditionalDiscount - amounts.total_withheld
      )
      expect(amounts.base).toBe(input.services - input.unconditionalDiscount - input.deductions)
      expect(amounts.iss_withheld).toBe(input.issWithheld ? amounts.iss_amount ?? 0 : 0)
    }))
  })

  it("the ISS is within half a centavo of the exact product, rounding half up", () => {
    fc.assert(fc.property(note, (input) => {
      const amounts = Result.getOrThrow(computeTaxes(input))
      if (amounts.iss_amount === null) {
        expect(input.issComputed && input.issRate !== undefined).toBe(false)
        return
      }
      // exact ISS in millionths of a centavo: base x rate (ten-thousandths of a percent).
      const exact = BigInt(amounts.base) * BigInt(Math.round(Number(amounts.iss_rate) * RATE_SCALE))
      const rounded = BigInt(amounts.iss_amount) * 1_000_000n
      expect(rounded - exact).toBeLessThanOrEqual(500_000n)
      expect(exact - rounded).toBeLessThan(500_000n)
    }))
  })

  it("whatever the inputs, it succeeds with a non-negative net value or fails naming a field", () => {
    fc.assert(fc.property(
      centavos(100_000),
      centavos(100_000),
      centavos(100_000),
      centavos(100_000),
      centavos(100_000),
      (services, unconditional, conditional, deductions, irrf) => {
        const result = computeTaxes({
          services,
          unconditionalDiscount: unconditional,
          conditionalDiscount: conditional,
          deductions,
          issRate: "5",
          issComputed: true,
          issWithheld: true,
          federal: { irrf }
        })
        if (Result.isSuccess(result)) expect(result.success.net).toBeGreaterThanOrEqual(0)
        else expect(result.failure.path.length).toBeGreaterThan(0)
      }
    ))
  })
})
