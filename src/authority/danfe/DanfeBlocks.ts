/**
 * The fixed blocks of the A4 DANFE, in the order and with the fields of the national manual (MOC
 * 7.0, annex II, "Manual de Especificações Técnicas do DANFE", portrait): the receipt stub
 * (canhoto), the emitter's identification beside the DANFE's own box and the access key with its
 * Code-128C barcode, the nature of the operation and the authorization protocol, the emitter's
 * registrations, the recipient, the tax calculation and the carrier. Each has the same height
 * whatever the note says; the items and the additional data, which grow, are Danfe.ts's.
 */
import { formatDateTime, formatPhone, formatPostalCode, formatTaxId, groupAccessKey } from "../danfse/Format.js"
import {
  clampLines,
  CONTENT_WIDTH,
  type Doc,
  drawAligned,
  drawLine,
  FONT,
  FONT_BOLD,
  INK,
  MARGIN,
  wrapText
} from "../danfse/Layout.js"
import { type Box, CAPTION_HEIGHT, CELL_HEIGHT, drawCaption, drawCellLabel, drawCellRow, strokeBox } from "./Cells.js"
import { code128C, QUIET_ZONE_MODULES } from "./Code128.js"
import { amount, dateOf, FREIGHT_MODES, noteNumber, orEmpty, seriesText } from "./DanfeFormat.js"
import type { DanfeAddress, DanfeNote } from "./NfeReader.js"

export const PAGE_BOX: Box = { left: MARGIN, width: CONTENT_WIDTH }
export const BLOCK_SPACING = 3

const STUB_HEIGHT = 46
const STUB_NUMBER_WIDTH = 100
const STUB_CUT = 9
const IDENTIFICATION_HEIGHT = 112
const BARCODE_BOX_HEIGHT = 44
const BARCODE_HEIGHT = 32
/** The header's three columns: the emitter, the DANFE's box, the key. */
const EMITTER_WIDTH = CONTENT_WIDTH * 0.4
const DANFE_BOX_WIDTH = CONTENT_WIDTH * 0.16
const KEY_WIDTH = CONTENT_WIDTH - EMITTER_WIDTH - DANFE_BOX_WIDTH

export const STUB_TOTAL_HEIGHT = STUB_HEIGHT + STUB_CUT

/** Where page 1's barcode box is, so a check can find the bars on a rendered page. */
export const danfeBarcodeBox = {
  x: MARGIN + EMITTER_WIDTH + DANFE_BOX_WIDTH,
  y: MARGIN + STUB_TOTAL_HEIGHT,
  width: KEY_WIDTH,
  height: BARCODE_BOX_HEIGHT
} as const
export const HEADER_HEIGHT = IDENTIFICATION_HEIGHT + 2 * CELL_HEIGHT
export const RECIPIENT_HEIGHT = CAPTION_HEIGHT + 3 * CELL_HEIGHT
export const TAX_HEIGHT = CAPTION_HEIGHT + 2 * CELL_HEIGHT
export const CARRIER_HEIGHT = CAPTION_HEIGHT + 3 * CELL_HEIGHT

/** Where the authenticity of a note is checked, as the manual words it. */
const CONSULTATION = [
  "Consulta de autenticidade no portal nacional da NF-e",
  "www.nfe.fazenda.gov.br/portal",
  "ou no site da Sefaz Autorizadora"
]

export const streetLine = (address: DanfeAddress | undefined): string =>
  address === undefined
    ? ""
    : [address.street, address.number, address.complement].filter((part) => part !== undefined).join(", ")

const taxIdOf = (party: { readonly taxId?: string | undefined; readonly foreignId?: string | undefined }) =>
  party.taxId !== undefined ? formatTaxId(party.taxId) : party.foreignId ?? ""

