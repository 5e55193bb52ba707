import { describe, expect, it } from "@effect/vitest"
import { amountDifferences, shownAmounts } from "../../src/domain/NoteAmounts.js"
import { plainAmounts } from "../support/amounts.js"

describe("the note's own amounts", () => {
  const computed = plainAmounts(100_000, "5.00")

  it("are shown once authorized, the computation before", () => {
    expect(shownAmounts(computed, undefined)).toBe(computed)
    const note = { deductions: 0, base: 100_000, iss_rate: "2.00", iss_amount: 2_000, total_withheld: 0, net: 100_000 }
    expect(shownAmounts(computed, note)).toEqual({ ...computed, source: "note", iss_rate: "2.00", iss_amount: 2_000 })
    // A Simples note states no base nor ISS: the base stays ours, the ISS is the note's (none).
    const simples = { ...note, base: null, iss_rate: null, iss_amount: null }
    expect(shownAmounts(computed, simples)).toMatchObject({ base: 100_000, iss_rate: null, iss_amount: null })
  })

  it("differences are listed figure by figure, none when they agree", () => {
    const agreeing = { deductions: 0, base: 100_000, iss_rate: "5", iss_amount: 5_000, total_withheld: 0, net: 100_000 }
    expect(amountDifferences(computed, agreeing)).toEqual([])
    expect(amountDifferences(computed, { ...agreeing, iss_rate: "2.00", iss_amount: 2_000 })).toEqual([
      { field: "iss_rate", computed: 5, note: 2 },
      { field: "iss_amount", computed: 5_000, note: 2_000 }
    ])
  })
  it("withheld figures, discounts and the benefit are the note's when it states them", () => {
    // The intermediary case: 5 % asked and computed, the authority applied 2 % and withheld that.
    const asked = { ...plainAmounts(100_000, "5.00"), iss_withheld: 5_000, total_withheld: 5_000, net: 95_000 }
    const note = {
      unconditional_discount: 0,
      conditional_discount: 0,
      deductions: 0,
      benefit_reduction: 0,
      base: 100_000,
      iss_rate: "2.00",
      iss_amount: 2_000,
      iss_withheld: 2_000,
      federal_withheld: 0,
      total_withheld: 2_000,
      net: 98_000
    }
    const shown = shownAmounts(asked, note)
    expect(shown).toMatchObject({ source: "note", iss_amount: 2_000, iss_withheld: 2_000, total_withheld: 2_000 })
    expect(shown.iss_withheld + shown.federal_withheld).toBe(shown.total_withheld)
    expect(amountDifferences(asked, note).map((difference) => difference.field)).toEqual([
      "iss_rate",
      "iss_amount",
      "iss_withheld",
      "total_withheld",
      "net"
    ])
    // A note recorded before these figures were read: the computed ones stay, and are not compared.
    const { iss_withheld: _, federal_withheld: _f, benefit_reduction: _b, ...older } = note
    expect(shownAmounts(asked, older)).toMatchObject({ iss_withheld: 5_000, federal_withheld: 0 })
    expect(amountDifferences(asked, older).map((difference) => difference.field)).not.toContain("iss_withheld")
  })
})
