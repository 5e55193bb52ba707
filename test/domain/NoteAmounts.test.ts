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
})
