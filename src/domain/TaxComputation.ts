/**
 * What a note's amounts come to: ISS base, ISS, retentions and the net value, in integer centavos.
 *
 * The formulas are the national layout's own, as the NFS-e schema of the package of 27/07/2026
 * documents its `valores` group (TCValoresNFSe in tiposComplexos_v1.01.xsd, the elements'
 * xs:documentation):
 *
 *   vCalcDR   = vDR, or vServ x pDR / 100, or the sum of the documents' vDeducaoReducao
 *   vCalcBM   = vRedBCBM, or (vServ - vDescIncond - vCalcDR) x pRedBCBM / 100
 *   vBC       = vServ - vDescIncond - vCalcDR - vCalcBM
 *   vISSQN    = vBC x pAliqAplic / 100
 *   vTotalRet = vRetCP + vRetIRRF + vRetCSLL + vISSQN (when withheld)
 *   vLiq      = vServ - vDescCond - vDescIncond - vTotalRet ("valores retidos")
 *
 * `vPis` and `vCofins` are the provider's own contributions due ("débito … apuração própria",
 * TCTribOutrosPisCofins), not amounts withheld: they are in neither sum, whatever
 * `tpRetPisCofins` declares. (The earlier package added them to both when withheld; NT 007 took
 * them out.)
 *
 * The conditional discount lowers what the taker pays, never the ISS base; the unconditional one
 * lowers both. Percentages apply to the value the schema names and round once, to the centavo,
 * half up (a half centavo goes up). The schema does not state the rounding; half up is what the
 * service has always used and what municipal validators and ERP calculators reproduce, and the
 * authorized note's own figures are shown and compared with ours (NoteAmounts.ts), so a
 * difference is seen rather than assumed away. Every intermediate value is an exact integer
 * (BigInt where a product passes 2^53).
 */
import * as Result from "effect/Result"
import { type Amounts, formatRate, InvalidAmounts, MAX_CENTAVOS, parseRate, RATE_SCALE } from "./Money.js"

export interface FederalRetentions {
  readonly inss?: number | undefined
  readonly irrf?: number | undefined
  readonly csll?: number | undefined
}

export interface TaxComputationInput {
  readonly services: number
  readonly unconditionalDiscount?: number | undefined
  readonly conditionalDiscount?: number | undefined
  /** vDR, in centavos. */
  readonly deductions?: number | undefined
  /** pDR, a percentage of the services' value. */
  readonly deductionRate?: string | undefined
  /** Each document's vDeducaoReducao. */
  readonly deductionDocuments?: ReadonlyArray<number> | undefined
  /** pRedBCBM, a percentage of the base before the benefit. */
  readonly benefitReductionRate?: string | undefined
  /** vRedBCBM. */
  readonly benefitReductionAmount?: number | undefined
  /** The ISS rate, when known. */
  readonly issRate?: string | undefined
  /** Whether the note computes the ISS (issIsComputed); without a rate it cannot, whatever this says. */
  readonly issComputed: boolean
  /** ISS withheld by the taker or the intermediary. */
  readonly issWithheld: boolean
  readonly federal?: FederalRetentions | undefined
}

/**
 * Whether the note carries an ISS amount: a taxable service, outside the Simples Nacional (the
 * municipality's rate), or within it when the ISS is withheld (then the rate is informed). Within
 * the Simples and not withheld the ISS is paid in the DAS, and real notes carry no vISSQN.
 */
export const issIsComputed = (input: {
  readonly regime: "not_opted" | "mei" | "me_epp"
  readonly taxable: boolean
  readonly withheld: boolean
}): boolean => input.taxable && (input.regime === "not_opted" || input.withheld)

const HUNDRED_PERCENT = 100n * BigInt(RATE_SCALE)

/** amount x rate (ten-thousandths of a percent) / 100 %, rounded to the centavo half up. */
export const percentOf = (amount: number, rate: number): number =>
  Number((BigInt(amount) * BigInt(rate) + HUNDRED_PERCENT / 2n) / HUNDRED_PERCENT)

const failAt = (path: ReadonlyArray<string>, message: string) => Result.fail(new InvalidAmounts({ path, message }))

const centavos = (value: number | undefined, path: ReadonlyArray<string>): Result.Result<number, InvalidAmounts> =>
  value === undefined || (Number.isSafeInteger(value) && value >= 0 && value <= MAX_CENTAVOS)
    ? Result.succeed(value ?? 0)
    : failAt(path, `${path.join(".")} must be an integer number of centavos between 0 and ${MAX_CENTAVOS}`)

