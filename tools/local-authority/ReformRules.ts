/**
 * The national rules on a DPS's tax reform group (`IBSCBS`), as the local authority applies them
 * after the schema and the signature: the official CST and cClassTrib tables (src/domain/IbsCbs.ts),
 * the competence (from 2026 on) and a computable base. The codes are the ones public integrations
 * record for these rules (listed in src/domain/IbsCbs.ts and docs/tax-reform.md); a rule none of
 * them names has a code of this local authority's, marked "Not real". Like the national system, it
 * knows every year's rates: where the law has not published them it charges the latest published
 * ones (standInRatesFor), so a valid 2027 group is authorized.
 */
import * as Result from "effect/Result"
import type { ParsedDps } from "../../src/authority/sefin/DpsRead.js"
import { centavosOf, noteAmountsOf } from "../../src/authority/sefin/NfseValues.js"
import { ibsCbsIssues } from "../../src/domain/IbsCbs.js"
import { computeIbsCbsForGroup } from "../../src/domain/IbsCbsAmounts.js"
import { standInRatesFor } from "../../src/domain/IbsCbsRates.js"
import type { Refusal } from "./SefinAnswers.js"

export const ReformRuleCodes = {
  classOfAnotherCst: { code: "E0958", description: "O cClassTrib informado não pertence ao CST do IBS/CBS." },
  classNotForNfse: { code: "E0969", description: "O cClassTrib informado não é permitido para a NFS-e." },
  regularTaxation: { code: "E0964", description: "Grupo de tributação regular (gTribRegular) indevido ou ausente." },
  deferral: { code: "E0971", description: "Diferimento (gDif) não permitido para o CST informado." },
  /** The national rule's code; the wording is this local authority's. */
  competence: {
    code: "E0850",
    description: "Grupo IBSCBS informado para competência anterior ao início da Reforma Tributária (01/01/2026)."
  },
  /** Not real. */
  other: { code: "E0979", description: "Grupo IBSCBS inconsistente com as tabelas oficiais." }
} as const

const codeOf = (path: ReadonlyArray<string>, message: string) =>
  path[1] === "class_code"
    ? message.includes("does not belong") ? ReformRuleCodes.classOfAnotherCst : ReformRuleCodes.classNotForNfse
    : path[1] === "regular_taxation"
    ? ReformRuleCodes.regularTaxation
    : path[1] === "deferral"
    ? ReformRuleCodes.deferral
    : ReformRuleCodes.other

/** What the DPS's IBSCBS group breaks of the national rules; empty without one, or when it follows them. */
export const reformRefusals = (dps: ParsedDps, municipalRate: string): ReadonlyArray<Refusal> => {
  const group = dps.ibsCbs
  if (group === undefined) return []
  const issues = ibsCbsIssues(group)
  if (issues.length > 0) {
    return issues.map(({ message, path }) => ({ ...codeOf(path, message), complement: message }))
  }
  const amounts = noteAmountsOf(dps, municipalRate)
  // Values the value rules refuse are reported there.
  if (Result.isFailure(amounts)) return []
  const due = (value: string | undefined) => (value === undefined ? undefined : centavosOf(value)) ?? 0
  const computed = computeIbsCbsForGroup(group, {
    competence: dps.competence,
    services: amounts.success.services,
    unconditionalDiscount: amounts.success.unconditional_discount,
    reimbursements: 0,
    iss: amounts.success.iss_amount ?? 0,
    pis: due(dps.amounts.pis),
    cofins: due(dps.amounts.cofins),
    netValue: amounts.success.net
  }, standInRatesFor)
  if (Result.isSuccess(computed)) return []
  const rule = computed.failure.reason === "before_reform" ? ReformRuleCodes.competence : ReformRuleCodes.other
  return [{ ...rule, complement: computed.failure.message }]
}
