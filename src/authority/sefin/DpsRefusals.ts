/**
 * The national schema's refusals of a DPS (or cancellation event), told in the API's terms: libxml2 names the DPS element
 * ("Element 'xLgr': [facet 'pattern'] …"), a caller knows `taker.address.street`. Each element the
 * DPS builder fills from the document maps back to the field it came from; the ones it fills from
 * the tenant or computes have no field (path []), and keep the schema's own words.
 */

import { InvalidRequest } from "../../domain/Errors.js"

/** Something the national system would refuse, on the request field it comes from (path [] when none). */
export interface Refusal {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

/** DPS element → the document field it is written from (Dps.ts). */
const fieldOfElement: Readonly<Record<string, ReadonlyArray<string>>> = {
  xNome: ["taker", "name"],
  email: ["taker", "email"],
  xLgr: ["taker", "address", "street"],
  nro: ["taker", "address", "number"],
  xCpl: ["taker", "address", "complement"],
  xBairro: ["taker", "address", "district"],
  CEP: ["taker", "address", "postal_code"],
  cMun: ["taker", "address", "municipality_code"],
  cTribNac: ["service", "code"],
  cNBS: ["service", "nbs_code"],
  xDescServ: ["service", "description"],
  cLocPrestacao: ["service", "municipality_code"],
  cLocEmi: ["service", "municipality_code"],
  xInfComp: ["notes"],
  dCompet: ["issue_date"],
  serie: ["series"],
  vServ: ["amounts", "services"],
  vDR: ["amounts", "deductions"],
  pAliq: ["amounts", "iss_rate"],
  // The taker's other fields (an intermediary's share the element names; the taker's is the common case).
  NIF: ["taker", "nif"],
  IM: ["taker", "municipal_registration"],
  fone: ["taker", "phone"],
  cPais: ["taker", "foreign_address", "country"],
  cEndPost: ["taker", "foreign_address", "postal_code"],
  xCidade: ["taker", "foreign_address", "city"],
  xEstProvReg: ["taker", "foreign_address", "region"],
  cTribMun: ["service", "municipal_code"],
  cPaisPrestacao: ["service", "country_code"],
  vDescIncond: ["amounts", "unconditional_discount"],
  vDescCond: ["amounts", "conditional_discount"],
  pDR: ["amounts", "deduction_rate"],
  nDocFisc: ["amounts", "deduction_documents"],
  nDoc: ["amounts", "deduction_documents"],
  xDescOutDed: ["amounts", "deduction_documents"],
  dtEmiDoc: ["amounts", "deduction_documents"],
  vDedutivelRedutivel: ["amounts", "deduction_documents"],
  vDeducaoReducao: ["amounts", "deduction_documents"],
  cPaisResult: ["iss", "result_country"],
  nProcesso: ["iss", "suspension", "process_number"],
  nBM: ["iss", "municipal_benefit", "id"],
  pRedBCBM: ["iss", "municipal_benefit", "reduction_rate"],
  vRedBCBM: ["iss", "municipal_benefit", "reduction_amount"],
  vBCPisCofins: ["federal", "pis_cofins", "base"],
  pAliqPis: ["federal", "pis_cofins", "pis_rate"],
  pAliqCofins: ["federal", "pis_cofins", "cofins_rate"],
  vPis: ["federal", "pis_cofins", "pis_amount"],
  vCofins: ["federal", "pis_cofins", "cofins_amount"],
  vRetCP: ["federal", "inss_withheld"],
  vRetIRRF: ["federal", "irrf_withheld"],
  vRetCSLL: ["federal", "csll_withheld"],
  vTotTribFed: ["approximate_taxes", "amounts", "federal"],
  vTotTribEst: ["approximate_taxes", "amounts", "state"],
  vTotTribMun: ["approximate_taxes", "amounts", "municipal"],
  pTotTribFed: ["approximate_taxes", "rates", "federal"],
  pTotTribEst: ["approximate_taxes", "rates", "state"],
  pTotTribMun: ["approximate_taxes", "rates", "municipal"],
  pTotTribSN: ["approximate_taxes", "simples_rate"],
  tpMoeda: ["foreign_trade", "currency"],
  vServMoeda: ["foreign_trade", "foreign_amount"],
  mecAFComexP: ["foreign_trade", "provider_support"],
  mecAFComexT: ["foreign_trade", "taker_support"],
  nDI: ["foreign_trade", "import_declaration"],
  nRE: ["foreign_trade", "export_registration"],
  // The cancellation event's reason.
  xMotivo: ["reason"]
}

const ELEMENT = /Element '(?:\{[^}]*\})?([A-Za-z0-9]+)'/u
const MISSING = /Expected is \( (?:\{[^}]*\})?([A-Za-z0-9]+) \)/u

/** What a facet failure means for a caller, in a sentence. */
const plainWords = (detail: string): string => {
  if (detail.includes("[facet 'pattern']")) {
    return "contains characters the national NFS-e system does not accept (it takes Latin-1 letters and symbols, " +
      "no line breaks, no emoji, and no leading or trailing spaces)"
  }
  const longer = /maximum length of '([0-9]+)'/u.exec(detail)
  if (longer !== null) return `is longer than the national NFS-e system accepts (${longer[1]} characters at most)`
  const shorter = /minimum length of '([0-9]+)'/u.exec(detail)
  if (shorter !== null) return `is shorter than the national NFS-e system accepts (${shorter[1]} characters at least)`
  if (detail.includes("Missing child element")) return "is required by the national NFS-e system"
  return `is refused by the national NFS-e schema (${detail})`
}

/** One libxml2 message ("line N: Element 'x': …") as a refusal on the document's field. */
export const dpsRefusalOf = (schemaMessage: string): Refusal => {
  const missing = MISSING.exec(schemaMessage)
  const element = missing?.[1] ?? ELEMENT.exec(schemaMessage)?.[1]
  const path = element === undefined ? undefined : fieldOfElement[element]
  if (path === undefined) {
    return { path: [], message: `The national NFS-e schema refuses the document: ${schemaMessage}` }
  }
  const detail = schemaMessage.replace(/^line [0-9]+: /u, "").replace(ELEMENT, "").replace(/^:\s*/u, "")
  return { path, message: `${path.join(".")} ${plainWords(detail)}.` }
}

/** What the national system would refuse, as the 400 that names each field (at most 20 issues, as for validation). */
export const refused = (refusals: ReadonlyArray<Refusal>): InvalidRequest =>
  new InvalidRequest({
    message: `The request is not valid for the national NFS-e system. ${refusals[0]!.message}`,
    issues: refusals.slice(0, 20).map(({ message, path }) => ({ path: [...path], message }))
  })
