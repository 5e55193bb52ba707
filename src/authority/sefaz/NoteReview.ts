/**
 * What a state authority checks in a signed NF-e/NFC-e before it authorizes it, in the order and
 * with the codes of the official validation rules (Anexo I of the MOC 7.0): the schema (225), the
 * signature (297) and its signer (213), the access key against the note's fields (502, 253), the
 * numeric code (897), the environment (252), what homologation demands (598, 373), every item's
 * value (629) and the totals (564, 531, 532, 533, 534, 610). Pure, so the built-in simulator and the local
 * SEFAZ refuse alike; duplicity (204, 539) needs the authority's records and is `duplicityOf`.
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import type { Environment } from "../../domain/Principal.js"
import { normalizeTaxId } from "../../domain/TaxId.js"
import { verifyEnveloped } from "../xml/XmlSignature.js"
import { parseXml } from "../xml/XmlText.js"
import { checkDigitOf, isRefusedNumericCode, isValidNfeAccessKey, nfeAccessKey, type NfeModel } from "./NfeAccessKey.js"
import { HOMOLOGATION_ITEM } from "./NfeItems.js"
import { HOMOLOGATION_RECIPIENT, NFE_NAMESPACE } from "./NfeXml.js"
import { validateNfe } from "./NfeXsd.js"

/** A refusal as the authority writes it: cStat and xMotivo. */
export interface NoteRefusal {
  readonly status: string
  readonly reason: string
}

/** What the authority keeps of a note it reviewed, to record it and to answer lookups. */
export interface ReviewedNote {
  readonly accessKey: string
  readonly model: NfeModel
  readonly stateCode: string
  readonly issuerTaxId: string
  readonly series: number
  readonly number: number
  /** The DigestValue of the note's signature (the protocol's digVal). */
  readonly digestValue: string
  /** The note's additional information (infCpl), where test mode's magic values travel. */
  readonly notes: string
  /** tpEmis: 1 normal, 9 an NFC-e issued offline. */
  readonly emissionType: "1" | "9"
}

const DSIG_NAMESPACE = "http://www.w3.org/2000/09/xmldsig#"

const refuse = (status: string, reason: string): Result.Result<never, NoteRefusal> =>
  Result.fail({ status, reason: `Rejeição: ${reason}` })

/** Centavos of a TDec_1302 ("178.22" → 17822). */
const centavosOf = (text: string | undefined): bigint => {
  const [int = "0", frac = ""] = (text ?? "0").split(".")
  return BigInt(int) * 100n + BigInt(frac.padEnd(2, "0").slice(0, 2))
}

/** A decimal string as an integer of `decimals` places. */
const scaled = (text: string | undefined, decimals: number): bigint => {
  const [int = "0", frac = ""] = (text ?? "0").split(".")
  return BigInt(int) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, "0").slice(0, decimals) || "0")
}

/**
 * The tax reform's figures as the authorities check them (NT 2025.002), within a centavo: each
 * item's amounts against its base and rates (rules UB35-10, UB54-10, UB67-10, UB54a-10), the totals'
 * presence (W34-10, W34-20) and base (W35-10). The base itself is not checked (UB16-10 is future).
 */
