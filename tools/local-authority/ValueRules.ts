/**
 * The national system's main business rules on a DPS's values and retentions, as the local
 * authority applies them after the schema and the signature: which regime may inform a rate, which
 * total-taxes form each regime may use, what a withholding or an export needs, and that no value
 * goes negative. Every rule broken is reported, in the `POST /nfse` refusal shape.
 *
 * The codes and their messages are the national ones, from the business-rules sheet "RN DPS_NFS-e"
 * of Anexo I (ANEXO_I-SEFIN_ADN-DPS_NFSe-SNNFSe-v1.00-20251226.xlsx, 26/12/2025); the sheet's row
 * is named next to each. E0713 is the exception: that sheet has no rule for `indTotTrib` outside
 * the Simples Nacional, and the code is the one integrations recorded from produção restrita
 * (src/authority/sefin/DpsValues.ts). Where this local authority is stricter or simpler than the
 * national rule, the entry says so.
 */
import * as Result from "effect/Result"
import type { ParsedDps } from "../../src/authority/sefin/DpsRead.js"
import { noteAmountsOf } from "../../src/authority/sefin/NfseValues.js"
import type { Refusal } from "./SefinAnswers.js"

export const ValueRuleCodes = {
  /** Row 430 (the municipality's convênio is taken as active). */
  rateOutsideSimples: {
    code: "E0617",
    description: "Não é permitido informar alíquota quando o prestador de serviço não é optante do simples nacional " +
      "(opSimpNac = 1) na data de competência informada na DPS, com o município de incidência do ISSQN com situação " +
      "\"ATIVO\" no Sistema Nacional NFS-e."
  },
  /** Row 467. */
  noTotalTaxesMeEpp: { code: "E0712", description: "Para ME/EPP indTotTrib nunca poderá ser informado." },
  /** Not in Anexo I v1.00: recorded from produção restrita. */
  noTotalTaxesNotOpted: {
    code: "E0713",
    description: "O indicador de não informação do valor total de tributos não é permitido para contribuinte não " +
      "optante pelo Simples Nacional."
  },
  /** Row 166. */
  withheldWithoutTaker: {
    code: "E0204",
    description:
      "CNPJ ou CPF do tomador não foi informado, mas existe uma indicação para retenção do ISSQN na DPS no " +
      "campo de tipo de \"Retenção do ISSQN\"."
  },
  /** Row 204. */
  withheldWithoutIntermediary: {
    code: "E0264",
    description: "CNPJ ou CPF do intermediário não foi informado, mas existe uma indicação para retenção do ISSQN na " +
      "DPS no campo de tipo de \"Retenção do ISSQN\"."
  },
  /** Row 432, message shortened (apuração by the Simples, no exempting benefit, an active convênio). */
  rateMissingWhenWithheld: {
    code: "E0621",
    description: "É obrigatório informar alíquota quando há indicação de retenção do ISSQN (tpRetISSQN = 2 ou 3) " +
      "para o prestador de serviço ME/EPP (opSimpNac = 3) na data de competência informada na DPS."
  },
  /** Row 392. */
  immunityWithoutKind: {
    code: "E0592",
    description: "O tipo de imunidade é obrigatório e deve ser informado somente quando o campo referente à " +
      "tributação do ISSQN for igual a \"2 - Imunidade\"."
  },
  /** Row 251. */
  exportWithoutForeignTrade: {
    code: "E0330",
    description: "É obrigatório prestar informações de comércio exterior para as situações de exportação de serviços."
  },
  /**
   * Row 383, for the sheet "EXPORTACAO_EMISSÃO_NFS-e"'s scenarios 6 and 10 (taker, intermediary and
   * place of service in Brazil). Simpler than the national rule: scenario 2 (the service's
   * incidence at the provider's establishment) is an export the national system accepts with a
   * Brazilian taker; this local authority knows no service's incidence and refuses it too.
   */
  exportToBrazilianTaker: {
    code: "E0529",
    description: "O sistema considera este cenário para a prestação de serviço informada na DPS uma operação " +
      "tributável. Não é permitido ao emitente da DPS informar que a prestação de serviço se trata de uma " +
      "exportação de serviço."
  },
  /** Row 315. */
  unconditionalDiscountAboveService: {
    code: "E0431",
    description: "O valor do desconto incondicionado informado na DPS deve ser menor que o valor do serviço e " +
      "maior que zero."
  },
  /** Row 316. */
  conditionalDiscountAboveService: {
    code: "E0432",
    description: "O valor do desconto condicionado informado na DPS deve ser menor que o valor do serviço e maior " +
      "que zero."
  },
  /** Row 353. */
  deductionsAboveService: {
    code: "E0476",
    description: "O valor de dedução/redução informado na DPS não pode ser superior ao valor do serviço."
  },
  /** Row 408. */
  benefitAboveService: {
    code: "E0574",
    description: "O valor monetário do benefício municipal informado na DPS não pode ser superior ao valor do serviço."
  },
  /** Row 61: retentions above what is left to pay. */
  negativeNetValue: { code: "E1508", description: "O valor líquido da NFS-e não pode ser inferior a zero." }
} as const

