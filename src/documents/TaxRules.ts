/**
 * The national rules a document's tax content must follow, checked before anything is taken: what
 * the schema cannot say (which fields go together, which regime may inform a rate) and what would
 * make a value negative. Each refusal names the request's own field; every refusal found is
 * reported at once. The amounts are then computed (TaxComputation.ts).
 *
 * Where the national system's error code for a rule is known it is cited; the others follow the
 * layout's field descriptions (DPS_v1.01 annex, the XSD's xs:documentation).
 */
import * as Result from "effect/Result"
import { InvalidRequest } from "../domain/Errors.js"
import { ibsCbsIssues } from "../domain/IbsCbs.js"
import { computeIbsCbsForGroup } from "../domain/IbsCbsAmounts.js"
import { ibsCbsFiguresOf } from "../domain/IbsCbsFigures.js"
import type { Amounts, IbsCbsFigures } from "../domain/Money.js"
import { declaredRetention, retentionCode, withholdsAny } from "../domain/PisCofinsRetention.js"
import { computeTaxes, issIsComputed } from "../domain/TaxComputation.js"
import type { Party, TaxDetails } from "../domain/TaxContent.js"
import type { SimplesNacional } from "../domain/Tenant.js"
import type { NewDocument } from "./Api.js"

/** A rule broken, on the request field it concerns. */
interface Refusal {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

/** Every rule broken, in one 400 naming each field (at most 20 issues, as for validation). */
const refused = (refusals: ReadonlyArray<Refusal>): InvalidRequest =>
  new InvalidRequest({
    message: `The document breaks the national NFS-e rules. ${refusals[0]!.message}`,
    issues: refusals.slice(0, 20).map(({ message, path }) => ({ path: [...path], message }))
  })

export interface TaxContent {
  readonly amounts: Amounts
  readonly tax: TaxDetails
}

const present = (...values: ReadonlyArray<unknown>) => values.filter((value) => value !== undefined).length

/** Who a party is: exactly one identification, and an address that fits it. */
const partyRefusals = (party: Party, at: string): Array<Refusal> => {
  const refusals: Array<Refusal> = []
  const ids = present(party.tax_id, party.nif, party.no_nif_reason)
  if (ids !== 1) {
    refusals.push({
      path: [at, "tax_id"],
      message: `${at} must have exactly one of tax_id (CPF/CNPJ), nif (foreign tax id) or no_nif_reason.`
    })
  }
  if (party.address !== undefined && party.foreign_address !== undefined) {
    refusals.push({
      path: [at, "foreign_address"],
      message: `${at} has one address: address (in Brazil) or foreign_address, not both.`
    })
  }
  const foreign = party.nif !== undefined || party.no_nif_reason !== undefined
  if (foreign && party.foreign_address === undefined) {
    refusals.push({
      path: [at, "foreign_address"],
      message: `${at}.foreign_address is required for a party identified abroad (nif or no_nif_reason).`
    })
  }
  if (foreign && party.address !== undefined) {
    refusals.push({
      path: [at, "address"],
      message: `${at}.address is an address in Brazil; a party identified abroad has a foreign_address.`
    })
  }
  return refusals
}

const isForeign = (party: Party | undefined) =>
  party !== undefined && (party.nif !== undefined || party.no_nif_reason !== undefined)

/** The national decimal types rates are written in: one or two integer digits, two decimals. */
const TSDEC1V2 = { below: 10, example: "2.50" } as const
const TSDEC2V2 = { below: 100, example: "1.65" } as const

/**
 * Whether the note's field can hold the rate: `pAliq` (TSDec1V2) takes at most 9.99 and `pAliqPis`,
 * `pAliqCofins`, `pTotTribSN` (TSDec2V2) at most 99.99, each with two decimals. Our `Rate` takes up
 * to four decimals (trailing zeros are fine: "2.5000" is 2.50); more would be rounded by nobody.
 */
const nationalRateRefusal = (
  rate: string | undefined,
  path: ReadonlyArray<string>,
  element: string,
  type: typeof TSDEC1V2 | typeof TSDEC2V2
): Array<Refusal> =>
  rate === undefined || (Number(rate) < type.below && /^[0-9]+(?:\.[0-9]{0,2}0*)?$/u.test(rate)) ? [] : [{
    path,
    message: `${path.join(".")} becomes \`${element}\`, which holds a percentage below ${type.below} with at ` +
      `most 2 decimals (e.g. "${type.example}").`
  }]

/** Which regime may inform the ISS rate, and when it must. */
const rateRefusals = (input: NewDocument, regime: SimplesNacional): Array<Refusal> => {
  const rate = input.amounts.iss_rate
  const taxation = input.iss?.taxation ?? "taxable"
  const withheld = (input.iss?.withheld_by ?? "none") !== "none"
  const at = ["amounts", "iss_rate"]
  if (taxation !== "taxable") {
    return rate === undefined ? [] : [{
      path: at,
      message: `amounts.iss_rate must not be sent when iss.taxation is ${taxation}: no ISS is due on the note.`
    }]
  }
  if (regime === "mei") {
    return rate === undefined ? [] : [{
      path: at,
      message: "amounts.iss_rate must not be sent by a MEI: its ISS is the fixed monthly amount of the DAS."
    }]
  }
  if (withheld && rate === undefined) {
    return [{ path: at, message: "amounts.iss_rate is required when the ISS is withheld: the note informs it." }]
  }
  if (regime === "me_epp" && !withheld && rate !== undefined) {
    return [{
      path: at,
      message: "amounts.iss_rate must not be sent by an ME/EPP of the Simples Nacional when the ISS is not " +
        "withheld: the ISS is paid in the DAS and the note informs no rate."
    }]
  }
  return nationalRateRefusal(rate, at, "pAliq", TSDEC1V2)
}

const issRefusals = (input: NewDocument, regime: SimplesNacional): Array<Refusal> => {
  const iss = input.iss ?? {}
  const taxation = iss.taxation ?? "taxable"
  const withheldBy = iss.withheld_by ?? "none"
  const refusals: Array<Refusal> = [...rateRefusals(input, regime)]
  if (taxation === "immune" && iss.immunity === undefined) {
    refusals.push({ path: ["iss", "immunity"], message: "iss.immunity is required when iss.taxation is immune." })
  }
  if (taxation !== "immune" && iss.immunity !== undefined) {
    refusals.push({ path: ["iss", "immunity"], message: "iss.immunity is only for iss.taxation immune." })
  }
  if (regime === "mei" && withheldBy !== "none") {
    refusals.push({
      path: ["iss", "withheld_by"],
      message: "iss.withheld_by must be none for a MEI: its ISS is the fixed monthly amount of the DAS-MEI, " +
        "which no taker withholds (LC 123/2006, art. 18-A)."
    })
  }
  if (taxation !== "taxable" && withheldBy !== "none") {
    refusals.push({
      path: ["iss", "withheld_by"],
      message: `iss.withheld_by must be none when iss.taxation is ${taxation}: there is no ISS to withhold.`
    })
  }
  if (taxation !== "taxable" && (iss.suspension !== undefined || iss.municipal_benefit !== undefined)) {
    refusals.push({
      path: ["iss", iss.suspension !== undefined ? "suspension" : "municipal_benefit"],
      message: "a suspension or a municipal benefit applies to a taxable service only."
    })
  }
  const benefit = iss.municipal_benefit
  if (benefit !== undefined && benefit.reduction_rate !== undefined && benefit.reduction_amount !== undefined) {
    refusals.push({
      path: ["iss", "municipal_benefit", "reduction_amount"],
      message: "iss.municipal_benefit takes reduction_rate or reduction_amount, not both."
    })
  }
  if (withheldBy === "taker" && input.taker?.tax_id === undefined) {
    refusals.push({
      path: ["taker", "tax_id"],
      message: "ISS withheld by the taker needs a taker identified by CPF or CNPJ."
    })
  }
  if (withheldBy === "intermediary" && input.intermediary?.tax_id === undefined) {
    refusals.push({
      path: ["intermediary", "tax_id"],
      message: "ISS withheld by the intermediary needs an intermediary identified by CPF or CNPJ."
    })
  }
  if (taxation === "export") {
    if (!isForeign(input.taker)) {
      refusals.push({
        path: ["taker", "nif"],
        message: "an export (iss.taxation export) needs a taker abroad, identified by nif or no_nif_reason."
      })
    }
    if (input.foreign_trade === undefined) {
      refusals.push({ path: ["foreign_trade"], message: "foreign_trade is required for an export." })
    }
  }
  if (iss.result_country !== undefined && taxation !== "export") {
    refusals.push({ path: ["iss", "result_country"], message: "iss.result_country is only for an export." })
  }
  return refusals
}

const valueRefusals = (input: NewDocument, regime: SimplesNacional): Array<Refusal> => {
  const amounts = input.amounts
  const refusals: Array<Refusal> = []
  if (present(amounts.deductions, amounts.deduction_rate, amounts.deduction_documents) > 1) {
    refusals.push({
      path: ["amounts", "deduction_rate"],
      message: "amounts takes one of deductions, deduction_rate or deduction_documents (vDedRed is a choice)."
    })
  }
  for (const [index, document] of (amounts.deduction_documents ?? []).entries()) {
    const at = ["amounts", "deduction_documents", String(index)]
    const ids = present(document.nfse_key, document.nfe_key, document.fiscal_document_number, document.document_number)
    if (ids !== 1) {
      refusals.push({
        path: [...at, "nfse_key"],
        message:
          "each deduction document has exactly one of nfse_key, nfe_key, fiscal_document_number, document_number."
      })
    }
    if ((document.kind === "other") !== (document.description !== undefined)) {
      refusals.push({ path: [...at, "description"], message: "description is required for kind other, and only then." })
    }
    if (document.amount > document.deductible_amount) {
      refusals.push({ path: [...at, "amount"], message: "amount must not exceed deductible_amount." })
    }
  }
  const approximate = input.approximate_taxes
  if (approximate !== undefined) {
    const kinds = present(approximate.amounts, approximate.rates, approximate.simples_rate)
    if (kinds !== 1) {
      refusals.push({
        path: ["approximate_taxes"],
        message: "approximate_taxes takes exactly one of amounts, rates or simples_rate (totTrib is a choice)."
      })
    }
    if (approximate.simples_rate !== undefined && regime === "not_opted") {
      refusals.push({
        path: ["approximate_taxes", "simples_rate"],
        message: "approximate_taxes.simples_rate is for a provider of the Simples Nacional."
      })
    }
    refusals.push(
      ...nationalRateRefusal(approximate.simples_rate, ["approximate_taxes", "simples_rate"], "pTotTribSN", TSDEC2V2)
    )
  }
  const pisCofins = input.federal?.pis_cofins
  refusals.push(
    ...nationalRateRefusal(pisCofins?.pis_rate, ["federal", "pis_cofins", "pis_rate"], "pAliqPis", TSDEC2V2),
    ...nationalRateRefusal(pisCofins?.cofins_rate, ["federal", "pis_cofins", "cofins_rate"], "pAliqCofins", TSDEC2V2)
  )
  refusals.push(...retentionRefusals(input))
  return refusals
}

/**
 * `tpRetPisCofins` (0–9): one declaration, a combination the schema has a code for, and a CSLL
 * answer that agrees with the CSLL amount withheld (`vRetCSLL`) the same note states.
 */
const retentionRefusals = (input: NewDocument): Array<Refusal> => {
  const pisCofins = input.federal?.pis_cofins
  if (pisCofins === undefined) return []
  const at = ["federal", "pis_cofins", "retention"]
  if (pisCofins.retention !== undefined && pisCofins.withheld !== undefined) {
    return [{
      path: ["federal", "pis_cofins", "withheld"],
      message: "federal.pis_cofins takes retention or the deprecated withheld, not both."
    }]
  }
  const retention = pisCofins.retention
  if (retention === undefined) return []
  if (retentionCode(retention) === undefined) {
    return [{
      path: [...at, "csll"],
      message: "federal.pis_cofins.retention.csll is required when only one of PIS and COFINS is withheld " +
        "(tpRetPisCofins has no code that leaves the CSLL unsaid then)."
    }]
  }
  const csllAmount = input.federal?.csll_withheld ?? 0
  if (retention.csll === false && csllAmount > 0) {
    return [{
      path: [...at, "csll"],
      message: "federal.pis_cofins.retention.csll is false but federal.csll_withheld declares CSLL withheld."
    }]
  }
  if (retention.csll === true && csllAmount === 0) {
    return [{
      path: ["federal", "csll_withheld"],
      message: "federal.csll_withheld is required when federal.pis_cofins.retention.csll says CSLL is withheld."
    }]
  }
  return []
}

const partiesRefusals = (input: NewDocument): Array<Refusal> => {
  const refusals: Array<Refusal> = []
  if (input.taker !== undefined) refusals.push(...partyRefusals(input.taker, "taker"))
  if (input.intermediary !== undefined) refusals.push(...partyRefusals(input.intermediary, "intermediary"))
  if (input.taker === undefined) {
    const federal = input.federal
    const withholding = federal !== undefined &&
      ((federal.inss_withheld ?? 0) + (federal.irrf_withheld ?? 0) + (federal.csll_withheld ?? 0) > 0 ||
        withholdsAny(federal.pis_cofins === undefined ? undefined : declaredRetention(federal.pis_cofins)))
    if (withholding) {
      refusals.push({ path: ["taker"], message: "a taker is required when federal taxes are withheld." })
    }
  }
  return refusals
}

/** The document's tax content as stored: the payload's declarations, without the amounts. */
const taxDetailsOf = (input: NewDocument): TaxDetails => ({
  ...(input.iss === undefined ? {} : { iss: input.iss }),
  ...(input.federal === undefined ? {} : { federal: input.federal }),
  ...(input.approximate_taxes === undefined ? {} : { approximate_taxes: input.approximate_taxes }),
  ...(input.foreign_trade === undefined ? {} : { foreign_trade: input.foreign_trade }),
  ...(input.amounts.deduction_rate === undefined ? {} : { deduction_rate: input.amounts.deduction_rate }),
  ...(input.amounts.deduction_documents === undefined
    ? {}
    : { deduction_documents: input.amounts.deduction_documents }),
  ...(input.ibs_cbs === undefined ? {} : { ibs_cbs: input.ibs_cbs })
})

/**
 * The tax reform group, when sent: the official tables' rules (IbsCbs.ts), then the computation the
 * authority will make of it for the note's competence. What the note itself breaks is refused here
 * rather than at the authority: a competence before 2026 (E0850), a class we cannot compute, a
 * negative base. A year whose rates are not all published is no refusal: the authority knows them
 * and computes the amounts, so the estimate is null and the note's figures come with it.
 * Success: the estimate, null without one, undefined without a group.
 */
const ibsCbsOf = (
  input: NewDocument,
  competence: string,
  amounts: Amounts
): Result.Result<IbsCbsFigures | null | undefined, ReadonlyArray<Refusal>> => {
  const group = input.ibs_cbs
  if (group === undefined) return Result.succeed(undefined)
  const issues = ibsCbsIssues(group)
  if (issues.length > 0) return Result.fail(issues)
  const pisCofins = input.federal?.pis_cofins
  const computed = computeIbsCbsForGroup(group, {
    competence,
    services: amounts.services,
    unconditionalDiscount: amounts.unconditional_discount,
    reimbursements: 0,
    iss: amounts.iss_amount ?? 0,
    pis: pisCofins?.pis_amount ?? 0,
    cofins: pisCofins?.cofins_amount ?? 0,
    netValue: amounts.net
  })
  if (Result.isSuccess(computed)) return Result.succeed(ibsCbsFiguresOf(computed.success))
  if (computed.failure.reason === "unpublished") return Result.succeed(null)
  return Result.fail([{
    path: ["ibs_cbs"],
    message: `ibs_cbs cannot be computed for this note: ${computed.failure.message}.`
  }])
}

/** The rules, then the computation: the document's amounts and tax content, or the 400 naming every field. */
export const taxContentOf = (
  input: NewDocument,
  regime: SimplesNacional,
  /** dCompet: the IBS/CBS rates are the competence year's. */
  competence: string
): Result.Result<TaxContent, InvalidRequest> => {
  const refusals = [...partiesRefusals(input), ...issRefusals(input, regime), ...valueRefusals(input, regime)]
  if (refusals.length > 0) return Result.fail(refused(refusals))
  const iss = input.iss ?? {}
  const withheld = (iss.withheld_by ?? "none") !== "none"
  const computed = computeTaxes({
    services: input.amounts.services,
    unconditionalDiscount: input.amounts.unconditional_discount,
    conditionalDiscount: input.amounts.conditional_discount,
    deductions: input.amounts.deductions,
    deductionRate: input.amounts.deduction_rate,
    deductionDocuments: input.amounts.deduction_documents?.map((document) => document.amount),
    benefitReductionRate: iss.municipal_benefit?.reduction_rate,
    benefitReductionAmount: iss.municipal_benefit?.reduction_amount,
    issRate: input.amounts.iss_rate,
    issComputed: issIsComputed({ regime, taxable: (iss.taxation ?? "taxable") === "taxable", withheld }),
    issWithheld: withheld,
    federal: {
      inss: input.federal?.inss_withheld,
      irrf: input.federal?.irrf_withheld,
      csll: input.federal?.csll_withheld
    }
  })
  if (Result.isFailure(computed)) {
    return Result.fail(refused([{ path: computed.failure.path, message: computed.failure.message }]))
  }
  const reform = ibsCbsOf(input, competence, computed.success)
  if (Result.isFailure(reform)) return Result.fail(refused(reform.failure))
  const amounts = reform.success === undefined ? computed.success : { ...computed.success, ibs_cbs: reform.success }
  return Result.succeed({ amounts, tax: taxDetailsOf(input) })
}
