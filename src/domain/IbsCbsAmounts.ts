/**
 * The IBS and CBS of a service, as the national system computes them into the NFS-e (`IBSCBS` of
 * `infNFSe`), in integer centavos. Pure; products are taken in BigInt so no amount up to
 * MAX_CENTAVOS loses a centavo.
 *
 * Base (vBC, the formula the v1.01 schema documents on `TCRTCValoresIBSCBS/vBC`):
 *   2026:       vBC = vServ − vDescIncond − vCalcReeRepRes − vISSQN − vPIS − vCOFINS
 *   2027–2032:  vBC = vServ − vDescIncond − vCalcReeRepRes − vISSQN
 * The conditional discount is not deducted; vPIS/vCOFINS are the contributions due (NT 007: never
 * the withheld amounts).
 *
 * Rates (percent with two decimals, held in hundredths of a percent): the competence year's, from
 * the table of published rates (IbsCbsRates.ts). A year whose rates are not all published cannot be
 * computed here (the failure says so: `unpublished`); a stand-in for the authority passes its own
 * rates instead.
 *
 * Effective rate (pAliqEfetUF/Mun/CBS) = rate × (1 − reduction of the class), with the reductions
 * of the official cClassTrib table (pRedIBS for both IBS parts, pRedCBS), rounded to two decimals.
 * A class "without rate" (immunity, exemption, …) has effective rates 0.
 * Amount = vBC × effective rate / 100; a deferral takes pDif % of that amount (vDif…) and the rest
 * is the tax. vIBSTot = vIBSUF + vIBSMun. vTotNF = vLiq in 2026, vLiq + vCBS + vIBSTot from 2027
 * (the taxes are "por fora").
 *
 * Rounding: each amount and each effective rate to the nearest unit, halves to the even neighbour
 * (ABNT NBR 5891). No published document fixes the method for these amounts; the national
 * validator compares them with its own calculator within R$ 0,01 (Anexo I, rules E1556, E1568,
 * E1572, E1582), which a half-unit difference of method stays inside.
 */
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import type { IbsCbs } from "./IbsCbs.js"
import {
  type IbsCbsRates,
  ibsCbsRatesFor,
  type IbsCbsRatesProblem,
  type IbsCbsRatesProblemReason,
  reformCompetenceProblem,
  yearOf
} from "./IbsCbsRates.js"
import { NFSE_TAX_CLASSES, type TaxClass } from "./IbsCbsTables.js"

export class IbsCbsComputationError extends Data.TaggedError("IbsCbsComputationError")<{
  /**
   * `before_reform`: a competence before 2026 (E0850); `unpublished`: the year's rates are not all
   * published, so only the authority can compute; `not_computable`: the note itself cannot be.
   */
  readonly reason: IbsCbsRatesProblemReason | "not_computable"
  readonly message: string
}> {}

const fail = (message: string) => Result.fail(new IbsCbsComputationError({ reason: "not_computable", message }))

const computationError = (problem: IbsCbsRatesProblem) =>
  new IbsCbsComputationError({ reason: problem.reason, message: problem.message })

/** Where the computation takes a year's rates from: the published table, or a stand-in's. */
export type RatesSource = (competence: string) => Result.Result<IbsCbsRates, IbsCbsRatesProblem>

/** n / d rounded to the nearest integer, halves to even; n ≥ 0, d > 0. */
export const divideHalfEven = (n: bigint, d: bigint): bigint => {
  const q = n / d
  const twice = (n % d) * 2n
  if (twice > d || (twice === d && q % 2n === 1n)) return q + 1n
  return q
}

export interface IbsCbsBaseInput {
  /** YYYY-MM-DD (dCompet). */
  readonly competence: string
  readonly services: number
  readonly unconditionalDiscount: number
  /** vCalcReeRepRes: reimbursements and pass-throughs already taxed, outside every base. */
  readonly reimbursements: number
  /** vISSQN. */
  readonly iss: number
  /** vPIS and vCOFINS due (not withheld). */
  readonly pis: number
  readonly cofins: number
}

/** vBC in centavos; a negative base is an error naming what was deducted. */
export const ibsCbsBase = (input: IbsCbsBaseInput): Result.Result<number, IbsCbsComputationError> => {
  const withPisCofins = yearOf(input.competence) <= 2026
  const deducted = input.unconditionalDiscount + input.reimbursements + input.iss +
    (withPisCofins ? input.pis + input.cofins : 0)
  const base = input.services - deducted
  if (base < 0) {
    return fail(
      `The IBS/CBS base would be negative: services ${input.services} less discount, reimbursements, ISS` +
        `${withPisCofins ? ", PIS and COFINS" : ""} (${deducted}) centavos`
    )
  }
  return Result.succeed(base)
}

export interface IbsCbsInput extends IbsCbsBaseInput {
  readonly taxClass: TaxClass
  /** Deferred percentages in hundredths of a percent (gDif). */
  readonly deferral?: { readonly stateIbs: number; readonly municipalIbs: number; readonly cbs: number } | undefined
  /** vLiq of the note, for vTotNF. */
  readonly netValue: number
}

