/**
 * The tax reform's IBS and CBS on a goods invoice's items (NT 2025.002, group `IBSCBS` of each
 * `det/imposto`, totalled in `total/IBSCBSTot`), in integer centavos. Pure.
 *
 * Offered: full taxation (CST 000, cClassTrib 000001) at the year's published rates (IbsCbsRates.ts:
 * in 2026 IBS 0.10 % for the state, 0 % for the municipality, CBS 0.90 %). Each item's base (vBC,
 * field UB16) follows rule UB16-10: vProd + vFrete + vSeg + vOutro + vII − vDesc − vPIS − vCOFINS −
 * vICMS − vICMSUFDest − vFCP − vFCPUFDest − vICMSMono − vISSQN, of which a sale through this API has
 * the ICMS, the PIS and the COFINS (the IPI is not deducted). Each amount is base × rate, rounded to
 * the centavo, halves to even; the authorities check vIBSUF, vIBSMun, vCBS (rules UB35-10, UB54-10,
 * UB67-10) and vIBS = vIBSUF + vIBSMun (UB54a-10) within R$ 0,01, and the totals against the items'
 * sums (W35-10). In 2025 and 2026 the taxes are not added to the note's total (VB01-10): vNF is unchanged.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { divideHalfEven } from "./IbsCbsAmounts.js"
import { type IbsCbsRates, ibsCbsRatesFor, type IbsCbsRatesProblem } from "./IbsCbsRates.js"

export const GoodsItemIbsCbs = Schema.Struct({
  cst: Schema.Literal("000").annotate({
    description: "The IBS/CBS tax situation (`CST`): `000`, full taxation, the one offered so far. Becomes " +
      "`IBSCBS/CST`."
  }),
  class_code: Schema.Literal("000001").annotate({
    description: "The tax classification (`cClassTrib`): `000001`, operations fully taxed by IBS and CBS. Becomes " +
      "`IBSCBS/cClassTrib`."
  })
}).annotate({
  identifier: "GoodsItemIbsCbs",
  description: "The item's IBS and CBS (NT 2025.002, `imposto/IBSCBS`): the service computes the base and the " +
    "amounts at the year's rates (`gIBSCBS`) and the note's `IBSCBSTot`. Optional in the API; the authorities " +
    "require it of normal-regime emitters (CRT 3) from the date their technical note sets."
})
export type GoodsItemIbsCbs = typeof GoodsItemIbsCbs.Type

/** One item's IBS/CBS: its base, the rates (hundredths of a percent) and the amounts, in centavos. */
export interface ItemIbsCbs {
  readonly base: number
  readonly rates: IbsCbsRates
  readonly stateIbs: number
  readonly municipalIbs: number
  readonly ibs: number
  readonly cbs: number
}

export interface IbsCbsTotals {
  readonly base: number
  readonly stateIbs: number
  readonly municipalIbs: number
  readonly ibs: number
  readonly cbs: number
}

/** What an item's base is made of (GoodsAmounts.ts's ItemFigures has it). */
export interface ItemBaseParts {
  readonly operation: number
  readonly icms: { readonly amount: number } | null
  readonly pis: { readonly amount: number } | null
  readonly cofins: { readonly amount: number } | null
}

const times = (base: number, hundredths: number) => Number(divideHalfEven(BigInt(base) * BigInt(hundredths), 10_000n))

/** The base of rule UB16-10 from an item's figures: its operation less the ICMS, the PIS and the COFINS it carries. */
export const ibsCbsBaseOf = (figures: ItemBaseParts): number =>
  Math.max(
    figures.operation - (figures.icms?.amount ?? 0) - (figures.pis?.amount ?? 0) - (figures.cofins?.amount ?? 0),
    0
  )

export const itemIbsCbs = (figures: ItemBaseParts, rates: IbsCbsRates): ItemIbsCbs => {
  const base = ibsCbsBaseOf(figures)
  const stateIbs = times(base, rates.stateIbs)
  const municipalIbs = times(base, rates.municipalIbs)
  return { base, rates, stateIbs, municipalIbs, ibs: stateIbs + municipalIbs, cbs: times(base, rates.cbs) }
}

/**
 * The IBS/CBS of each item that declares it (undefined for the others) and their totals, at the rates
 * of the note's day of emission (YYYY-MM-DD); none when no item declares it. Fails for a year whose
 * rates are not all published.
 */
export const goodsIbsCbs = (
  items: ReadonlyArray<{ readonly ibs_cbs?: GoodsItemIbsCbs | undefined }>,
  figures: ReadonlyArray<ItemBaseParts>,
  issueDay: string
): Result.Result<
  { readonly items: ReadonlyArray<ItemIbsCbs | undefined>; readonly totals: IbsCbsTotals } | undefined,
  IbsCbsRatesProblem
> => {
  if (!items.some((item) => item.ibs_cbs !== undefined)) return Result.succeed(undefined)
  return Result.map(ibsCbsRatesFor(issueDay), (rates) => {
    const each = items.map((item, i) => item.ibs_cbs === undefined ? undefined : itemIbsCbs(figures[i]!, rates))
    const sum = (of: (item: ItemIbsCbs) => number) => each.reduce((total, item) => total + (item ? of(item) : 0), 0)
    return {
      items: each,
      totals: {
        base: sum((item) => item.base),
        stateIbs: sum((item) => item.stateIbs),
        municipalIbs: sum((item) => item.municipalIbs),
        ibs: sum((item) => item.ibs),
        cbs: sum((item) => item.cbs)
      }
    }
  })
}
