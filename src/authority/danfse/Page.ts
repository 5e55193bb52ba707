/**
 * The fixed parts of the DANFSe's pages: page 1's header, identification (access key, NFS-e and
 * DPS numbers and dates) with the QR code, the continuation pages' header, the homologation band,
 * the footer and the marks of a cancelled or replaced note. They are the same size whatever the note says; the blocks
 * that grow come below them.
 *
 * The QR code is drawn as vector squares from `QRCode.create(url).modules`, not as an image, so the
 * same note always gives the same bytes.
 */
import type { DanfseData, DanfseOptions } from "./DanfseData.js"
import { EMPTY, formatDate, formatDateTime, formatMunicipality, groupAccessKey, present } from "./Format.js"
import * as Labels from "./Labels.js"
import {
  ALERT,
  BLOCK_GAP,
  BLOCK_PADDING_X,
  clampLines,
  CONTENT_WIDTH,
  type Doc,
  drawAligned,
  drawLabel,
  drawLine,
  drawOutlinedMark,
  drawQrSymbol,
  FONT,
  FONT_BOLD,
  FOOTER_TOP,
  INK,
  INNER_LEFT,
  LABEL_HEIGHT,
  LABEL_INK,
  lineHeight,
  MARGIN,
  PAGE_HEIGHT,
  PAGE_WIDTH,
  RULE,
  wrapText
} from "./Layout.js"

/** The public consultation address the QR code carries. */
const danfseConsultationUrl = (accessKey: string): string =>
  `https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${accessKey}`

/** Error correction of the QR code: M (15 %), enough for a printed page and a small symbol. */
const QR_ERROR_CORRECTION = "M" as const

// The fixed parts' sizes, in points.
const HEADER_HEIGHT = 46
const CONTINUATION_HEADER_HEIGHT = 30
const IDENTIFICATION_TOP = MARGIN + HEADER_HEIGHT + 4
const IDENTIFICATION_HEIGHT = 126
const QR_COLUMN_WIDTH = 132
const QR_SIZE = 80
const HOMOLOGATION_BAND_HEIGHT = 16

/**
 * Where the QR code sits on page 1: a square of `size` points at (`x`, `y`) from the top-left
 * corner, with a quiet zone of at least four modules around it. Fixed whatever the note says (the
 * blocks that grow all come below it), so a check can find it on a rendered page.
 */
export const danfseQrCodeBox = {
  x: MARGIN + CONTENT_WIDTH - QR_COLUMN_WIDTH + (QR_COLUMN_WIDTH - QR_SIZE) / 2,
  y: IDENTIFICATION_TOP + 8,
  size: QR_SIZE
} as const

// ---------------------------------------------------------------------------------------------
// Page 1

const drawHeader = (doc: Doc, nfse: DanfseData, options: DanfseOptions) => {
  const top = MARGIN
  doc.lineWidth(0.6).rect(MARGIN, top, CONTENT_WIDTH, HEADER_HEIGHT).stroke(RULE)
  // Left: the NFS-e mark.
  drawLine(doc, "NFS-e", MARGIN + 8, top + 10, FONT_BOLD, 22, "#0b5e35")
  drawLine(doc, "Nota Fiscal de Serviço eletrônica", MARGIN + 8, top + 32, FONT, 6.5, LABEL_INK)
  // Centre: the document's name.
  const centreX = MARGIN + 150
  const centreWidth = CONTENT_WIDTH - 300
  drawAligned(doc, "DANFSe v2.0", centreX, centreWidth, top + 11, FONT_BOLD, 12, "center")
  drawAligned(doc, "Documento Auxiliar da NFS-e", centreX, centreWidth, top + 27, FONT, 9, "center")
  // Right: where it was issued and in which environment.
  const rightX = MARGIN + CONTENT_WIDTH - 146
  const municipality = present(nfse.issuer.municipalityName)
    ? nfse.issuer.municipalityName
    : formatMunicipality(nfse.service.municipalityName, nfse.service.municipalityCode)
  drawLabel(doc, "MUNICÍPIO EMISSOR", rightX, top + 8)
  const municipalityLines = clampLines(doc, wrapText(doc, municipality, 140, FONT_BOLD, 8), 1, 140, FONT_BOLD, 8)
  drawLine(doc, municipalityLines[0]!, rightX, top + 15.5, FONT_BOLD, 8)
  drawLabel(doc, "AMBIENTE", rightX, top + 28)
  drawLine(doc, options.environment === 1 ? "Produção" : "Homologação (produção restrita)", rightX, top + 35.5, FONT, 8)
}