/** The receipt stub: who received the goods, when, and the note it acknowledges. */
export const drawStub = (doc: Doc, note: DanfeNote, top: number): number => {
  const textWidth = CONTENT_WIDTH - STUB_NUMBER_WIDTH
  const recipient = note.recipient
  const text = `RECEBEMOS DE ${note.issuer.name ?? ""} OS PRODUTOS E/OU SERVIÇOS CONSTANTES DA NOTA FISCAL ` +
    `ELETRÔNICA INDICADA AO LADO. EMISSÃO: ${dateOf(note.issuedAt)} VALOR TOTAL: R$ ${amount(note.totals.total)}` +
    (recipient?.name === undefined ? "" : ` DESTINATÁRIO: ${recipient.name}`) +
    (recipient?.address === undefined
      ? ""
      : ` - ${streetLine(recipient.address)} ${recipient.address.district} ${recipient.address.municipality}-` +
        recipient.address.state)
  const textHeight = STUB_HEIGHT - CELL_HEIGHT
  strokeBox(doc, MARGIN, top, textWidth, textHeight)
  const lines = clampLines(doc, wrapText(doc, text, textWidth - 6, FONT, 5.6), 3, textWidth - 6, FONT, 5.6)
  lines.forEach((line, i) => drawLine(doc, line, MARGIN + 3, top + 2.5 + i * 6.8, FONT, 5.6))
  drawCellRow(doc, top + textHeight, [
    { label: "DATA DE RECEBIMENTO", value: "", weight: 1 },
    { label: "IDENTIFICAÇÃO E ASSINATURA DO RECEBEDOR", value: "", weight: 3 }
  ], { left: MARGIN, width: textWidth })
  const numberLeft = MARGIN + textWidth
  strokeBox(doc, numberLeft, top, STUB_NUMBER_WIDTH, STUB_HEIGHT)
  drawAligned(doc, "NF-e", numberLeft, STUB_NUMBER_WIDTH, top + 6, FONT_BOLD, 13, "center")
  drawAligned(doc, `Nº ${noteNumber(note.number)}`, numberLeft, STUB_NUMBER_WIDTH, top + 23, FONT_BOLD, 8, "center")
  drawAligned(doc, `SÉRIE ${seriesText(note.series)}`, numberLeft, STUB_NUMBER_WIDTH, top + 34, FONT_BOLD, 8, "center")
  const cut = top + STUB_HEIGHT + STUB_CUT / 2
  doc.save().lineWidth(0.5).dash(3, { space: 2 }).moveTo(MARGIN, cut).lineTo(MARGIN + CONTENT_WIDTH, cut).stroke(INK)
  doc.undash().restore()
  return top + STUB_TOTAL_HEIGHT
}

const drawEmitter = (doc: Doc, note: DanfeNote, top: number) => {
  const { issuer } = note
  const width = EMITTER_WIDTH - 8
  strokeBox(doc, MARGIN, top, EMITTER_WIDTH, IDENTIFICATION_HEIGHT)
  drawCellLabel(doc, "IDENTIFICAÇÃO DO EMITENTE", { left: MARGIN + 2, width }, top)
  const names = clampLines(doc, wrapText(doc, issuer.name ?? "", width, FONT_BOLD, 9.5), 2, width, FONT_BOLD, 9.5)
  let y = top + 16
  for (const name of names) {
    drawAligned(doc, name, MARGIN + 4, width, y, FONT_BOLD, 9.5, "center")
    y += 11.5
  }
  const address = issuer.address
  const lines = [
    issuer.tradeName ?? "",
    streetLine(address),
    address === undefined ? "" : `${address.district} - CEP ${formatPostalCode(address.postalCode)}`,
    address === undefined ? "" : `${address.municipality} - ${address.state}`,
    address?.phone === undefined ? "" : `Fone: ${formatPhone(address.phone)}`
  ].filter((line) => line !== "")
  y += 3
  for (const line of lines) {
    const [fitted = ""] = clampLines(doc, wrapText(doc, line, width, FONT, 7.5), 1, width, FONT, 7.5)
    drawAligned(doc, fitted, MARGIN + 4, width, y, FONT, 7.5, "center")
    y += 10
  }
}

const drawDanfeBox = (doc: Doc, note: DanfeNote, top: number, page: number, pages: number) => {
  const left = MARGIN + EMITTER_WIDTH
  const width = DANFE_BOX_WIDTH
  strokeBox(doc, left, top, width, IDENTIFICATION_HEIGHT)
  drawAligned(doc, "DANFE", left, width, top + 6, FONT_BOLD, 14, "center")
  drawAligned(doc, "DOCUMENTO AUXILIAR DA", left, width, top + 24, FONT, 6.5, "center")
  drawAligned(doc, "NOTA FISCAL ELETRÔNICA", left, width, top + 32, FONT, 6.5, "center")
  drawLine(doc, "0 - ENTRADA", left + 6, top + 45, FONT, 7)
  drawLine(doc, "1 - SAÍDA", left + 6, top + 54, FONT, 7)
  strokeBox(doc, left + width - 22, top + 44, 15, 15)
  drawAligned(doc, note.direction, left + width - 22, 15, top + 47.5, FONT_BOLD, 10, "center")
  drawAligned(doc, `Nº ${noteNumber(note.number)}`, left, width, top + 68, FONT_BOLD, 8.5, "center")
  drawAligned(doc, `SÉRIE ${seriesText(note.series)}`, left, width, top + 80, FONT_BOLD, 8.5, "center")
  drawAligned(doc, `FOLHA ${page}/${pages}`, left, width, top + 93, FONT, 7.5, "center")
}

