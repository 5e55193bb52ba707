/**
 * The national system's main business rules on a DPS's values and retentions, as the local
 * authority applies them after the schema and the signature: which regime may inform a rate, which
 * total-taxes form each regime may use, what a withholding or an export needs, and that no value
 * goes negative. Every rule broken is reported, in the `POST /nfse` refusal shape.
 *
 * E0617 (a rate informed outside the Simples Nacional), E0712 and E0713 (`indTotTrib` from an
 * ME/EPP, from a provider outside the Simples) are the codes the national system answers, as
 * recorded by integrations against produção restrita (src/authority/sefin/DpsValues.ts). The other
 * codes are this local authority's choices in the national shape, marked "Not real": no public
 * source gives the national code for those rules.
 */
import * as Result from "effect/Result"
import type { ParsedDps } from "../../src/authority/sefin/DpsRead.js"
import { noteAmountsOf } from "../../src/authority/sefin/NfseValues.js"
import type { Refusal } from "./SefinAnswers.js"

export const ValueRuleCodes = {
  rateOutsideSimples: {
    code: "E0617",
    description: "Não é permitido informar a alíquota do ISSQN para contribuinte não optante pelo Simples Nacional " +
      "em município com parametrização no Sistema Nacional."
  },
  noTotalTaxesMeEpp: {
    code: "E0712",
    description: "O indicador de não informação do valor total de tributos não é permitido para ME/EPP optante pelo " +
      "Simples Nacional."
  },
  noTotalTaxesNotOpted: {
    code: "E0713",
    description: "O indicador de não informação do valor total de tributos não é permitido para contribuinte não " +
      "optante pelo Simples Nacional."
  },
  /** Not real. */
  withheldWithoutTaker: {
    code: "E0620",
    description: "ISSQN retido exige tomador (ou intermediário) identificado por CNPJ ou CPF."
  },
  /** Not real. */
  rateMissingWhenWithheld: {
    code: "E0621",
    description: "A alíquota do ISSQN deve ser informada quando o ISSQN é retido por optante do Simples Nacional."
  },
  /** Not real. */
  immunityWithoutKind: { code: "E0622", description: "Tipo de imunidade não informado para operação imune." },
  /** Not real. */
  exportWithoutForeignTaker: {
    code: "E0623",
    description: "Exportação de serviço exige tomador no exterior e as informações de comércio exterior."
  },
  /** Not real. */
  valuesAboveService: {
    code: "E0624",
    description: "Descontos, deduções ou retenções superiores ao valor do serviço: o valor líquido seria negativo."
  }
} as const

type Rule = (typeof ValueRuleCodes)[keyof typeof ValueRuleCodes]

const refusal = (rule: Rule, complement?: string): Refusal =>
  complement === undefined ? { ...rule } : { ...rule, complement }

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
    refusals.push(refusal(ValueRuleCodes.withheldWithoutTaker, "tpRetISSQN 2"))
  }
  if (amounts.issRetention === "3" && !byTaxId(dps.intermediary?.idKind)) {
    refusals.push(refusal(ValueRuleCodes.withheldWithoutTaker, "tpRetISSQN 3"))
  }
  if (withheld && regime === "3" && amounts.issRate === undefined) {
    refusals.push(refusal(ValueRuleCodes.rateMissingWhenWithheld))
  }
  if (amounts.issTaxation === "2" && amounts.immunity === undefined) {
    refusals.push(refusal(ValueRuleCodes.immunityWithoutKind))
  }
  const foreignTaker = dps.taker?.idKind === "NIF" || dps.taker?.idKind === "cNaoNIF"
  if (amounts.issTaxation === "3" && (!foreignTaker || !dps.service.foreignTrade)) {
    refusals.push(refusal(ValueRuleCodes.exportWithoutForeignTaker))
  }
  const computed = noteAmountsOf(dps, municipalRate)
  if (Result.isFailure(computed)) {
    refusals.push(refusal(ValueRuleCodes.valuesAboveService, computed.failure.message))
  }
  return refusals
}