const reformRefusal = (items: ReadonlyArray<Element>, totals: Element | undefined): NoteRefusal | undefined => {
  const inside = (parent: Element, name: string) =>
    Array.from(parent.getElementsByTagNameNS(NFE_NAMESPACE, name))[0]?.textContent ?? undefined
  const near = (amount: bigint, expected: bigint) => amount - expected <= 1n && expected - amount <= 1n
  let bases = 0n
  let declared = false
  for (const det of items) {
    const group = Array.from(det.getElementsByTagNameNS(NFE_NAMESPACE, "gIBSCBS"))[0]
    declared ||= det.getElementsByTagNameNS(NFE_NAMESPACE, "IBSCBS").length > 0
    if (group === undefined) continue
    const base = centavosOf(inside(group, "vBC"))
    bases += base
    // base (centavos) × rate (4 decimals) / 100 %, to the centavo.
    const at = (rate: string) => (base * scaled(inside(group, rate), 4) + 500_000n) / 1_000_000n
    const stateIbs = centavosOf(inside(group, "vIBSUF"))
    const municipalIbs = centavosOf(inside(group, "vIBSMun"))
    if (!near(stateIbs, at("pIBSUF"))) {
      return { status: "1041", reason: "Rejeição: Valor do IBS da UF difere do calculado" }
    }
    if (!near(municipalIbs, at("pIBSMun"))) {
      return { status: "1052", reason: "Rejeição: Valor do IBS do Município difere do calculado" }
    }
    if (!near(centavosOf(inside(group, "vCBS")), at("pCBS"))) {
      return { status: "1069", reason: "Rejeição: Valor da CBS difere do calculado" }
    }
    if (centavosOf(inside(group, "vIBS")) !== stateIbs + municipalIbs) {
      return { status: "1150", reason: "Rejeição: Valor do IBS difere da soma do IBS da UF e do Município" }
    }
  }
  const total = totals === undefined
    ? undefined
    : Array.from(totals.getElementsByTagNameNS(NFE_NAMESPACE, "IBSCBSTot"))[0]
  if (total !== undefined && !declared) {
    return { status: "1118", reason: "Rejeição: Total do IBS/CBS informado sem item com IBS/CBS" }
  }
  if (total === undefined && declared) return { status: "1119", reason: "Rejeição: Total do IBS/CBS não informado" }
  if (total !== undefined && centavosOf(inside(total, "vBCIBSCBS")) !== bases) {
    return { status: "1076", reason: "Rejeição: Total da base de cálculo do IBS/CBS difere do somatório dos itens" }
  }
  return undefined
}

