/**
 * The ibs_cbs JSON and its computation: what the official tables refuse is refused naming our
 * field; the 2026 test rates are applied over the base the schema documents (service less
 * unconditional discount, reimbursements, ISS, PIS and COFINS), with the class's reductions, each
 * amount rounded half-even to the centavo, exactly for any amount up to MAX_CENTAVOS.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import fc from "fast-check"
import { decodeIbsCbs, type IbsCbsIssue } from "../../src/domain/IbsCbs.js"
import { computeIbsCbs, divideHalfEven, ibsCbsBase, percentToHundredths } from "../../src/domain/IbsCbsAmounts.js"
import { ibsCbsRatesFor, PUBLISHED_RATES, standInRatesFor } from "../../src/domain/IbsCbsRates.js"
import { NFSE_TAX_CLASSES, TAX_SITUATIONS } from "../../src/domain/IbsCbsTables.js"
import { MAX_CENTAVOS } from "../../src/domain/Money.js"

const minimal = { operation_indicator: "100301", cst: "000", class_code: "000001" }

const issuesOf = (json: unknown): ReadonlyArray<IbsCbsIssue> => {
  const result = decodeIbsCbs(json)
  return Result.isFailure(result) ? result.failure : []
}

describe("ibs_cbs decoding", () => {
  it("accepts the minimal group and every optional part", () => {
    expect(decodeIbsCbs(minimal)).toEqual(Result.succeed(minimal))
    const full = {
      ...minimal,
      personal_use: true,
      destination: { tax_id: "45997418000153", name: "Filial", email: "a@example.com.br" },
      cst: "515",
      class_code: "515001",
      deferral: { state_ibs_percent: "100", municipal_ibs_percent: "0", cbs_percent: "33.33" }
    }
    expect(Result.isSuccess(decodeIbsCbs(full))).toBe(true)
  })

  it("refuses codes outside the official tables, naming our field", () => {
    expect(issuesOf({ ...minimal, cst: "999", class_code: "999001" })).toContainEqual({
      path: ["ibs_cbs", "cst"],
      message: "ibs_cbs.cst 999 is not in the official CST table"
    })
    expect(issuesOf({ ...minimal, class_code: "200029" })).toEqual([{
      path: ["ibs_cbs", "class_code"],
      message: "ibs_cbs.class_code 200029 does not belong to CST 000"
    }])
    // 000002 (exploração de via) is a real class, but only for the NFS-e Via.
    expect(issuesOf({ ...minimal, class_code: "000002" })).toEqual([{
      path: ["ibs_cbs", "class_code"],
      message: "ibs_cbs.class_code 000002 is not a classification the official table allows on an NFS-e"
    }])
  })

  it("demands gTribRegular exactly where the class does, and deferral only where the CST admits it", () => {
    expect(issuesOf({ ...minimal, cst: "550", class_code: "550016" })).toEqual([{
      path: ["ibs_cbs", "regular_taxation"],
      message: "ibs_cbs.regular_taxation is required for class_code 550016"
    }])
    expect(issuesOf({ ...minimal, regular_taxation: { cst: "000", class_code: "000001" } })).toEqual([{
      path: ["ibs_cbs", "regular_taxation"],
      message: "ibs_cbs.regular_taxation is not allowed for class_code 000001"
    }])
    expect(
      issuesOf({ ...minimal, cst: "550", class_code: "550016", regular_taxation: { cst: "000", class_code: "010001" } })
    )
      .toEqual([{
        path: ["ibs_cbs", "regular_taxation", "class_code"],
        message: "ibs_cbs.regular_taxation.class_code 010001 does not belong to CST 000"
      }])
    const deferral = { state_ibs_percent: "10", municipal_ibs_percent: "10", cbs_percent: "10" }
    expect(issuesOf({ ...minimal, deferral })).toEqual([{
      path: ["ibs_cbs", "deferral"],
      message: "ibs_cbs.deferral is not allowed for CST 000 (Tributação integral)"
    }])
  })

  it("needs exactly one identification of a destination", () => {
    for (const destination of [{ name: "Sem id" }, { name: "Dois", tax_id: "45997418000153", nif: "X1" }]) {
      expect(issuesOf({ ...minimal, destination })).toEqual([{
        path: ["ibs_cbs", "destination"],
        message: "ibs_cbs.destination needs exactly one of tax_id or nif"
      }])
    }
  })

  it("refuses malformed values with a message that names the field", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ ...minimal, operation_indicator: "1003" }, "ibs_cbs.operation_indicator must be the 6-digit"],
      [{ ...minimal, cst: "00" }, "ibs_cbs.cst must be the 3-digit"],
      [{ ...minimal, class_code: "1" }, "ibs_cbs.class_code must be the 6-digit"],
      [{
        ...minimal,
        cst: "515",
        class_code: "515001",
        deferral: { state_ibs_percent: "101", municipal_ibs_percent: "0", cbs_percent: "0" }
      }, "percentage"],
      [{ ...minimal, destination: { tax_id: "11111111111111", name: "X" } }, "CNPJ"],
      [{ ...minimal, rate: "0.90" }, "rate"],
      [{ cst: "000", class_code: "000001" }, "operation_indicator"]
    ]
    for (const [json, text] of cases) {
      const issues = issuesOf(json)
      expect(issues.length, JSON.stringify(json)).toBeGreaterThan(0)
      expect(issues.map((i) => i.message).join("\n"), JSON.stringify(json)).toContain(text)
    }
  })

  it("ships tables whose every NFS-e class belongs to a known CST", () => {
    expect(TAX_SITUATIONS.size).toBe(18)
    for (const code of NFSE_TAX_CLASSES.keys()) expect(TAX_SITUATIONS.has(code.slice(0, 3)), code).toBe(true)
  })
})

const taxed = NFSE_TAX_CLASSES.get("000001")!
const base2026 = {
  competence: "2026-11-10",
  unconditionalDiscount: 0,
  reimbursements: 0,
  iss: 0,
  pis: 0,
  cofins: 0
}

/** base × rate / 10 000, half-even, computed the slow way with exact rationals. */
const reference = (base: bigint, rate: bigint): bigint => {
  const n = base * rate
  const floor = n / 10_000n
  const rest = n - floor * 10_000n
  if (rest * 2n > 10_000n) return floor + 1n
  if (rest * 2n < 10_000n) return floor
  return floor % 2n === 0n ? floor : floor + 1n
}