export interface IbsCbsPart {
  /** Nominal rate, hundredths of a percent (pIBSUF / pIBSMun / pCBS). */
  readonly rate: number
  /** Reduction of the class, hundredths of a percent (pRedAliqUF / Mun / CBS); 0 when none. */
  readonly reduction: number
  /** Effective rate, hundredths of a percent (pAliqEfet…). */
  readonly effectiveRate: number
  /** Deferred amount (vDif…), centavos; 0 without deferral. */
  readonly deferred: number
  /** The tax (vIBSUF / vIBSMun / vCBS), centavos. */
  readonly amount: number
}

export interface IbsCbsComputation {
  readonly base: number
  readonly reimbursements: number
  readonly stateIbs: IbsCbsPart
  readonly municipalIbs: IbsCbsPart
  readonly cbs: IbsCbsPart
  /** vIBSTot. */
  readonly ibsTotal: number
  /** vTotNF. */
  readonly noteTotal: number
}

const effective = (rate: number, reduction: number, taxed: boolean): number =>
  taxed ? Number(divideHalfEven(BigInt(rate) * BigInt(10_000 - reduction), 10_000n)) : 0

const part = (base: number, rate: number, reduction: number, taxed: boolean, deferral: number): IbsCbsPart => {
  const effectiveRate = effective(rate, reduction, taxed)
  // base (centavos) × rate (hundredths of a percent) / 10 000 → centavos
  const gross = divideHalfEven(BigInt(base) * BigInt(effectiveRate), 10_000n)
  const deferred = divideHalfEven(gross * BigInt(deferral), 10_000n)
  return { rate, reduction, effectiveRate, deferred: Number(deferred), amount: Number(gross - deferred) }
}

/**
 * The whole computation of the NFS-e's IBS/CBS group from the note's values and the class: first
 * what the note itself allows (its competence, its class, its base), then the year's rates.
 */
export const computeIbsCbs = (
  input: IbsCbsInput,
  ratesOf: RatesSource = ibsCbsRatesFor
): Result.Result<IbsCbsComputation, IbsCbsComputationError> => {
  const early = reformCompetenceProblem(input.competence)
  if (early !== undefined) return Result.fail(computationError(early))
  if (input.taxClass.rateKind === "fixed") {
    return fail(`class ${input.taxClass.code} has a fixed rate per unit, which this computation does not model`)
  }
  const base = ibsCbsBase(input)
  if (Result.isFailure(base)) return Result.fail(base.failure)
  const rates = ratesOf(input.competence)
  if (Result.isFailure(rates)) return Result.fail(computationError(rates.failure))
  const taxed = input.taxClass.rateKind !== "none"
  const { cbsReduction, ibsReduction } = input.taxClass
  const stateIbs = part(base.success, rates.success.stateIbs, ibsReduction, taxed, input.deferral?.stateIbs ?? 0)
  const municipalIbs = part(
    base.success,
    rates.success.municipalIbs,
    ibsReduction,
    taxed,
    input.deferral?.municipalIbs ?? 0
  )
  const cbs = part(base.success, rates.success.cbs, cbsReduction, taxed, input.deferral?.cbs ?? 0)
  const ibsTotal = stateIbs.amount + municipalIbs.amount
  const noteTotal = yearOf(input.competence) <= 2026 ? input.netValue : input.netValue + cbs.amount + ibsTotal
  return Result.succeed({
    base: base.success,
    reimbursements: input.reimbursements,
    stateIbs,
    municipalIbs,
    cbs,
    ibsTotal,
    noteTotal
  })
}

/** "12.5" / "40" / "100.00" (a validated Percent) → hundredths of a percent. */
export const percentToHundredths = (percent: string): number => {
  const [whole, fraction = ""] = percent.split(".")
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"))
}

/**
 * The computation for a decoded `ibs_cbs` group (its class from the shipped table, its deferral in
 * hundredths): what the simulator and the local authority call with the note's values.
 */
export const computeIbsCbsForGroup = (
  group: IbsCbs,
  values: IbsCbsBaseInput & { readonly netValue: number },
  ratesOf: RatesSource = ibsCbsRatesFor
): Result.Result<IbsCbsComputation, IbsCbsComputationError> => {
  const taxClass = NFSE_TAX_CLASSES.get(group.class_code)
  if (taxClass === undefined) return fail(`class ${group.class_code} is not in the NFS-e classification table`)
  const deferral = group.deferral
  return computeIbsCbs({
    ...values,
    taxClass,
    deferral: deferral === undefined ? undefined : {
      stateIbs: percentToHundredths(deferral.state_ibs_percent),
      municipalIbs: percentToHundredths(deferral.municipal_ibs_percent),
      cbs: percentToHundredths(deferral.cbs_percent)
    }
  }, ratesOf)
}