const drawQrCode = (doc: Doc, url: string) =>
  drawQrSymbol(doc, url, QR_ERROR_CORRECTION, danfseQrCodeBox.x, danfseQrCodeBox.y, danfseQrCodeBox.size)

/** What the marks say: a replaced note is shown as such even when its cancellation is recorded too. */
const markOf = (options: DanfseOptions): string =>
  options.substituted === true ? "SUBSTITUÍDA" : options.cancelled ? "CANCELADA" : ""

const drawIdentification = (doc: Doc, nfse: DanfseData, options: DanfseOptions) => {
  const top = IDENTIFICATION_TOP
  doc.lineWidth(0.6).rect(MARGIN, top, CONTENT_WIDTH, IDENTIFICATION_HEIGHT).stroke(RULE)
  const qrColumnX = MARGIN + CONTENT_WIDTH - QR_COLUMN_WIDTH
  doc.moveTo(qrColumnX, top).lineTo(qrColumnX, top + IDENTIFICATION_HEIGHT).stroke(RULE)

  const left = INNER_LEFT
  const columnWidth = (qrColumnX - MARGIN - BLOCK_PADDING_X) / 3
  drawLabel(doc, "CHAVE DE ACESSO DA NFS-e", left, top + 6)
  drawLine(doc, groupAccessKey(nfse.accessKey), left, top + 15, FONT_BOLD, 10.5)

  const rows: ReadonlyArray<ReadonlyArray<readonly [string, string]>> = [
    [
      ["NÚMERO DA NFS-e", String(nfse.nfseNumber)],
      ["COMPETÊNCIA DA NFS-e", formatDate(nfse.dps.competence)],
      ["DATA E HORA DA EMISSÃO DA NFS-e", formatDateTime(nfse.processedAt)]
    ],
    [
      ["NÚMERO DA DPS", String(nfse.dps.number)],
      ["SÉRIE DA DPS", nfse.dps.series],
      ["DATA E HORA DA EMISSÃO DA DPS", formatDateTime(nfse.dps.emittedAt)]
    ]
  ]
  rows.forEach((row, r) => {
    const y = top + 34 + r * 23
    row.forEach(([label, value], c) => {
      drawLabel(doc, label, left + c * columnWidth, y)
      drawLine(doc, value, left + c * columnWidth, y + LABEL_HEIGHT + 0.5, FONT, 9)
    })
  })
  drawLabel(doc, "IDENTIFICADOR DA DPS", left, top + 80)
  drawLine(doc, nfse.dps.id, left, top + 80 + LABEL_HEIGHT + 0.5, FONT, 8)
  drawLabel(doc, "NÚMERO DO DFS-e", left + 2 * columnWidth, top + 80)
  drawLine(
    doc,
    present(nfse.dfseNumber) ? nfse.dfseNumber : EMPTY,
    left + 2 * columnWidth,
    top + 80 + LABEL_HEIGHT + 0.5,
    FONT,
    9
  )
  const marked = options.cancelled || options.substituted === true
  const row4: ReadonlyArray<readonly [string, string]> = [
    ["SITUAÇÃO DA NFS-e", [markOf(options), Labels.noteStatus(nfse.status)].filter((part) => part !== "").join(" - ")],
    ["EMITENTE DA NFS-e", Labels.emitter(nfse.emitter)],
    ["AMBIENTE GERADOR", Labels.generator(nfse.generator)]
  ]
  row4.forEach(([label, value], c) => {
    drawLabel(doc, label, left + c * columnWidth, top + 102)
    const color = c === 0 && marked ? ALERT : INK
    const font = c === 0 ? FONT_BOLD : FONT
    const lines = clampLines(doc, wrapText(doc, value, columnWidth - 6, font, 7), 2, columnWidth - 6, font, 7)
    lines.forEach((line, i) =>
      drawLine(doc, line, left + c * columnWidth, top + 102 + LABEL_HEIGHT + 0.5 + i * lineHeight(7), font, 7, color)
    )
  })

  drawQrCode(doc, danfseConsultationUrl(nfse.accessKey))
  const authenticity = wrapText(
    doc,
    "A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR ou pela consulta da chave de acesso no portal nacional da NFS-e.",
    QR_COLUMN_WIDTH - 12,
    FONT,
    5.6
  )
  authenticity.forEach((line, i) =>
    drawAligned(
      doc,
      line,
      qrColumnX + 6,
      QR_COLUMN_WIDTH - 12,
      danfseQrCodeBox.y + danfseQrCodeBox.size + 5 + i * lineHeight(5.6),
      FONT,
      5.6,
      "center",
      LABEL_INK
    )
  )
}

