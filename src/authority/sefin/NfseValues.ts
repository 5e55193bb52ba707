/**
 * The NFS-e's `valores` as the authority writes them from a DPS: the local authority and the
 * simulator compute them with the service's own computation (TaxComputation.ts), which follows the
 * layout's formulas, so a real note and ours carry the same elements for the same DPS.
 */
import * as Result from "effect/Result"
import { computeIbsCbsForGroup, type IbsCbsComputation } from "../../domain/IbsCbsAmounts.js"
import { standInRatesFor } from "../../domain/IbsCbsRates.js"
import type { NoteAmounts } from "../../domain/NoteAmounts.js"
import { computeTaxes, issIsComputed } from "../../domain/TaxComputation.js"
import { formatCentavos, leaf, node } from "../xml/XmlText.js"
import type { ParsedDps } from "./DpsRead.js"
import { formatRateForXml } from "./DpsValues.js"
import { buildNfseIbsCbs } from "./IbsCbs.js"

/** "1500.00" → 150000; undefined for anything that is not a TSDec15V2 amount. */
export const centavosOf = (amount: string): number | undefined => {
  const match = /^(\d{1,15})(?:\.(\d{2}))?$/.exec(amount)
  return match === null ? undefined : Number(match[1]) * 100 + Number(match[2] ?? "0")
}

const regimeOf = (opSimpNac: string) => opSimpNac === "2" ? "mei" : opSimpNac === "3" ? "me_epp" : "not_opted"

/**
 * What the authority computes from a DPS (TaxComputation.ts, the layout's formulas): the rate is
 * the DPS's `pAliq` or, outside the Simples Nacional, the municipality's. A failure is a DPS the
 * authority refuses (LocalSefin checks the values before building the note).
 */
export const noteAmountsOf = (dps: ParsedDps, municipalRate: string | undefined) => {
  const amount = (value: string | undefined) => value === undefined ? undefined : centavosOf(value)
  const regime = regimeOf(dps.issuer.simplesNacional)
  const withheld = dps.amounts.issRetention !== "" && dps.amounts.issRetention !== "1"
  return computeTaxes({
    services: amount(dps.amounts.services) ?? 0,
    unconditionalDiscount: amount(dps.amounts.unconditionalDiscount),
    conditionalDiscount: amount(dps.amounts.conditionalDiscount),
    deductions: amount(dps.amounts.deductions),
    deductionRate: dps.amounts.deductionRate,
    deductionDocuments: dps.amounts.deductionDocuments.length === 0
      ? undefined
      : dps.amounts.deductionDocuments.map((value) => amount(value) ?? 0),
    benefitReductionRate: dps.amounts.benefitReductionRate,
    benefitReductionAmount: amount(dps.amounts.benefitReductionAmount),
    issRate: dps.amounts.issRate ?? (regime === "not_opted" ? municipalRate : undefined),
    issComputed: issIsComputed({ regime, taxable: dps.amounts.issTaxation === "1", withheld }),
    issWithheld: withheld,
    federal: {
      inss: amount(dps.amounts.inss),
      irrf: amount(dps.amounts.irrf),
      csll: amount(dps.amounts.csll)
    }
  })
}

/**
 * The authority's `valores` (TCValoresNFSe): deductions and benefit in reais, then base, rate and
 * ISS when the note computes the ISS (outside the Simples, or withheld), the retentions and the net
 * value. Within the Simples and not withheld the real notes carry only the net value, as the
 * sample does.
 */