/** The access key's Code-128C barcode, centred in `box`, its bars `height` tall. */
export const drawBarcode = (doc: Doc, accessKey: string, box: Box, top: number, height: number) => {
  const widths = code128C(accessKey)
  const modules = widths.reduce((sum, w) => sum + w, 0)
  const moduleWidth = Math.min(1, box.width / (modules + 2 * QUIET_ZONE_MODULES))
  let x = box.left + (box.width - modules * moduleWidth) / 2
  widths.forEach((w, i) => {
    // Even positions are bars, odd ones spaces.
    if (i % 2 === 0) doc.rect(x, top, w * moduleWidth, height)
    x += w * moduleWidth
  })
  doc.fill(INK)
}

const drawKey = (doc: Doc, note: DanfeNote, top: number) => {
  const left = MARGIN + EMITTER_WIDTH + DANFE_BOX_WIDTH
  strokeBox(doc, left, top, KEY_WIDTH, BARCODE_BOX_HEIGHT)
  drawBarcode(
    doc,
    note.accessKey,
    { left, width: KEY_WIDTH },
    top + (BARCODE_BOX_HEIGHT - BARCODE_HEIGHT) / 2,
    BARCODE_HEIGHT
  )
  const keyTop = top + BARCODE_BOX_HEIGHT
  drawCellRow(doc, keyTop, [{
    label: "CHAVE DE ACESSO",
    value: groupAccessKey(note.accessKey),
    weight: 1,
    align: "center",
    bold: true
  }], { left, width: KEY_WIDTH })
  const textTop = keyTop + CELL_HEIGHT
  strokeBox(doc, left, textTop, KEY_WIDTH, IDENTIFICATION_HEIGHT - BARCODE_BOX_HEIGHT - CELL_HEIGHT)
  CONSULTATION.forEach((line, i) =>
    drawAligned(doc, line, left, KEY_WIDTH, textTop + 10 + i * 9, i === 1 ? FONT_BOLD : FONT, 7, "center")
  )
}

/** The header every page repeats; returns where the next block starts. */
export const drawHeader = (doc: Doc, note: DanfeNote, top: number, page: number, pages: number): number => {
  drawEmitter(doc, note, top)
  drawDanfeBox(doc, note, top, page, pages)
  drawKey(doc, note, top)
  const protocol = note.protocol === undefined
    ? "" // a note not yet authorized (contingency) has none
    : `${note.protocol.number} - ${formatDateTime(note.protocol.receivedAt)}`
  const weights = { left: EMITTER_WIDTH + DANFE_BOX_WIDTH, right: KEY_WIDTH }
  let y = drawCellRow(doc, top + IDENTIFICATION_HEIGHT, [
    { label: "NATUREZA DA OPERAÇÃO", value: note.operationNature, weight: weights.left },
    { label: "PROTOCOLO DE AUTORIZAÇÃO DE USO", value: protocol, weight: weights.right, align: "center", bold: true }
  ], PAGE_BOX)
  y = drawCellRow(doc, y, [
    { label: "INSCRIÇÃO ESTADUAL", value: note.issuer.stateRegistration ?? "", weight: 1 },
    { label: "INSCRIÇÃO ESTADUAL DO SUBST. TRIBUT.", value: "", weight: 1 },
    { label: note.issuer.taxId?.length === 11 ? "CPF" : "CNPJ", value: taxIdOf(note.issuer), weight: 1 }
  ], PAGE_BOX)
  return y + BLOCK_SPACING
}

