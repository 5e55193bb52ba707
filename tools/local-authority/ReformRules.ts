/**
 * The national rules on a DPS's tax reform group (`IBSCBS`), as the local authority applies them
 * after the schema and the signature: the official CST and cClassTrib tables (src/domain/IbsCbs.ts)
 * and the competence's rates (src/domain/IbsCbsAmounts.ts). The codes are the ones public
 * integrations record for these rules (listed in src/domain/IbsCbs.ts); a rule none of them names
 * has a code of this local authority's, marked "Not real".
 */
import * as Result from "effect/Result"
import type { ParsedDps } from "../../src/authority/sefin/DpsRead.js"
import { centavosOf, noteAmountsOf } from "../../src/authority/sefin/NfseValues.js"
import { ibsCbsIssues } from "../../src/domain/IbsCbs.js"
import { computeIbsCbsForGroup } from "../../src/domain/IbsCbsAmounts.js"
import type { Refusal } from "./SefinAnswers.js"

export const ReformRuleCodes = {
  classOfAnotherCst: { code: "E0958", description: "O cClassTrib informado não pertence ao CST do IBS/CBS." },
  classNotForNfse: { code: "E0969", description: "O cClassTrib informado não é permitido para a NFS-e." },
  regularTaxation: { code: "E0964", description: "Grupo de tributação regular (gTribRegular) indevido ou ausente." },
  deferral: { code: "E0971", description: "Diferimento (gDif) não permitido para o CST informado." },
  /** Not real. */
  other: { code: "E0979", description: "Grupo IBSCBS inconsistente com as tabelas oficiais." },
  /** Not real: no rates published for the competence (2025 and before, 2027 on in this version). */
  competence: { code: "E0980", description: "IBS/CBS não calculável para a competência informada." }
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
  })
  return Result.isFailure(computed) ? [{ ...ReformRuleCodes.competence, complement: computed.failure.message }] : []
}