export const nfseValues = (dps: ParsedDps, municipalRate: string | undefined): string => {
  const computed = noteAmountsOf(dps, municipalRate)
  if (Result.isFailure(computed)) return node("valores", leaf("vLiq", dps.amounts.services))
  const amounts = computed.success
  const benefit = dps.amounts.benefitReductionRate !== undefined
    ? "2"
    : dps.amounts.benefitReductionAmount !== undefined
    ? "3"
    : undefined
  return node(
    "valores",
    amounts.deductions > 0 ? leaf("vCalcDR", formatCentavos(amounts.deductions)) : "",
    benefit === undefined ? "" : leaf("tpBM", benefit) + leaf("vCalcBM", formatCentavos(amounts.benefit_reduction)),
    amounts.iss_amount === null ? "" : leaf("vBC", formatCentavos(amounts.base)) +
      leaf("pAliqAplic", formatRateForXml(amounts.iss_rate ?? "0")) +
      leaf("vISSQN", formatCentavos(amounts.iss_amount)),
    amounts.total_withheld > 0 ? leaf("vTotalRet", formatCentavos(amounts.total_withheld)) : "",
    leaf("vLiq", formatCentavos(amounts.net))
  )
}

/**
 * The figures `nfseValues` writes, as a reader of the note gets them back (NoteValues.ts): what the
 * simulator, which wrote them, tells without parsing its own XML again.
 */
export const noteFiguresOf = (dps: ParsedDps, municipalRate: string | undefined): NoteAmounts | undefined => {
  const computed = noteAmountsOf(dps, municipalRate)
  if (Result.isFailure(computed)) {
    const net = centavosOf(dps.amounts.services)
    return net === undefined
      ? undefined
      : { deductions: 0, base: null, iss_rate: null, iss_amount: null, total_withheld: 0, net }
  }
  const amounts = computed.success
  const issued = amounts.iss_amount !== null
  return {
    unconditional_discount: amounts.unconditional_discount,
    conditional_discount: amounts.conditional_discount,
    deductions: amounts.deductions,
    benefit_reduction: amounts.benefit_reduction,
    base: issued ? amounts.base : null,
    iss_rate: issued ? formatRateForXml(amounts.iss_rate ?? "0") : null,
    iss_amount: amounts.iss_amount,
    iss_withheld: amounts.iss_withheld,
    federal_withheld: amounts.federal_withheld,
    total_withheld: amounts.total_withheld,
    net: amounts.net
  }
}

/**
 * The NFS-e's `IBSCBS` (the authority's computation of the tax reform group), exactly when the DPS
 * declares one (E1515/E1517: both or neither), after `valores`. The place of incidence is the one
 * the note's ISS is due in. A DPS whose group cannot be computed is refused before (acceptance and
 * the local authority's rules), so a failure here leaves the group out rather than inventing one.
 * The builders of this note stand for the national system, which knows every year's rates: for a
 * year the law has not fully published they charge the latest published rates (standInRatesFor).
 */
/**
 * The authority's IBS/CBS computation for a DPS that declares the group (undefined without one):
 * what the simulator and the local authority write in the note, and hand over with it.
 */
export const noteIbsCbsComputation = (
  dps: ParsedDps,
  municipalRate: string | undefined
): IbsCbsComputation | undefined => {
  if (dps.ibsCbs === undefined) return undefined
  const computed = noteAmountsOf(dps, municipalRate)
  if (Result.isFailure(computed)) return undefined
  const amounts = computed.success
  const due = (value: string | undefined) => (value === undefined ? undefined : centavosOf(value)) ?? 0
  const reform = computeIbsCbsForGroup(dps.ibsCbs, {
    competence: dps.competence,
    services: amounts.services,
    unconditionalDiscount: amounts.unconditional_discount,
    reimbursements: 0,
    iss: amounts.iss_amount ?? 0,
    pis: due(dps.amounts.pis),
    cofins: due(dps.amounts.cofins),
    netValue: amounts.net
  }, standInRatesFor)
  return Result.isFailure(reform) ? undefined : reform.success
}

export const nfseIbsCbs = (
  dps: ParsedDps,
  municipalRate: string | undefined,
  locality: { readonly code: string; readonly name: string }
): string => {
  const computation = noteIbsCbsComputation(dps, municipalRate)
  return computation === undefined
    ? ""
    : buildNfseIbsCbs({ localityCode: locality.code, localityName: locality.name, computation })
}