type Rule = (typeof ValueRuleCodes)[keyof typeof ValueRuleCodes]

const refusal = (rule: Rule, complement?: string): Refusal =>
  complement === undefined ? { ...rule } : { ...rule, complement }

/** The rule a computation failure breaks, by the amount it names. */
const amountRule = (path: ReadonlyArray<string>): Rule => {
  const field = path.join(".")
  if (field === "amounts.unconditional_discount") return ValueRuleCodes.unconditionalDiscountAboveService
  if (field === "amounts.conditional_discount") return ValueRuleCodes.conditionalDiscountAboveService
  if (field.startsWith("amounts.deduction")) return ValueRuleCodes.deductionsAboveService
  if (field.startsWith("iss.municipal_benefit")) return ValueRuleCodes.benefitAboveService
  return ValueRuleCodes.negativeNetValue
}

/** What the DPS breaks of the value rules; empty when it follows them. */
export const valueRefusals = (dps: ParsedDps, municipalRate: string): ReadonlyArray<Refusal> => {
  const refusals: Array<Refusal> = []
  const regime = dps.issuer.simplesNacional
  const amounts = dps.amounts
  const withheld = amounts.issRetention === "2" || amounts.issRetention === "3"
  if (regime === "1" && amounts.issRate !== undefined) refusals.push(refusal(ValueRuleCodes.rateOutsideSimples))
  if (amounts.totalTaxesKind === "indTotTrib" && regime === "3") {
    refusals.push(refusal(ValueRuleCodes.noTotalTaxesMeEpp))
  }
  if (amounts.totalTaxesKind === "indTotTrib" && regime === "1") {
    refusals.push(refusal(ValueRuleCodes.noTotalTaxesNotOpted))
  }
  const byTaxId = (kind: string | undefined) => kind === "CNPJ" || kind === "CPF"
  if (amounts.issRetention === "2" && !byTaxId(dps.taker?.idKind)) {
    refusals.push(refusal(ValueRuleCodes.withheldWithoutTaker))
  }
  if (amounts.issRetention === "3" && !byTaxId(dps.intermediary?.idKind)) {
    refusals.push(refusal(ValueRuleCodes.withheldWithoutIntermediary))
  }
  if (withheld && regime === "3" && amounts.issRate === undefined) {
    refusals.push(refusal(ValueRuleCodes.rateMissingWhenWithheld))
  }
  if (amounts.issTaxation === "2" && amounts.immunity === undefined) {
    refusals.push(refusal(ValueRuleCodes.immunityWithoutKind))
  }
  if (amounts.issTaxation === "3") {
    const foreignTaker = dps.taker?.idKind === "NIF" || dps.taker?.idKind === "cNaoNIF"
    if (!dps.service.foreignTrade) refusals.push(refusal(ValueRuleCodes.exportWithoutForeignTrade))
    if (!foreignTaker) refusals.push(refusal(ValueRuleCodes.exportToBrazilianTaker))
  }
  const computed = noteAmountsOf(dps, municipalRate)
  if (Result.isFailure(computed)) {
    refusals.push(refusal(amountRule(computed.failure.path), computed.failure.message))
  }
  return refusals
}
