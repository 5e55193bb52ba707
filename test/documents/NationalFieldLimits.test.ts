/**
 * Values our schema takes but the note's own fields cannot hold, refused on our field before anything
 * is taken, the same in test and live mode (the simulator does not apply the national schema, so
 * without these a test note would be authorized with an XML no real note can have): rates beyond
 * `pAliq`'s 9.99 or `pAliqPis`/`pAliqCofins`/`pTotTribSN`'s 99.99, or with more than two decimals;
 * and a retention of zero, which withholds nothing and so needs no taker.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { NewDocument } from "../../src/documents/Api.js"
import { taxContentOf } from "../../src/documents/TaxRules.js"
import { b2bWithRetentionsExample } from "../../src/domain/DocumentExamples.js"
import type { SimplesNacional } from "../../src/domain/Tenant.js"

const decode = Schema.decodeUnknownSync(NewDocument)
const contentOf = (body: unknown, regime: SimplesNacional = "not_opted") =>
  taxContentOf(decode(body), regime, "2026-11-10")

const issuesOf = (body: unknown, regime?: SimplesNacional) => {
  const result = contentOf(body, regime)
  return Result.isSuccess(result) ? [] : (result.failure.issues ?? []).map((issue) => issue.path.join("."))
}

const withIssRate = (iss_rate: string) => ({
  ...b2bWithRetentionsExample,
  amounts: { ...b2bWithRetentionsExample.amounts, iss_rate }
})

const withPisCofinsRates = (pis_rate: string, cofins_rate: string) => ({
  ...b2bWithRetentionsExample,
  federal: {
    ...b2bWithRetentionsExample.federal,
    pis_cofins: { ...b2bWithRetentionsExample.federal.pis_cofins, pis_rate, cofins_rate }
  }
})

describe("rates the note's fields can hold", () => {
  it("takes an ISS rate below 10 with at most two decimals, trailing zeros included", () => {
    for (const rate of ["2", "2.5", "2.50", "5.00", "9.99", "2.5000"]) {
      expect(issuesOf(withIssRate(rate)), rate).toEqual([])
    }
  })

  it("refuses an ISS rate pAliq cannot hold, on amounts.iss_rate, saying what it holds", () => {
    for (const rate of ["10", "10.00", "100", "2.125", "2.0001", "9.999"]) {
      expect(issuesOf(withIssRate(rate)), rate).toEqual(["amounts.iss_rate"])
    }
    const refused = contentOf(withIssRate("2.125"))
    expect(Result.isFailure(refused) && refused.failure.issues?.[0]?.message).toBe(
      "amounts.iss_rate becomes `pAliq`, which holds a percentage below 10 with at most 2 decimals (e.g. \"2.50\")."
    )
    // The same for an ME/EPP, whose rate the note carries when the ISS is withheld.
    expect(issuesOf(withIssRate("12"), "me_epp")).toEqual(["amounts.iss_rate"])
    expect(issuesOf(withIssRate("4.5"), "me_epp")).toEqual([])
  })

  it("refuses PIS and COFINS rates of 100 or with more than two decimals, each on its field", () => {
    expect(issuesOf(withPisCofinsRates("0.65", "7.60"))).toEqual([])
    expect(issuesOf(withPisCofinsRates("100", "3.00"))).toEqual(["federal.pis_cofins.pis_rate"])
    expect(issuesOf(withPisCofinsRates("0.65", "1.2345"))).toEqual(["federal.pis_cofins.cofins_rate"])
  })

  it("refuses a Simples approximate rate of 100 (pTotTribSN holds 99.99)", () => {
    const simples = (simples_rate: string) => ({ ...b2bWithRetentionsExample, approximate_taxes: { simples_rate } })
    expect(issuesOf(simples("6.00"), "me_epp")).toEqual([])
    expect(issuesOf(simples("99.99"), "me_epp")).toEqual([])
    expect(issuesOf(simples("100"), "me_epp")).toEqual(["approximate_taxes.simples_rate"])
  })
})

describe("a retention of zero", () => {
  const withoutTaker = (federal: object) => {
    const { taker: _, ...rest } = b2bWithRetentionsExample
    return { ...rest, iss: { withheld_by: "none" }, federal }
  }

  it("withholds nothing, so a note without a taker may state it", () => {
    expect(issuesOf(withoutTaker({ inss_withheld: 0, irrf_withheld: 0, csll_withheld: 0 }))).toEqual([])
  })

  it("while one centavo withheld needs the taker who withholds it", () => {
    expect(issuesOf(withoutTaker({ inss_withheld: 0, irrf_withheld: 1 }))).toEqual(["taker"])
  })
})

describe("a MEI's ISS", () => {
  it("is not withheld: its note would say withheld and state no amount", () => {
    const { amounts: { iss_rate: _, ...amounts }, federal: __, ...rest } = b2bWithRetentionsExample
    const mei = (withheld_by: "taker" | "intermediary" | "none") => ({ ...rest, amounts, iss: { withheld_by } })
    expect(issuesOf(mei("taker"), "mei")).toEqual(["iss.withheld_by"])
    expect(issuesOf(mei("intermediary"), "mei")).toContain("iss.withheld_by")
    expect(issuesOf(mei("none"), "mei")).toEqual([])
  })
})
