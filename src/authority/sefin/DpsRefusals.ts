/**
 * The national schema's refusals of a DPS (or cancellation event), told in the API's terms: libxml2 names the DPS element
 * ("line 12: Element 'xLgr': [facet 'pattern'] …"), a caller knows `taker.address.street`. Each element the
 * DPS builder fills from the document or from the provider's registration maps back to the field it came
 * from; the ones it computes have no field (path []), and keep the schema's own words.
 *
 * One element name can come from several fields (`email` of the taker, the intermediary, the provider or
 * the IBS/CBS destination), and libxml2 names the element only. The DPS is therefore validated with one
 * tag per line (`oneTagPerLine`): the message's line is the element's, and its ancestors in the
 * document tell whose it is.
 */

import { InvalidRequest } from "../../domain/Errors.js"

/** Something the national system would refuse, on the request field it comes from (path [] when none). */
export interface Refusal {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

/** A party's DPS element (`toma`, `interm`: TCInfoPessoa) → its field in `taker` or `intermediary`. */
const partyField: Readonly<Record<string, ReadonlyArray<string>>> = {
  CNPJ: ["tax_id"],
  CPF: ["tax_id"],
  NIF: ["nif"],
  cNaoNIF: ["no_nif_reason"],
  IM: ["municipal_registration"],
  xNome: ["name"],
  fone: ["phone"],
  email: ["email"],
  cMun: ["address", "municipality_code"],
  CEP: ["address", "postal_code"],
  cPais: ["foreign_address", "country"],
  cEndPost: ["foreign_address", "postal_code"],
  xCidade: ["foreign_address", "city"],
  xEstProvReg: ["foreign_address", "region"]
}

/** An address line of a party (`end`, after `endNac` or `endExt`) → its field in either address. */
const addressLine: Readonly<Record<string, string>> = {
  xLgr: "street",
  nro: "number",
  xCpl: "complement",
  xBairro: "district"
}

/** The provider's DPS elements (`prest`) written from the tenant's registration (DocumentDps.ts). */
const providerField: Readonly<Record<string, ReadonlyArray<string>>> = {
  IM: ["registration", "municipal_registration"],
  fone: ["registration", "phone"],
  email: ["registration", "email"]
}

/** The IBS/CBS destination's elements (`IBSCBS/dest`). */
const destinationField: Readonly<Record<string, ReadonlyArray<string>>> = {
  CNPJ: ["tax_id"],
  CPF: ["tax_id"],
  NIF: ["nif"],
  xNome: ["name"],
  email: ["email"]
}

/** Elements one field writes wherever they are (Dps.ts, DpsValues.ts), and the event's reason. */
const fieldOfElement: Readonly<Record<string, ReadonlyArray<string>>> = {
  cTribNac: ["service", "code"],
  cNBS: ["service", "nbs_code"],
  xDescServ: ["service", "description"],
  cLocPrestacao: ["service", "municipality_code"],
  // Where the note is issued: the provider's municipality, from its registration (DocumentDps.ts).
  cLocEmi: ["registration", "address", "municipality_code"],
  xInfComp: ["notes"],
  dCompet: ["issue_date"],
  serie: ["series"],
  vServ: ["amounts", "services"],
  vDR: ["amounts", "deductions"],
  pAliq: ["amounts", "iss_rate"],
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
  // The cancellation event's reason, and a substitute's (`subst/xMotivo`): both the request's `reason`.
  xMotivo: ["reason"]
}

/** An element where libxml2 saw it: its ancestors (outermost first) and the siblings before it. */
interface Located {
  readonly ancestors: ReadonlyArray<string>
  readonly preceding: ReadonlyArray<string>
}

/**
 * The DPS with each start tag on a line of its own, for validation: whitespace between elements
 * changes nothing for the schema (element-only content), and text never holds a `<` (Dps.ts escapes
 * it). An element written empty (`<x></x>`) stays on one line: a newline there would be its text.
 */
export const oneTagPerLine = (xml: string): string => xml.replace(/>(?=<[^/])/gu, ">\n")

/** The element each line of `xml` opens (the first, if several), by line number from 1. */
const elementsByLine = (xml: string): ReadonlyMap<number, Located & { readonly name: string }> => {
  const byLine = new Map<number, Located & { readonly name: string }>()
  const stack: Array<{ readonly name: string; readonly children: Array<string> }> = []
  const tag = /<(\/?)([A-Za-z_][\w.:-]*)[^>]*?(\/?)>/gu
  let line = 1
  let scanned = 0
  for (const match of xml.matchAll(tag)) {
    for (let i = scanned; i < match.index; i++) if (xml.charCodeAt(i) === 10) line++
    scanned = match.index
    const [, closing, qualified, selfClosing] = match
    const name = qualified!.slice(qualified!.indexOf(":") + 1)
    if (closing === "/") {
      stack.pop()
      continue
    }
    const parent = stack[stack.length - 1]
    if (!byLine.has(line)) {
      byLine.set(line, { name, ancestors: stack.map((frame) => frame.name), preceding: [...(parent?.children ?? [])] })
    }
    parent?.children.push(name)
    if (selfClosing !== "/") stack.push({ name, children: [] })
  }
  return byLine
}

/** The request field an element comes from, given where it is in the DPS. */
const fieldOf = (element: string, where: Located | undefined): ReadonlyArray<string> | undefined => {
  const ancestors = where?.ancestors ?? []
  const party = ancestors.includes("interm") ? "intermediary" : ancestors.includes("toma") ? "taker" : undefined
  if (party !== undefined) {
    const line = addressLine[element]
    if (line !== undefined && ancestors[ancestors.length - 1] === "end") {
      return [party, where?.preceding.includes("endExt") ? "foreign_address" : "address", line]
    }
    const field = partyField[element]
    return field === undefined ? undefined : [party, ...field]
  }
  if (ancestors.includes("prest")) return providerField[element]
  if (ancestors.includes("IBSCBS") && ancestors[ancestors.length - 1] === "dest") {
    const field = destinationField[element]
    return field === undefined ? undefined : ["ibs_cbs", "destination", ...field]
  }
  return fieldOfElement[element]
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

/**
 * One libxml2 message ("line N: Element 'x': …") as a refusal on the request's field. With the
 * validated XML (`oneTagPerLine`'s), an element is placed by its line, so `interm/email` is the
 * intermediary's e-mail; without, an element one field writes wherever it is still maps.
 */
export const dpsRefusalOf = (schemaMessage: string, validatedXml?: string): Refusal => {
  const missing = MISSING.exec(schemaMessage)
  const named = ELEMENT.exec(schemaMessage)?.[1]
  const element = missing?.[1] ?? named
  const line = /^line ([0-9]+):/u.exec(schemaMessage)?.[1]
  const at = validatedXml === undefined || line === undefined
    ? undefined
    : elementsByLine(validatedXml).get(Number(line))
  // A missing child is reported on its parent's line: the child's place is inside that parent.
  const where: Located | undefined = at === undefined
    ? undefined
    : missing !== null && at.name === named
    ? { ancestors: [...at.ancestors, at.name], preceding: [] }
    : at
  const path = element === undefined ? undefined : fieldOf(element, where)
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