export const reviewNote = (
  signedXml: string,
  receivingEnvironment: Environment
): Result.Result<ReviewedNote, NoteRefusal> => {
  if (Result.isFailure(validateNfe("NFe", signedXml))) return refuse("225", "Falha no Schema XML do lote de NFe")
  const verified = verifyEnveloped(signedXml, "infNFe")
  if (Result.isFailure(verified)) return refuse("297", "Assinatura difere do calculado")
  const doc = Result.getOrThrow(parseXml(signedXml))
  const all = (name: string) => Array.from(doc.getElementsByTagNameNS(NFE_NAMESPACE, name))
  const text = (name: string, index = 0): string | undefined => all(name)[index]?.textContent ?? undefined
  const within = (parent: string, name: string): string | undefined => {
    const element = all(parent)[0]
    return element === undefined
      ? undefined
      : Array.from(element.getElementsByTagNameNS(NFE_NAMESPACE, name))[0]?.textContent ?? undefined
  }

  const issuerTaxId = within("emit", "CNPJ") ?? within("emit", "CPF") ?? ""
  const signer = verified.success.taxId
  if (
    signer !== null && signer.length === 14 && issuerTaxId.length === 14 &&
    signer.slice(0, 8) !== issuerTaxId.slice(0, 8)
  ) {
    return refuse("213", "CNPJ-Base do Emitente difere do CNPJ-Base do Certificado Digital")
  }

  const model = text("mod") as NfeModel
  const stateCode = text("cUF") ?? ""
  const series = Number(text("serie"))
  const number = Number(text("nNF"))
  const numericCode = text("cNF") ?? ""
  const id = all("infNFe")[0]?.getAttribute("Id") ?? ""
  const emissionType = text("tpEmis") === "9" ? "9" : "1"
  const composed = nfeAccessKey({
    stateCode,
    yearMonth: (text("dhEmi") ?? "").slice(2, 7).replace("-", ""),
    issuerTaxId: normalizeTaxId(issuerTaxId),
    model,
    series,
    number,
    emissionType,
    numericCode
  })
  const accessKey = id.slice(3)
  if (emissionType === "1" && text("xJust") !== undefined) {
    return refuse("556", "Justificativa de entrada em contingência não deve ser informada para tipo de emissão normal")
  }
  if (emissionType === "9" && (text("xJust") === undefined || text("dhCont") === undefined)) {
    return refuse("557", "A Justificativa de entrada em contingência deve ser informada")
  }
  if (composed.slice(0, 43) !== accessKey.slice(0, 43)) {
    return refuse("502", "Erro na Chave de Acesso - Campo Id não corresponde à concatenação dos campos correspondentes")
  }
  if (!isValidNfeAccessKey(accessKey) || text("cDV") !== checkDigitOf(accessKey)) {
    return refuse("253", "Digito Verificador da chave de acesso composta inválida")
  }
  if (isRefusedNumericCode(numericCode, number)) {
    return refuse("897", "Código numérico em formato inválido.")
  }
  const environment = text("tpAmb") === "1" ? "live" : "test"
  if (environment !== receivingEnvironment) {
    return refuse("252", "Ambiente informado diverge do Ambiente de recebimento")
  }

  if (environment === "test") {
    const recipientName = within("dest", "xNome")
    if (recipientName !== undefined && recipientName !== HOMOLOGATION_RECIPIENT) {
      return refuse(
        "598",
        `NF-e emitida em ambiente de homologação com Razão Social do destinatário diferente de ${HOMOLOGATION_RECIPIENT}`
      )
    }
    if (model === "65" && text("xProd") !== HOMOLOGATION_ITEM) {
      return refuse("373", `Descrição do primeiro item diferente de ${HOMOLOGATION_ITEM}`)
    }
  }

  // Every item's value against its quantity and unit price, within the centavo of the rounding.
  const items = all("det")
  let products = 0n
  let icmsBase = 0n
  let icms = 0n
  let stBase = 0n
  let st = 0n
  for (const [i, det] of items.entries()) {
    const of = (name: string) =>
      Array.from(det.getElementsByTagNameNS(NFE_NAMESPACE, name))[0]?.textContent ?? undefined
    const value = centavosOf(of("vProd"))
    const exact = scaled(of("qCom"), 4) * scaled(of("vUnCom"), 10)
    // q × u is in 10^-14 reais; a centavo is 10^12 of them.
    const difference = exact - value * 1_000_000_000_000n
    if (difference > 1_000_000_000_000n || difference < -1_000_000_000_000n) {
      return refuse(
        "629",
        `Valor do Produto difere do produto Valor Unitário de Comercialização e Quantidade Comercial [nItem: ${i + 1}]`
      )
    }
    products += value
    const group = Array.from(det.getElementsByTagNameNS(NFE_NAMESPACE, "ICMS"))[0]
    const inGroup = (name: string) =>
      group === undefined
        ? undefined
        : Array.from(group.getElementsByTagNameNS(NFE_NAMESPACE, name))[0]?.textContent ?? undefined
    icmsBase += centavosOf(inGroup("vBC"))
    icms += centavosOf(inGroup("vICMS"))
    stBase += centavosOf(inGroup("vBCST"))
    st += centavosOf(inGroup("vICMSST"))
  }
  const total = (name: string) => within("ICMSTot", name)
  if (centavosOf(total("vProd")) !== products) {
    return refuse("564", "Total do Produto / Serviço difere do somatório dos itens")
  }
  if (centavosOf(total("vBC")) !== icmsBase) return refuse("531", "Total da BC ICMS difere do somatório dos itens")
  if (centavosOf(total("vICMS")) !== icms) return refuse("532", "Total do ICMS difere do somatório dos itens")
  if (centavosOf(total("vBCST")) !== stBase) return refuse("533", "Total da BC ICMS-ST difere do somatório dos itens")
  if (centavosOf(total("vST")) !== st) return refuse("534", "Total do ICMS-ST difere do somatório dos itens")
  const expectedTotal = ["vProd", "vST", "vFCPST", "vFrete", "vSeg", "vOutro", "vII", "vIPI", "vIPIDevol"]
    .reduce((sum, name) => sum + centavosOf(total(name)), 0n) -
    centavosOf(total("vDesc")) - centavosOf(total("vICMSDeson"))
  if (centavosOf(total("vNF")) !== expectedTotal) {
    return refuse("610", "Total da NF difere do somatório dos Valores compõe o valor Total da NF.")
  }
  const reform = reformRefusal(items, all("total")[0])
  if (reform !== undefined) return Result.fail(reform)

  return Result.succeed({
    accessKey,
    model,
    stateCode,
    issuerTaxId,
    series,
    number,
    digestValue: doc.getElementsByTagNameNS(DSIG_NAMESPACE, "DigestValue").item(0)?.textContent ?? "",
    notes: within("infAdic", "infCpl") ?? "",
    emissionType
  })
}

/**
 * A note already authorized under the same model, state, emitter, series and number: the same note
 * again (204, with its protocol) or another one taking its number (539, naming the key).
 */
export const duplicityOf = (
  existing: { readonly accessKey: string; readonly protocol: string },
  note: ReviewedNote
): NoteRefusal =>
  existing.accessKey === note.accessKey
    ? { status: "204", reason: `Rejeição: Duplicidade de NF-e [nProt:${existing.protocol}]` }
    : {
      status: "539",
      reason: `Rejeição: Duplicidade de NF-e com diferença na Chave de Acesso [chNFe:${existing.accessKey}]`
    }