const rateAt = (rate: string, path: ReadonlyArray<string>) =>
  Result.mapError(parseRate(rate), (error) => new InvalidAmounts({ path, message: error.message }))

/** The one computation of a note's amounts; fails on the field that makes a value negative. */
export const computeTaxes = (input: TaxComputationInput): Result.Result<Amounts, InvalidAmounts> =>
  Result.gen(function*() {
    const services = yield* centavos(input.services, ["amounts", "services"])
    const unconditional = yield* centavos(input.unconditionalDiscount, ["amounts", "unconditional_discount"])
    const conditional = yield* centavos(input.conditionalDiscount, ["amounts", "conditional_discount"])
    // E0431/E0432: each discount informed is less than the services' value.
    for (
      const [discount, field] of [[unconditional, "unconditional_discount"], [
        conditional,
        "conditional_discount"
      ]] as const
    ) {
      if (discount > 0 && discount >= services) {
        return yield* failAt(["amounts", field], `amounts.${field} must be less than the services' value`)
      }
    }
    if (unconditional + conditional > services) {
      return yield* failAt(
        ["amounts", unconditional > services ? "unconditional_discount" : "conditional_discount"],
        "the discounts must not exceed the services' value"
      )
    }

    let deductions = yield* centavos(input.deductions, ["amounts", "deductions"])
    let deductionsPath = ["amounts", "deductions"]
    if (input.deductionRate !== undefined) {
      deductionsPath = ["amounts", "deduction_rate"]
      deductions = percentOf(services, yield* rateAt(input.deductionRate, deductionsPath))
    }
    if (input.deductionDocuments !== undefined) {
      deductionsPath = ["amounts", "deduction_documents"]
      deductions = 0
      for (const [index, amount] of input.deductionDocuments.entries()) {
        deductions += yield* centavos(amount, [...deductionsPath, String(index), "amount"])
      }
    }
    if (deductions > services - unconditional) {
      return yield* failAt(
        deductionsPath,
        "the deductions must not exceed the services' value less the unconditional discount"
      )
    }

    const beforeBenefit = services - unconditional - deductions
    let benefit = yield* centavos(input.benefitReductionAmount, ["iss", "municipal_benefit", "reduction_amount"])
    if (input.benefitReductionRate !== undefined) {
      const path = ["iss", "municipal_benefit", "reduction_rate"]
      benefit = percentOf(beforeBenefit, yield* rateAt(input.benefitReductionRate, path))
    }
    if (benefit > beforeBenefit) {
      return yield* failAt(
        ["iss", "municipal_benefit", "reduction_amount"],
        "the benefit's reduction must not exceed the base left after discounts and deductions"
      )
    }
    const base = beforeBenefit - benefit

    const rate = input.issRate === undefined ? undefined : yield* rateAt(input.issRate, ["amounts", "iss_rate"])
    const issAmount = input.issComputed && rate !== undefined ? percentOf(base, rate) : null
    const issWithheld = input.issWithheld ? issAmount ?? 0 : 0

    const federal = input.federal ?? {}
    const at = (field: string) => ["federal", field]
    const inss = yield* centavos(federal.inss, at("inss_withheld"))
    const irrf = yield* centavos(federal.irrf, at("irrf_withheld"))
    const csll = yield* centavos(federal.csll, at("csll_withheld"))
    const federalWithheld = inss + irrf + csll
    const totalWithheld = issWithheld + federalWithheld

    const payable = services - unconditional - conditional
    if (totalWithheld > payable) {
      // The field that brought the retention: the federal group, or the ISS withheld alone.
      return yield* failAt(
        federalWithheld > 0 ? ["federal"] : ["iss", "withheld_by"],
        "the retentions must not exceed the services' value less the discounts: the net value would be negative"
      )
    }
    return {
      source: "computed" as const,
      services,
      unconditional_discount: unconditional,
      conditional_discount: conditional,
      deductions,
      benefit_reduction: benefit,
      base,
      iss_rate: rate === undefined ? null : formatRate(rate),
      iss_amount: issAmount,
      iss_withheld: issWithheld,
      federal_withheld: federalWithheld,
      total_withheld: totalWithheld,
      net: payable - totalWithheld,
      total: services
    }
  })
