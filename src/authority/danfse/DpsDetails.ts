/**
 * The parts of a DPS the DANFSe prints among the complementary information, one line each: the
 * documents behind a deduction or reduction (vDedRed/documentos), the construction work (obra) and
 * the event (atvEvento) the service is for. Values are written as on the rest of the page.
 */
import type { Element } from "@xmldom/xmldom"
import { nfseChildren, nfseElement, nfseText } from "../xml/XmlText.js"
import { formatDate, formatMoney, formatPostalCode, formatTaxId, present } from "./Format.js"
import * as Labels from "./Labels.js"

const text = (from: Element | undefined, ...path: ReadonlyArray<string>): string | undefined => {
  const value = nfseText(from, ...path)?.trim()
  return value === undefined || value === "" ? undefined : value
}

const parts = (...list: ReadonlyArray<string | undefined>) => list.filter(present).join("; ")

/** A street address of the DPS's simple form (CEP or a foreign one, street, number, district). */
const addressOf = (end: Element | undefined): string | undefined =>
  end === undefined ? undefined : [
    [text(end, "xLgr"), text(end, "nro")].filter(present).join(", "),
    text(end, "xCpl"),
    text(end, "xBairro"),
    present(text(end, "CEP")) ? `CEP ${formatPostalCode(text(end, "CEP"))}` : undefined,
    text(end, "endExt", "xCidade"),
    text(end, "endExt", "xEstProvReg"),
    text(end, "endExt", "cEndPost")
  ].filter(present).join(" - ")

const documentOf = (doc: Element): string | undefined => {
  const municipal = nfseElement(doc, "NFSeMun")
  const paper = nfseElement(doc, "NFNFS")
  if (present(text(doc, "chNFSe"))) return `NFS-e ${text(doc, "chNFSe")}`
  if (present(text(doc, "chNFe"))) return `NF-e ${text(doc, "chNFe")}`
  if (municipal !== undefined) {
    return `NFS-e municipal ${text(municipal, "nNFSeMun")} de ${text(municipal, "cMunNFSeMun")}, verificação ${
      text(municipal, "cVerifNFSeMun")
    }`
  }
  if (paper !== undefined) {
    return `NF ${text(paper, "nNFS")}, modelo ${text(paper, "modNFS")}, série ${text(paper, "serieNFS")}`
  }
  return text(doc, "nDocFisc") ?? text(doc, "nDoc")
}

const deductionLine = (doc: Element): string => {
  const supplier = nfseElement(doc, "fornec")
  const supplierId = text(supplier, "CNPJ") ?? text(supplier, "CPF") ?? text(supplier, "NIF")
  return `Dedução/redução (${Labels.deductionKind(text(doc, "tpDedRed"))}): ` + parts(
    documentOf(doc),
    text(doc, "xDescOutDed"),
    present(text(doc, "dtEmiDoc")) ? `emitido em ${formatDate(text(doc, "dtEmiDoc")!)}` : undefined,
    `valor dedutível ${formatMoney(text(doc, "vDedutivelRedutivel"))}`,
    `deduzido ${formatMoney(text(doc, "vDeducaoReducao"))}`,
    supplier === undefined
      ? undefined
      : `fornecedor ${
        [supplierId === undefined ? undefined : formatTaxId(supplierId), text(supplier, "xNome")]
          .filter(present).join(" ")
      }`
  )
}

/** The lines for `infDPS`'s deduction documents, construction work and event, in the XSD's order. */
export const dpsDetailLines = (infDps: Element | undefined): ReadonlyArray<string> => {
  const serv = nfseElement(infDps, "serv")
  const documents = nfseElement(infDps, "valores", "vDedRed", "documentos")
  const work = nfseElement(serv, "obra")
  const event = nfseElement(serv, "atvEvento")
  return [
    ...(work === undefined ? [] : [
      "Obra: " + parts(
        present(text(work, "cObra")) ? `código ${text(work, "cObra")}` : undefined,
        present(text(work, "cCIB")) ? `CIB ${text(work, "cCIB")}` : undefined,
        present(text(work, "inscImobFisc")) ? `inscrição imobiliária fiscal ${text(work, "inscImobFisc")}` : undefined,
        addressOf(nfseElement(work, "end"))
      )
    ]),
    ...(event === undefined ? [] : [
      "Evento: " + parts(
        text(event, "xNome"),
        `de ${formatDate(text(event, "dtIni") ?? "")} a ${formatDate(text(event, "dtFim") ?? "")}`,
        present(text(event, "idAtvEvt")) ? `identificação ${text(event, "idAtvEvt")}` : undefined,
        addressOf(nfseElement(event, "end"))
      )
    ]),
    ...(documents === undefined ? [] : nfseChildren(documents, "docDedRed").map(deductionLine))
  ]
}