/**
 * Page 1 down to its first block: the header, the identification and, in homologation, the band.
 * Returns where the blocks start.
 */
export const drawFirstPageTop = (doc: Doc, nfse: DanfseData, options: DanfseOptions): number => {
  drawHeader(doc, nfse, options)
  drawIdentification(doc, nfse, options)
  const below = IDENTIFICATION_TOP + IDENTIFICATION_HEIGHT + BLOCK_GAP
  return options.environment === 2 ? drawHomologationBand(doc, below) : below
}

// ---------------------------------------------------------------------------------------------
// Continuation pages

/** Where the blocks of a continuation page start: below its header and, in homologation, the band. */
export const continuationTop = (options: DanfseOptions): number =>
  MARGIN + CONTINUATION_HEADER_HEIGHT + BLOCK_GAP +
  (options.environment === 2 ? HOMOLOGATION_BAND_HEIGHT + BLOCK_GAP : 0)

export const drawContinuationHeader = (doc: Doc, nfse: DanfseData, options: DanfseOptions): number => {
  doc.lineWidth(0.6).rect(MARGIN, MARGIN, CONTENT_WIDTH, CONTINUATION_HEADER_HEIGHT).stroke(RULE)
  drawLine(doc, "DANFSe v2.0 - Documento Auxiliar da NFS-e (continuação)", INNER_LEFT, MARGIN + 5, FONT_BOLD, 9)
  drawLabel(doc, "CHAVE DE ACESSO DA NFS-e", INNER_LEFT, MARGIN + 17)
  drawLine(doc, groupAccessKey(nfse.accessKey), INNER_LEFT + 90, MARGIN + 16, FONT_BOLD, 8)
  drawLine(doc, `NFS-e nº ${nfse.nfseNumber}`, MARGIN + CONTENT_WIDTH - 110, MARGIN + 16, FONT, 8)
  const below = MARGIN + CONTINUATION_HEADER_HEIGHT + BLOCK_GAP
  return options.environment === 2 ? drawHomologationBand(doc, below) : below
}

// ---------------------------------------------------------------------------------------------
// On every page

const drawHomologationBand = (doc: Doc, top: number): number => {
  doc.rect(MARGIN, top, CONTENT_WIDTH, HOMOLOGATION_BAND_HEIGHT).fill(ALERT)
  drawAligned(
    doc,
    "NFS-e SEM VALIDADE JURÍDICA - emitida em ambiente de homologação (produção restrita)",
    MARGIN,
    CONTENT_WIDTH,
    top + 4,
    FONT_BOLD,
    9,
    "center",
    "#ffffff"
  )
  return top + HOMOLOGATION_BAND_HEIGHT + BLOCK_GAP
}

export const drawFooter = (doc: Doc, page: number, pages: number) => {
  doc.lineWidth(0.4).moveTo(MARGIN, FOOTER_TOP - 2).lineTo(MARGIN + CONTENT_WIDTH, FOOTER_TOP - 2).stroke(RULE)
  drawLine(
    doc,
    "Documento auxiliar da NFS-e: a NFS-e é o arquivo XML autorizado pelo Sistema Nacional NFS-e. " +
      "Datas e horas no horário de Brasília (UTC-3).",
    MARGIN,
    FOOTER_TOP,
    FONT,
    6,
    LABEL_INK
  )
  drawAligned(doc, `Página ${page} de ${pages}`, MARGIN, CONTENT_WIDTH, FOOTER_TOP, FONT, 6, "right", LABEL_INK)
}

/**
 * The mark of a cancelled or replaced note: its word drawn diagonally across the page as an outline
 * only, half transparent, so every value beneath stays readable, and the same word in plain text
 * above the page's frame, where it is read first when the page is read as text.
 */
export const drawMark = (doc: Doc, options: DanfseOptions) => {
  if (!options.cancelled && options.substituted !== true) return
  const word = markOf(options)
  drawOutlinedMark(doc, word, word.length > 9 ? 80 : 96, PAGE_WIDTH / 2, PAGE_HEIGHT / 2)
  const caption = options.substituted === true
    ? "NFS-e SUBSTITUÍDA por outra NFS-e (evento de substituição registrado no Sistema Nacional NFS-e)"
    : "NFS-e CANCELADA por evento registrado no Sistema Nacional NFS-e"
  drawAligned(doc, caption, MARGIN, CONTENT_WIDTH, MARGIN - 11, FONT_BOLD, 7, "center", ALERT)
}