describe("IBS/CBS computation", () => {
  it("uses 2026's test rates, refuses 2025 (E0850), and knows 2027's rates are not all published", () => {
    expect(ibsCbsRatesFor("2026-01-01")).toEqual(Result.succeed({ stateIbs: 10, municipalIbs: 0, cbs: 90 }))
    const early = ibsCbsRatesFor("2025-12-31")
    expect(Result.isFailure(early) && [early.failure.reason, early.failure.message]).toEqual([
      "before_reform",
      "IBS/CBS can be declared from the 2026 competence on (E0850), not 2025-12-31"
    ])
    for (const competence of ["2027-01-01", "2028-12-31", "2031-06-01"]) {
      const later = ibsCbsRatesFor(competence)
      expect(Result.isFailure(later) && later.failure.reason, competence).toBe("unpublished")
    }
  })

  it("ships the rates the law fixes: 2026's, and the IBS of 2027 and 2028 (0.05 % + 0.05 %), no CBS after 2026", () => {
    expect([...PUBLISHED_RATES.entries()]).toEqual([
      [2026, { stateIbs: 10, municipalIbs: 0, cbs: 90 }],
      [2027, { stateIbs: 5, municipalIbs: 5 }],
      [2028, { stateIbs: 5, municipalIbs: 5 }]
    ])
  })

  it("a stand-in for the authority carries each part's latest published rate forward, never before 2026", () => {
    expect(standInRatesFor("2026-06-01")).toEqual(Result.succeed({ stateIbs: 10, municipalIbs: 0, cbs: 90 }))
    expect(standInRatesFor("2027-01-01")).toEqual(Result.succeed({ stateIbs: 5, municipalIbs: 5, cbs: 90 }))
    expect(standInRatesFor("2030-01-01")).toEqual(Result.succeed({ stateIbs: 5, municipalIbs: 5, cbs: 90 }))
    expect(Result.isFailure(standInRatesFor("2025-12-31"))).toBe(true)
  })

  it("from 2027: the base no longer deducts PIS/COFINS, the total adds the taxes, only the rates are missing", () => {
    const input = {
      ...base2026,
      competence: "2027-03-01",
      services: 100_000,
      iss: 2_000,
      pis: 650,
      cofins: 3_000,
      netValue: 98_000,
      taxClass: NFSE_TAX_CLASSES.get("000001")!
    }
    const own = computeIbsCbs(input)
    expect(Result.isFailure(own) && own.failure.reason).toBe("unpublished")
    const stood = Result.getOrThrow(computeIbsCbs(input, standInRatesFor))
    // vBC 980.00 (no PIS/COFINS after 2026): CBS 0.9 % 8.82, IBS 0.05 % + 0.05 % 0.49 each.
    expect([stood.base, stood.cbs.amount, stood.stateIbs.amount, stood.municipalIbs.amount]).toEqual([
      98_000,
      882,
      49,
      49
    ])
    expect(stood.noteTotal).toBe(98_000 + 882 + 98)
    // What the note itself breaks is said before the missing rates.
    const negative = computeIbsCbs({ ...input, services: 1_000 })
    expect(Result.isFailure(negative) && negative.failure.reason).toBe("not_computable")
    const early = computeIbsCbs({ ...input, competence: "2025-12-01" })
    expect(Result.isFailure(early) && early.failure.reason).toBe("before_reform")
  })

  it("deducts the unconditional discount, reimbursements, ISS, PIS and COFINS in 2026, only ISS after", () => {
    const input = {
      ...base2026,
      services: 100_000,
      unconditionalDiscount: 1_000,
      reimbursements: 2_000,
      iss: 5_000,
      pis: 650,
      cofins: 3_000
    }
    expect(ibsCbsBase(input)).toEqual(Result.succeed(88_350))
    expect(ibsCbsBase({ ...input, competence: "2027-01-01" })).toEqual(Result.succeed(92_000))
    expect(Result.isFailure(ibsCbsBase({ ...input, services: 11_649 }))).toBe(true)
    expect(ibsCbsBase({ ...input, services: 11_650 })).toEqual(Result.succeed(0))
  })

  it("applies the class's reductions to the rates, and no rate to a class without one", () => {
    const health = Result.getOrThrow(
      computeIbsCbs({ ...base2026, services: 100_000, netValue: 100_000, taxClass: NFSE_TAX_CLASSES.get("200029")! })
    )
    expect([health.cbs.effectiveRate, health.stateIbs.effectiveRate, health.cbs.amount, health.stateIbs.amount])
      .toEqual([36, 4, 360, 40])
    const immune = Result.getOrThrow(
      computeIbsCbs({ ...base2026, services: 100_000, netValue: 100_000, taxClass: NFSE_TAX_CLASSES.get("410004")! })
    )
    expect([immune.cbs.rate, immune.cbs.effectiveRate, immune.cbs.amount, immune.ibsTotal]).toEqual([90, 0, 0, 0])
    const fixed = computeIbsCbs({
      ...base2026,
      services: 100,
      netValue: 100,
      taxClass: NFSE_TAX_CLASSES.get("221001")!
    })
    expect(Result.isFailure(fixed)).toBe(true)
  })

  it("rounds halves to even: 0.9 % of R$ 0,50 is 0,45 centavo → 0; of R$ 2,50 it is 2,25 → 2; of R$ 1,50, 1,35 → 1", () => {
    expect(divideHalfEven(5n, 10n)).toBe(0n)
    expect(divideHalfEven(15n, 10n)).toBe(2n)
    expect(divideHalfEven(25n, 10n)).toBe(2n)
    expect(divideHalfEven(26n, 10n)).toBe(3n)
    // 0.1 % of R$ 5,00 = 0,5 centavo → 0; of R$ 15,00 = 1,5 → 2
    const at = (services: number) =>
      Result.getOrThrow(computeIbsCbs({ ...base2026, services, netValue: services, taxClass: taxed })).stateIbs.amount
    expect([at(500), at(1_500)]).toEqual([0, 2])
  })

  it("property: every amount is base × effective rate rounded half-even, exactly up to MAX_CENTAVOS", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_CENTAVOS }),
        fc.constantFrom(...[...NFSE_TAX_CLASSES.values()].filter((c) => c.rateKind !== "fixed")),
        (services, taxClass) => {
          const c = Result.getOrThrow(computeIbsCbs({ ...base2026, services, netValue: services, taxClass }))
          const taxedClass = taxClass.rateKind !== "none"
          expect(c.base).toBe(services)
          expect(c.cbs.effectiveRate).toBe(
            taxedClass ? Number(reference(90n, BigInt(10_000 - taxClass.cbsReduction))) : 0
          )
          expect(BigInt(c.cbs.amount)).toBe(reference(BigInt(services), BigInt(c.cbs.effectiveRate)))
          expect(BigInt(c.stateIbs.amount)).toBe(reference(BigInt(services), BigInt(c.stateIbs.effectiveRate)))
          expect(c.municipalIbs.amount).toBe(0)
          expect(c.ibsTotal).toBe(c.stateIbs.amount + c.municipalIbs.amount)
          expect(c.noteTotal).toBe(services)
          // Never more than half a centavo from the exact product.
          expect(Math.abs(c.cbs.amount * 10_000 - services * c.cbs.effectiveRate)).toBeLessThanOrEqual(5_000)
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("property: the base is the service less every deduction, or an error when they exceed it", () => {
    fc.assert(
      fc.property(
        fc.record({
          services: fc.integer({ min: 0, max: 10_000_000_00 }),
          unconditionalDiscount: fc.integer({ min: 0, max: 1_000_000_00 }),
          reimbursements: fc.integer({ min: 0, max: 1_000_000_00 }),
          iss: fc.integer({ min: 0, max: 500_000_00 }),
          pis: fc.integer({ min: 0, max: 100_000_00 }),
          cofins: fc.integer({ min: 0, max: 500_000_00 })
        }),
        (v) => {
          const expected = v.services - v.unconditionalDiscount - v.reimbursements - v.iss - v.pis - v.cofins
          const result = ibsCbsBase({ ...v, competence: "2026-06-30" })
          if (expected < 0) expect(Result.isFailure(result)).toBe(true)
          else expect(result).toEqual(Result.succeed(expected))
        }
      ),
      { numRuns: 1_000 }
    )
  })

  it("property: a deferral splits each tax into deferred + due, and more deferral never means more tax", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000_000_00 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (services, lower, upper) => {
          const [low, high] = lower <= upper ? [lower, upper] : [upper, lower]
          const run = (pct: number) =>
            Result.getOrThrow(computeIbsCbs({
              ...base2026,
              services,
              netValue: services,
              taxClass: NFSE_TAX_CLASSES.get("515001")!,
              deferral: { stateIbs: pct, municipalIbs: pct, cbs: pct }
            }))
          const a = run(low)
          const b = run(high)
          const none = run(0)
          expect(a.cbs.deferred + a.cbs.amount).toBe(none.cbs.amount)
          expect(a.stateIbs.deferred + a.stateIbs.amount).toBe(none.stateIbs.amount)
          expect(b.cbs.amount).toBeLessThanOrEqual(a.cbs.amount)
          expect(run(10_000).cbs.amount).toBe(0)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("reads percentages as hundredths", () => {
    expect(["0", "12.5", "33.33", "100", "100.00"].map(percentToHundredths)).toEqual([0, 1250, 3333, 10000, 10000])
  })
})
