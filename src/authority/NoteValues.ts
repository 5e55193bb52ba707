/**
 * What an authorized NFS-e says about its amounts, read from its `valores` and from the DPS it
 * embeds (discounts, who withholds the ISS, the federal retentions), either authority's note: the
 * national system's or the simulator's, both NFS-e v1.01.
 */
import * as Result from "effect/Result"
import type { NoteAmounts } from "../domain/NoteAmounts.js"
import { type ParsedNfse, readNfse } from "./sefin/Nfse.js"
import { centavosOf } from "./sefin/NfseValues.js"

const money = (value: string | undefined): number | null => value === undefined ? null : centavosOf(value) ?? null

/** The note's own figures; undefined when the XML is not a readable NFS-e or has no net value. */
export const noteAmountsOf = (nfseXml: string): NoteAmounts | undefined => {
  const read = readNfse(nfseXml)
  return Result.isFailure(read) ? undefined : noteAmountsOfNote(read.success)
}

/** The same, from a note already read (an adapter that read it to check it need not read it twice). */
export const noteAmountsOfNote = (note: ParsedNfse): NoteAmounts | undefined => {
  const amounts = note.amounts
  const declared = note.dps.amounts
  const net = money(amounts.net)
  if (net === null) return undefined
  const issAmount = money(amounts.issAmount)
  const issWithheld = declared.issRetention === "2" || declared.issRetention === "3"
  return {
    unconditional_discount: money(declared.unconditionalDiscount) ?? 0,
    conditional_discount: money(declared.conditionalDiscount) ?? 0,
    deductions: money(amounts.deductions) ?? 0,
    benefit_reduction: money(amounts.benefitReduction) ?? 0,
    base: money(amounts.base),
    iss_rate: amounts.base === undefined ? null : amounts.issRate ?? null,
    iss_amount: issAmount,
    iss_withheld: issWithheld ? issAmount ?? 0 : 0,
    federal_withheld: (money(declared.inss) ?? 0) + (money(declared.irrf) ?? 0) + (money(declared.csll) ?? 0),
    total_withheld: money(amounts.totalWithheld) ?? 0,
    net
  }
}