export const drawRecipient = (doc: Doc, note: DanfeNote, top: number): number => {
  const recipient = note.recipient
  const address = recipient?.address
  let y = drawCaption(doc, "DESTINATÁRIO / REMETENTE", PAGE_BOX, top)
  y = drawCellRow(doc, y, [
    { label: "NOME / RAZÃO SOCIAL", value: recipient?.name ?? "", weight: 6 },
    { label: "CNPJ / CPF", value: recipient === undefined ? "" : taxIdOf(recipient), weight: 2.5 },
    { label: "DATA DA EMISSÃO", value: dateOf(note.issuedAt), weight: 1.5, align: "center" }
  ], PAGE_BOX)
  y = drawCellRow(doc, y, [
    { label: "ENDEREÇO", value: streetLine(address), weight: 4.5 },
    { label: "BAIRRO / DISTRITO", value: address?.district ?? "", weight: 2.5 },
    { label: "CEP", value: address?.postalCode === undefined ? "" : formatPostalCode(address.postalCode), weight: 1.5 },
    { label: "DATA DA SAÍDA/ENTRADA", value: "", weight: 1.5 }
  ], PAGE_BOX)
  y = drawCellRow(doc, y, [
    { label: "MUNICÍPIO", value: address?.municipality ?? "", weight: 3.5 },
    { label: "UF", value: address?.state ?? "", weight: 0.6, align: "center" },
    { label: "FONE / FAX", value: address?.phone === undefined ? "" : formatPhone(address.phone), weight: 1.9 },
    { label: "INSCRIÇÃO ESTADUAL", value: recipient?.stateRegistration ?? "", weight: 2.5 },
    { label: "HORA DA SAÍDA/ENTRADA", value: "", weight: 1.5 }
  ], PAGE_BOX)
  return y + BLOCK_SPACING
}

export const drawTaxCalculation = (doc: Doc, note: DanfeNote, top: number): number => {
  const t = note.totals
  const money = (label: string, value: string | undefined, bold = false) => ({
    label,
    value: amount(value),
    weight: 1,
    align: "right" as const,
    bold
  })
  let y = drawCaption(doc, "CÁLCULO DO IMPOSTO", PAGE_BOX, top)
  y = drawCellRow(doc, y, [
    money("BASE DE CÁLC. DO ICMS", t.icmsBase),
    money("VALOR DO ICMS", t.icms),
    money("BASE DE CÁLC. ICMS S.T.", t.stBase),
    money("VALOR DO ICMS SUBST.", t.st),
    money("V. IMP. IMPORTAÇÃO", t.importTax),
    money("V. FCP SUBST.", t.fcpSt),
    money("V. PIS", t.pis),
    money("V. TOTAL PRODUTOS", t.products, true)
  ], PAGE_BOX)
  y = drawCellRow(doc, y, [
    money("VALOR DO FRETE", t.freight),
    money("VALOR DO SEGURO", t.insurance),
    money("DESCONTO", t.discount),
    money("OUTRAS DESPESAS", t.other),
    money("VALOR TOTAL IPI", t.ipi),
    money("V. TOT. TRIB.", t.approximateTaxes),
    money("V. COFINS", t.cofins),
    money("VALOR TOTAL DA NOTA", t.total, true)
  ], PAGE_BOX)
  return y + BLOCK_SPACING
}

export const drawCarrier = (doc: Doc, note: DanfeNote, top: number): number => {
  const empty = (label: string, weight: number) => ({ label, value: "", weight })
  let y = drawCaption(doc, "TRANSPORTADOR / VOLUMES TRANSPORTADOS", PAGE_BOX, top)
  y = drawCellRow(doc, y, [
    empty("NOME / RAZÃO SOCIAL", 4),
    { label: "FRETE POR CONTA", value: orEmpty(FREIGHT_MODES[note.freightMode]), weight: 2 },
    empty("CÓDIGO ANTT", 1.3),
    empty("PLACA DO VEÍCULO", 1.3),
    empty("UF", 0.6),
    empty("CNPJ / CPF", 2)
  ], PAGE_BOX)
  y = drawCellRow(doc, y, [
    empty("ENDEREÇO", 5),
    empty("MUNICÍPIO", 3),
    empty("UF", 0.6),
    empty("INSCRIÇÃO ESTADUAL", 2.6)
  ], PAGE_BOX)
  y = drawCellRow(doc, y, [
    empty("QUANTIDADE", 1),
    empty("ESPÉCIE", 1.5),
    empty("MARCA", 1.5),
    empty("NUMERAÇÃO", 1.5),
    empty("PESO BRUTO", 1.2),
    empty("PESO LÍQUIDO", 1.2)
  ], PAGE_BOX)
  return y + BLOCK_SPACING
}
