/**
 * The DANFSe (Documento Auxiliar da NFS-e): the printable rendering of an authorized NFS-e, as the
 * national DANFSe API serves it in `sefin` mode and as the service (simulator mode) and the local
 * authority render it themselves. Modelled on the national layout (NT 008, "DANFSe v1.0"): header,
 * access key with its QR code, NFS-e and DPS identification, issuer, taker, intermediary, service,
 * municipal taxation, totals and complementary information, with Portuguese labels.
 *
 * One A4 page. A long description or long notes (2 000 characters each in the XSD) first shrink the
 * type (8 → 7 → 6 pt); what still does not fit continues on extra pages, so no text ever runs off a
 * page. Text is wrapped here, line by line, rather than by pdfkit: the layout must know every line
 * before drawing to decide the size and the split, and pdfkit's own flow would add pages on its own.
 *
 * The output is a pure function of its input: the PDF dates and file id come from the NFS-e's
 * processing time, fonts are the standard ones (Helvetica, WinAnsi: every pt-BR accent), and the QR
 * code is drawn as vector squares from `QRCode.create(url).modules`, so the same note always gives
 * the same bytes.
 */
import PDFDocument from "pdfkit"
import QRCode from "qrcode"
import { isValidCnpj, isValidCpf, normalizeTaxId } from "../domain/TaxId.js"

/**
 * The NFS-e data the DANFSe prints. Structurally the `ParsedNfse` of Nfse.ts (DESIGN, issue 9),
 * reduced to the fields drawn here, so a `ParsedNfse` can be passed as it is.
 */
export interface DanfseAddress {
  readonly street?: string | undefined
  readonly number?: string | undefined
  readonly complement?: string | undefined
  readonly district?: string | undefined
  readonly municipalityCode?: string | undefined
  readonly municipalityName?: string | undefined
  readonly state?: string | undefined
  readonly postalCode?: string | undefined
}

export interface DanfseData {
  readonly accessKey: string
  readonly nfseNumber: string | number
  /** dhProc as written in the XML, "YYYY-MM-DDThh:mm:ss[.fff]±hh:mm". */
  readonly processedAt: string
  readonly issuer: {
    readonly taxId: string
    readonly name?: string | undefined
    readonly municipalityName?: string | undefined
    readonly address?: DanfseAddress | undefined
    readonly email?: string | undefined
    readonly phone?: string | undefined
  }
  readonly taker?: {
    readonly taxId?: string | undefined
    readonly name?: string | undefined
    readonly email?: string | undefined
    readonly address?: DanfseAddress | undefined
  } | undefined
  readonly service: {
    readonly code: string
    readonly description: string
    readonly nbsCode?: string | undefined
    readonly municipalityCode: string
    readonly municipalityName?: string | undefined
  }
  /** Decimal strings as in the XML ("1500.00"; rate "2.00"). */
  readonly amounts: {
    readonly services: string
    readonly deductions?: string | undefined
    readonly base?: string | undefined
    readonly issRate?: string | undefined
    readonly issAmount?: string | undefined
    readonly net?: string | undefined
  }
  readonly dps: {
    readonly id: string
    readonly series: string
    readonly number: string | number
    readonly emittedAt: string
    readonly competence: string
  }
  readonly notes?: string | undefined
}

export interface DanfseOptions {
  readonly cancelled: boolean
  /** tpAmb: 1 production, 2 homologation ("produção restrita"), which prints "SEM VALIDADE JURÍDICA". */
  readonly environment: 1 | 2
}

/** The public consultation address the QR code carries. */
export const danfseConsultationUrl = (accessKey: string): string =>
  `https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${accessKey}`

/** Error correction of the QR code: M (15 %), enough for a printed page and a small symbol. */
const QR_ERROR_CORRECTION = "M" as const

// ---------------------------------------------------------------------------------------------
// Page geometry (PDF points, origin top-left as pdfkit draws)

const PAGE_WIDTH = 595.28
const PAGE_HEIGHT = 841.89
const MARGIN = 22
const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN
const FOOTER_TOP = PAGE_HEIGHT - MARGIN - 8
const CONTENT_BOTTOM = FOOTER_TOP - 4

const HEADER_HEIGHT = 50
const CONTINUATION_HEADER_HEIGHT = 30
const IDENTIFICATION_TOP = MARGIN + HEADER_HEIGHT + 4
const IDENTIFICATION_HEIGHT = 128
const QR_COLUMN_WIDTH = 132
const QR_SIZE = 84

/**
 * Where the QR code sits on page 1: a square of `size` points at (`x`, `y`) from the top-left
 * corner, with a quiet zone of at least four modules around it. Fixed whatever the note says (the
 * blocks that grow all come below it), so a check can find it on a rendered page.
 */
export const danfseQrCodeBox = {
  x: MARGIN + CONTENT_WIDTH - QR_COLUMN_WIDTH + (QR_COLUMN_WIDTH - QR_SIZE) / 2,
  y: IDENTIFICATION_TOP + 10,
  size: QR_SIZE
} as const

const FONT = "Helvetica"
const FONT_BOLD = "Helvetica-Bold"
const INK = "#000000"
const LABEL_INK = "#444444"
const RULE = "#7a7a7a"
const TITLE_FILL = "#e4e4e4"
const ALERT = "#c00000"

const BLOCK_GAP = 4
const BLOCK_TITLE_HEIGHT = 11
const BLOCK_TITLE_SIZE = 7
const BLOCK_PADDING_X = 4
const LABEL_SIZE = 5.8
const LABEL_HEIGHT = 7.5
const VALUE_SIZE = 8
const ROW_PADDING = 2.5
const FIELD_GUTTER = 4
const FIELD_MAX_LINES = 4
const TEXT_SIZES = [8, 7, 6] as const
const HOMOLOGATION_BAND_HEIGHT = 16

const lineHeight = (size: number): number => size * 1.22

// ---------------------------------------------------------------------------------------------
// Formatting (pt-BR)

const EMPTY = "-"

const present = (s: string | undefined | null): s is string => s !== undefined && s !== null && s.trim() !== ""

/** "1500.00" → "1.500,00": decimal strings are regrouped as text, never through floats. */
const formatDecimal = (raw: string): string | null => {
  const match = /^\s*(-?)(\d+)(?:\.(\d+))?\s*$/.exec(raw)
  if (match === null) return null
  const [, sign, integer, fraction = ""] = match
  const digits = integer!.replace(/^0+(?=\d)/, "")
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ".")
  return `${sign}${grouped},${fraction.padEnd(2, "0")}`
}

export const formatMoney = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const decimal = formatDecimal(raw)
  return decimal === null ? raw : `R$ ${decimal}`
}

export const formatRate = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const decimal = formatDecimal(raw)
  return decimal === null ? raw : `${decimal}%`
}

/** "2026-01-15T19:43:39-03:00" → "15/01/2026 19:43:39", the wall-clock time the authority wrote. */
export const formatDateTime = (raw: string): string => {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(raw)
  return match === null ? raw : `${match[3]}/${match[2]}/${match[1]} ${match[4]}:${match[5]}:${match[6]}`
}

export const formatDate = (raw: string): string => {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(raw)
  return match === null ? raw : `${match[3]}/${match[2]}/${match[1]}`
}

/**
 * CNPJ "00.000.000/0000-00" (alphanumeric ones too: 12 characters [0-9A-Z] + 2 digits), CPF
 * "000.000.000-00". Only ids whose check digits hold get the punctuation: a foreign NIF can have
 * the shape of a CNPJ once its own punctuation is stripped, and is printed as given.
 */
export const formatTaxId = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const id = normalizeTaxId(raw.trim())
  if (isValidCnpj(id)) return `${id.slice(0, 2)}.${id.slice(2, 5)}.${id.slice(5, 8)}/${id.slice(8, 12)}-${id.slice(12)}`
  if (isValidCpf(id)) return `${id.slice(0, 3)}.${id.slice(3, 6)}.${id.slice(6, 9)}-${id.slice(9)}`
  return raw.trim()
}

/** The 50-digit key in groups of four, as printed documents show keys to be read aloud. */
export const groupAccessKey = (key: string): string => key.replace(/(.{4})(?=.)/g, "$1 ")

const formatPostalCode = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const digits = raw.replace(/\D/g, "")
  return digits.length === 8 ? `${digits.slice(0, 5)}-${digits.slice(5)}` : raw.trim()
}

const formatPhone = (raw: string | undefined): string => {
  if (!present(raw)) return EMPTY
  const digits = raw.replace(/\D/g, "")
  if (digits.length === 10) return `(${digits.slice(0, 2)}) ${digits.slice(2, 6)}-${digits.slice(6)}`
  if (digits.length === 11) return `(${digits.slice(0, 2)}) ${digits.slice(2, 7)}-${digits.slice(7)}`
  return raw.trim()
}

/** cTribNac "040303" → "04.03.03" (item, subitem, desdobro of the national list). */
const formatServiceCode = (raw: string): string =>
  /^\d{6}$/.test(raw) ? `${raw.slice(0, 2)}.${raw.slice(2, 4)}.${raw.slice(4)}` : raw

/** NBS "123012200" → "1.2301.22.00". */
const formatNbsCode = (raw: string | undefined): string =>
  !present(raw) ? EMPTY : /^\d{9}$/.test(raw) ? `${raw[0]}.${raw.slice(1, 5)}.${raw.slice(5, 7)}.${raw.slice(7)}` : raw

const formatStreetLine = (address: DanfseAddress | undefined): string => {
  if (address === undefined) return EMPTY
  const parts = [
    [address.street, address.number].filter(present).join(", "),
    address.complement,
    address.district
  ].filter(present)
  return parts.length === 0 ? EMPTY : parts.join(" - ")
}

const formatMunicipality = (name: string | undefined, code: string | undefined, state?: string): string => {
  const place = present(name) ? name : present(code) ? code : undefined
  if (place === undefined) return EMPTY
  return present(state) ? `${place} - ${state}` : place
}

// WinAnsiEncoding (the standard fonts' encoding) beyond Latin-1: what it can print in 0x80–0x9F.
const WIN_ANSI_EXTRAS = new Set(Array.from("€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ"))

/**
 * Text the standard fonts can draw: composed accents (NFC), tabs as spaces, control characters
 * dropped, and any character outside WinAnsi (emoji, other scripts) as "?", rather than as the
 * garbage glyphs pdfkit would pick for them.
 */
const printable = (text: string): string => {
  let out = ""
  for (const char of text.normalize("NFC").replace(/\r\n?/g, "\n").replace(/\t/g, " ")) {
    const code = char.codePointAt(0)!
    if (char === "\n" || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRAS.has(char)) {
      out += char
    } else if (code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code < 0xa0)) {
      out += "?"
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Line wrapping

type Doc = PDFKit.PDFDocument

const measure = (doc: Doc, font: string, size: number) => {
  doc.font(font).fontSize(size)
  return (s: string) => doc.widthOfString(s)
}

/**
 * Widths of words and characters, each measured once: a line's width is the sum of its words and
 * spaces. That leaves out kerning across a space, which in Helvetica only ever narrows a line, so
 * a line measured to fit does fit, and wrapping 2 000 characters stays linear.
 */
const wordMeasure = (doc: Doc, font: string, size: number) => {
  const widthOf = measure(doc, font, size)
  const known = new Map<string, number>()
  return (s: string): number => {
    let width = known.get(s)
    if (width === undefined) {
      width = widthOf(s)
      known.set(s, width)
    }
    return width
  }
}

/** A word wider than the line is cut between characters. */
const splitLongWord = (word: string, width: number, widthOf: (s: string) => number): Array<string> => {
  const pieces: Array<string> = []
  let piece = ""
  let pieceWidth = 0
  for (const char of word) {
    const charWidth = widthOf(char)
    if (piece !== "" && pieceWidth + charWidth > width) {
      pieces.push(piece)
      piece = ""
      pieceWidth = 0
    }
    piece += char
    pieceWidth += charWidth
  }
  if (piece !== "") pieces.push(piece)
  return pieces
}

/**
 * Paragraphs kept (the text's line breaks; runs of blank lines as one), spaces collapsed, words
 * wrapped to `width`.
 */
const wrapText = (doc: Doc, text: string, width: number, font: string, size: number): Array<string> => {
  const widthOf = wordMeasure(doc, font, size)
  const spaceWidth = widthOf(" ")
  const lines: Array<string> = []
  for (const paragraph of printable(text).split("\n")) {
    const words = paragraph.split(" ").filter((w) => w !== "")
    if (words.length === 0) {
      if (lines.length > 0 && lines[lines.length - 1] !== "") lines.push("")
      continue
    }
    let line = ""
    let lineWidth = 0
    for (const word of words) {
      const wordWidth = widthOf(word)
      if (line !== "" && lineWidth + spaceWidth + wordWidth <= width) {
        line += ` ${word}`
        lineWidth += spaceWidth + wordWidth
        continue
      }
      if (line !== "") lines.push(line)
      if (wordWidth <= width) {
        line = word
        lineWidth = wordWidth
      } else {
        const pieces = splitLongWord(word, width, widthOf)
        lines.push(...pieces.slice(0, -1))
        line = pieces[pieces.length - 1]!
        lineWidth = widthOf(line)
      }
    }
    lines.push(line)
  }
  // A blank line at the end only wastes room.
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  return lines.length === 0 ? [EMPTY] : lines
}

/** At most `max` lines; a cut shows as "…" at the end of the last one, within the width. */
const clampLines = (doc: Doc, lines: Array<string>, max: number, width: number, font: string, size: number) => {
  if (lines.length <= max) return lines
  const widthOf = measure(doc, font, size)
  let last = lines[max - 1]!
  while (last !== "" && widthOf(`${last}…`) > width) last = last.slice(0, -1)
  return [...lines.slice(0, max - 1), `${last}…`]
}

// ---------------------------------------------------------------------------------------------
// Blocks: a titled box of rows, measured before it is drawn

interface Field {
  readonly label: string
  readonly value: string
  /** Twelfths of the block's width. */
  readonly span: number
  readonly bold?: boolean
}

type Row =
  | { readonly kind: "fields"; readonly fields: ReadonlyArray<Field> }
  | { readonly kind: "text"; readonly label?: string; readonly lines: ReadonlyArray<string>; readonly size: number; readonly note?: string | undefined }
  | { readonly kind: "centered"; readonly text: string }

interface PreparedField extends Field {
  readonly x: number
  readonly width: number
  readonly lines: ReadonlyArray<string>
}

type PreparedRow =
  | { readonly kind: "fields"; readonly fields: ReadonlyArray<PreparedField>; readonly height: number }
  | (Extract<Row, { kind: "text" }> & { readonly height: number })
  | (Extract<Row, { kind: "centered" }> & { readonly height: number })

interface Block {
  readonly title: string
  readonly rows: ReadonlyArray<PreparedRow>
  readonly height: number
}

const INNER_LEFT = MARGIN + BLOCK_PADDING_X
const INNER_WIDTH = CONTENT_WIDTH - 2 * BLOCK_PADDING_X
/** Width available to a paragraph that spans the whole block. */
const TEXT_WIDTH = INNER_WIDTH

const textRowHeight = (lineCount: number, size: number, label: boolean, note: boolean): number =>
  ROW_PADDING * 2 + (label ? LABEL_HEIGHT : 0) + (lineCount + (note ? 1 : 0)) * lineHeight(size)

const prepareRow = (doc: Doc, row: Row): PreparedRow => {
  switch (row.kind) {
    case "fields": {
      let x = INNER_LEFT
      const fields = row.fields.map((field) => {
        const width = (INNER_WIDTH * field.span) / 12 - FIELD_GUTTER
        const font = field.bold ? FONT_BOLD : FONT
        const lines = clampLines(doc, wrapText(doc, field.value, width, font, VALUE_SIZE), FIELD_MAX_LINES, width, font, VALUE_SIZE)
        const prepared = { ...field, x, width, lines }
        x += (INNER_WIDTH * field.span) / 12
        return prepared
      })
      const lineCount = Math.max(1, ...fields.map((f) => f.lines.length))
      return { kind: "fields", fields, height: ROW_PADDING * 2 + LABEL_HEIGHT + lineCount * lineHeight(VALUE_SIZE) }
    }
    case "text":
      return { ...row, height: textRowHeight(row.lines.length, row.size, row.label !== undefined, row.note !== undefined) }
    case "centered":
      return { ...row, height: ROW_PADDING * 2 + lineHeight(VALUE_SIZE) }
  }
}

const prepareBlock = (doc: Doc, title: string, rows: ReadonlyArray<Row>): Block => {
  const prepared = rows.map((row) => prepareRow(doc, row))
  return { title, rows: prepared, height: BLOCK_TITLE_HEIGHT + prepared.reduce((sum, row) => sum + row.height, 0) + 1 }
}

const drawLine = (doc: Doc, text: string, x: number, y: number, font: string, size: number, color = INK) => {
  if (text === "") return
  doc.font(font).fontSize(size).fillColor(color).text(text, x, y, { lineBreak: false })
}

/**
 * One line centred or right-aligned in `width`. pdfkit only aligns text it wraps itself (with
 * `lineBreak: false` its alignment arithmetic has no line width), so the offset is computed here.
 */
const drawAligned = (
  doc: Doc,
  text: string,
  x: number,
  width: number,
  y: number,
  font: string,
  size: number,
  align: "center" | "right",
  color = INK
) => {
  const textWidth = measure(doc, font, size)(text)
  drawLine(doc, text, align === "center" ? x + (width - textWidth) / 2 : x + width - textWidth, y, font, size, color)
}

const drawLabel = (doc: Doc, label: string, x: number, y: number) =>
  drawLine(doc, label, x, y, FONT_BOLD, LABEL_SIZE, LABEL_INK)

const drawBlockFrame = (doc: Doc, title: string, top: number, height: number) => {
  doc.rect(MARGIN, top, CONTENT_WIDTH, BLOCK_TITLE_HEIGHT).fill(TITLE_FILL)
  doc.lineWidth(0.6).rect(MARGIN, top, CONTENT_WIDTH, height).stroke(RULE)
  drawLine(doc, title, INNER_LEFT, top + 2.6, FONT_BOLD, BLOCK_TITLE_SIZE)
}

/** Draws the block with its top at `top`; returns where the next block starts. */
const drawBlock = (doc: Doc, block: Block, top: number): number => {
  drawBlockFrame(doc, block.title, top, block.height)
  let y = top + BLOCK_TITLE_HEIGHT
  for (const row of block.rows) {
    switch (row.kind) {
      case "fields":
        for (const field of row.fields) {
          drawLabel(doc, field.label, field.x, y + ROW_PADDING)
          field.lines.forEach((line, i) =>
            drawLine(doc, line, field.x, y + ROW_PADDING + LABEL_HEIGHT + i * lineHeight(VALUE_SIZE), field.bold ? FONT_BOLD : FONT, VALUE_SIZE)
          )
        }
        break
      case "text": {
        let lineTop = y + ROW_PADDING
        if (row.label !== undefined) {
          drawLabel(doc, row.label, INNER_LEFT, lineTop)
          lineTop += LABEL_HEIGHT
        }
        for (const line of row.lines) {
          drawLine(doc, line, INNER_LEFT, lineTop, FONT, row.size)
          lineTop += lineHeight(row.size)
        }
        if (row.note !== undefined) drawLine(doc, row.note, INNER_LEFT, lineTop, "Helvetica-Oblique", row.size, LABEL_INK)
        break
      }
      case "centered":
        drawAligned(doc, row.text, MARGIN, CONTENT_WIDTH, y + ROW_PADDING, FONT_BOLD, VALUE_SIZE, "center")
        break
    }
    y += row.height
  }
  return top + block.height + BLOCK_GAP
}

// ---------------------------------------------------------------------------------------------
// The fixed parts of page 1

const drawHeader = (doc: Doc, nfse: DanfseData, options: DanfseOptions) => {
  const top = MARGIN
  doc.lineWidth(0.6).rect(MARGIN, top, CONTENT_WIDTH, HEADER_HEIGHT).stroke(RULE)
  // Left: the NFS-e mark.
  drawLine(doc, "NFS-e", MARGIN + 8, top + 10, FONT_BOLD, 22, "#0b5e35")
  drawLine(doc, "Nota Fiscal de Serviço eletrônica", MARGIN + 8, top + 34, FONT, 6.5, LABEL_INK)
  // Centre: the document's name.
  const centreX = MARGIN + 150
  const centreWidth = CONTENT_WIDTH - 300
  drawAligned(doc, "DANFSe v1.0", centreX, centreWidth, top + 11, FONT_BOLD, 12, "center")
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

const drawQrCode = (doc: Doc, url: string) => {
  const modules = QRCode.create(url, { errorCorrectionLevel: QR_ERROR_CORRECTION }).modules
  const moduleSize = danfseQrCodeBox.size / modules.size
  // One rectangle per horizontal run of dark modules, filled at once: a small, exact vector symbol.
  for (let row = 0; row < modules.size; row++) {
    let col = 0
    while (col < modules.size) {
      if (!modules.get(row, col)) {
        col++
        continue
      }
      const start = col
      while (col < modules.size && modules.get(row, col)) col++
      doc.rect(danfseQrCodeBox.x + start * moduleSize, danfseQrCodeBox.y + row * moduleSize, (col - start) * moduleSize, moduleSize)
    }
  }
  doc.fill(INK)
}

const drawIdentification = (doc: Doc, nfse: DanfseData) => {
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
    const y = top + 36 + r * 24
    row.forEach(([label, value], c) => {
      drawLabel(doc, label, left + c * columnWidth, y)
      drawLine(doc, value, left + c * columnWidth, y + LABEL_HEIGHT + 0.5, FONT, 9)
    })
  })
  drawLabel(doc, "IDENTIFICADOR DA DPS", left, top + 86)
  drawLine(doc, nfse.dps.id, left, top + 86 + LABEL_HEIGHT + 0.5, FONT, 8)

  drawQrCode(doc, danfseConsultationUrl(nfse.accessKey))
  const authenticity = wrapText(
    doc,
    "A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR ou pela consulta da chave de acesso no portal nacional da NFS-e.",
    QR_COLUMN_WIDTH - 12,
    FONT,
    5.6
  )
  authenticity.forEach((line, i) =>
    drawAligned(doc, line, qrColumnX + 6, QR_COLUMN_WIDTH - 12, danfseQrCodeBox.y + danfseQrCodeBox.size + 5 + i * lineHeight(5.6), FONT, 5.6, "center", LABEL_INK)
  )
}

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

const drawFooter = (doc: Doc, page: number, pages: number) => {
  doc.lineWidth(0.4).moveTo(MARGIN, FOOTER_TOP - 2).lineTo(MARGIN + CONTENT_WIDTH, FOOTER_TOP - 2).stroke(RULE)
  drawLine(doc, "Documento auxiliar da NFS-e: a NFS-e é o arquivo XML autorizado pelo Sistema Nacional NFS-e.", MARGIN, FOOTER_TOP, FONT, 6, LABEL_INK)
  drawAligned(doc, `Página ${page} de ${pages}`, MARGIN, CONTENT_WIDTH, FOOTER_TOP, FONT, 6, "right", LABEL_INK)
}

/** A large framed stamp across the middle of the page, translucent so the data stays readable. */
const drawCancelledStamp = (doc: Doc) => {
  const width = 400
  const height = 92
  const x = (PAGE_WIDTH - width) / 2
  const y = PAGE_HEIGHT / 2 - height / 2
  doc.save()
  doc.fillOpacity(0.5).rect(x, y, width, height).fill("#ffffff")
  doc.fillOpacity(1).lineWidth(4).rect(x, y, width, height).stroke(ALERT)
  drawAligned(doc, "CANCELADA", x, width, y + 12, FONT_BOLD, 64, "center", ALERT)
  drawAligned(doc, "NFS-e cancelada por evento registrado no Sistema Nacional NFS-e", x, width, y + 72, FONT_BOLD, 9, "center", ALERT)
  doc.restore()
}

// ---------------------------------------------------------------------------------------------
// The blocks of page 1

const partyBlocks = (doc: Doc, nfse: DanfseData): Array<Block> => {
  const issuer = nfse.issuer
  const issuerBlock = prepareBlock(doc, "EMITENTE DA NFS-e - PRESTADOR DO SERVIÇO", [
    {
      kind: "fields",
      fields: [
        { label: "CNPJ / CPF / NIF", value: formatTaxId(issuer.taxId), span: 4 },
        { label: "TELEFONE", value: formatPhone(issuer.phone), span: 3 },
        { label: "E-MAIL", value: present(issuer.email) ? issuer.email : EMPTY, span: 5 }
      ]
    },
    { kind: "fields", fields: [{ label: "NOME / NOME EMPRESARIAL", value: present(issuer.name) ? issuer.name : EMPTY, span: 12, bold: true }] },
    {
      kind: "fields",
      fields: [
        { label: "ENDEREÇO", value: formatStreetLine(issuer.address), span: 7 },
        {
          label: "MUNICÍPIO",
          value: formatMunicipality(issuer.address?.municipalityName ?? issuer.municipalityName, issuer.address?.municipalityCode, issuer.address?.state),
          span: 3
        },
        { label: "CEP", value: formatPostalCode(issuer.address?.postalCode), span: 2 }
      ]
    }
  ])
  const taker = nfse.taker
  const takerBlock = taker === undefined || (!present(taker.taxId) && !present(taker.name))
    ? prepareBlock(doc, "TOMADOR DO SERVIÇO", [{ kind: "centered", text: "TOMADOR DO SERVIÇO NÃO IDENTIFICADO NA NFS-e" }])
    : prepareBlock(doc, "TOMADOR DO SERVIÇO", [
      {
        kind: "fields",
        fields: [
          { label: "CNPJ / CPF / NIF", value: formatTaxId(taker.taxId), span: 4 },
          { label: "E-MAIL", value: present(taker.email) ? taker.email : EMPTY, span: 8 }
        ]
      },
      { kind: "fields", fields: [{ label: "NOME / NOME EMPRESARIAL", value: present(taker.name) ? taker.name : EMPTY, span: 12, bold: true }] },
      {
        kind: "fields",
        fields: [
          { label: "ENDEREÇO", value: formatStreetLine(taker.address), span: 7 },
          {
            label: "MUNICÍPIO",
            value: formatMunicipality(taker.address?.municipalityName, taker.address?.municipalityCode, taker.address?.state),
            span: 3
          },
          { label: "CEP", value: formatPostalCode(taker.address?.postalCode), span: 2 }
        ]
      }
    ])
  const intermediaryBlock = prepareBlock(doc, "INTERMEDIÁRIO DO SERVIÇO", [
    { kind: "centered", text: "INTERMEDIÁRIO DO SERVIÇO NÃO IDENTIFICADO NA NFS-e" }
  ])
  return [issuerBlock, takerBlock, intermediaryBlock]
}

const serviceFields = (nfse: DanfseData): Row => ({
  kind: "fields",
  fields: [
    { label: "CÓDIGO DE TRIBUTAÇÃO NACIONAL", value: formatServiceCode(nfse.service.code), span: 4 },
    { label: "CÓDIGO NBS", value: formatNbsCode(nfse.service.nbsCode), span: 3 },
    { label: "LOCAL DA PRESTAÇÃO", value: formatMunicipality(nfse.service.municipalityName, nfse.service.municipalityCode), span: 5 }
  ]
})

const amountBlocks = (doc: Doc, nfse: DanfseData): Array<Block> => {
  const amounts = nfse.amounts
  const taxation = prepareBlock(doc, "TRIBUTAÇÃO MUNICIPAL (ISSQN)", [
    {
      kind: "fields",
      fields: [
        { label: "MUNICÍPIO DE INCIDÊNCIA DO ISSQN", value: formatMunicipality(nfse.service.municipalityName, nfse.service.municipalityCode), span: 3 },
        { label: "BASE DE CÁLCULO DO ISSQN", value: formatMoney(amounts.base), span: 3 },
        { label: "ALÍQUOTA APLICADA", value: formatRate(amounts.issRate), span: 3 },
        { label: "ISSQN APURADO", value: formatMoney(amounts.issAmount), span: 3 }
      ]
    }
  ])
  const totals = prepareBlock(doc, "VALOR TOTAL DA NFS-e", [
    {
      kind: "fields",
      fields: [
        { label: "VALOR DO SERVIÇO", value: formatMoney(amounts.services), span: 3 },
        { label: "TOTAL DEDUÇÕES / REDUÇÕES", value: formatMoney(amounts.deductions), span: 3 },
        { label: "ISSQN APURADO", value: formatMoney(amounts.issAmount), span: 3 },
        { label: "VALOR LÍQUIDO DA NFS-e", value: formatMoney(amounts.net), span: 3, bold: true }
      ]
    }
  ])
  return [taxation, totals]
}

// ---------------------------------------------------------------------------------------------
// Fitting the two free texts

interface TextSplit {
  readonly size: number
  readonly descriptionOnPage1: ReadonlyArray<string>
  readonly notesOnPage1: ReadonlyArray<string>
  readonly descriptionRest: ReadonlyArray<string>
  readonly notesRest: ReadonlyArray<string>
}

/**
 * The largest size at which description and notes fit page 1 with everything else; failing that,
 * the smallest size, page 1 filled and the rest of each text carried over.
 */
const splitTexts = (doc: Doc, description: string, notes: string, room: number): TextSplit => {
  for (const size of TEXT_SIZES) {
    const descriptionLines = wrapText(doc, description, TEXT_WIDTH, FONT, size)
    const noteLines = wrapText(doc, notes, TEXT_WIDTH, FONT, size)
    const needed = (descriptionLines.length + noteLines.length) * lineHeight(size)
    if (needed <= room) {
      return { size, descriptionOnPage1: descriptionLines, notesOnPage1: noteLines, descriptionRest: [], notesRest: [] }
    }
    if (size === TEXT_SIZES[TEXT_SIZES.length - 1]) {
      // Two lines of the room go to the "continues on page n" notes. Each text gets half of the
      // rest, or more when the other needs less; with no room at all both continue whole.
      const capacity = Math.max(0, Math.floor(room / lineHeight(size)) - 2)
      const half = Math.floor(capacity / 2)
      const forDescription = Math.min(descriptionLines.length, Math.max(half, capacity - noteLines.length))
      const forNotes = Math.min(noteLines.length, capacity - forDescription)
      return {
        size,
        descriptionOnPage1: descriptionLines.slice(0, forDescription),
        notesOnPage1: noteLines.slice(0, forNotes),
        descriptionRest: descriptionLines.slice(forDescription),
        notesRest: noteLines.slice(forNotes)
      }
    }
  }
  throw new Error("unreachable: the last size always returns")
}

interface ContinuationSection {
  readonly title: string
  readonly lines: ReadonlyArray<string>
}

const continued = (title: string) => `${title} (continuação)`

/** Continuation pages: each a list of (title, lines) chunks, filled top to bottom. */
const paginate = (sections: ReadonlyArray<ContinuationSection>, size: number, firstLineTop: number) => {
  const pages: Array<Array<ContinuationSection>> = []
  let page: Array<ContinuationSection> = []
  let y = firstLineTop
  const newPage = () => {
    pages.push(page)
    page = []
    y = firstLineTop
  }
  for (const section of sections) {
    let rest = section.lines
    while (rest.length > 0) {
      const fits = Math.floor((CONTENT_BOTTOM - y - BLOCK_TITLE_HEIGHT - 2 * ROW_PADDING - 1) / lineHeight(size))
      if (fits < 1) {
        newPage()
        continue
      }
      const chunk = rest.slice(0, fits)
      page.push({ title: continued(section.title), lines: chunk })
      y += textRowHeight(chunk.length, size, false, false) + BLOCK_TITLE_HEIGHT + 1 + BLOCK_GAP
      rest = rest.slice(fits)
      if (rest.length > 0) newPage()
    }
  }
  if (page.length > 0) pages.push(page)
  return pages
}

// ---------------------------------------------------------------------------------------------
// The document

const processingDate = (processedAt: string): Date => {
  // JavaScript dates take at most milliseconds; the authority writes up to 7 fractional digits.
  const date = new Date(processedAt.replace(/(\.\d{3})\d+/, "$1"))
  return Number.isNaN(date.getTime()) ? new Date(0) : date
}

const continuationHeader = (doc: Doc, nfse: DanfseData, options: DanfseOptions): number => {
  doc.lineWidth(0.6).rect(MARGIN, MARGIN, CONTENT_WIDTH, CONTINUATION_HEADER_HEIGHT).stroke(RULE)
  drawLine(doc, "DANFSe v1.0 - Documento Auxiliar da NFS-e (continuação)", INNER_LEFT, MARGIN + 5, FONT_BOLD, 9)
  drawLabel(doc, "CHAVE DE ACESSO DA NFS-e", INNER_LEFT, MARGIN + 17)
  drawLine(doc, groupAccessKey(nfse.accessKey), INNER_LEFT + 90, MARGIN + 16, FONT_BOLD, 8)
  drawLine(doc, `NFS-e nº ${nfse.nfseNumber}`, MARGIN + CONTENT_WIDTH - 110, MARGIN + 16, FONT, 8)
  const below = MARGIN + CONTINUATION_HEADER_HEIGHT + BLOCK_GAP
  return options.environment === 2 ? drawHomologationBand(doc, below) : below
}

export const renderDanfse = (nfse: DanfseData, options: DanfseOptions): Promise<Uint8Array> =>
  new Promise<Uint8Array>((resolve, reject) => {
    try {
      const created = processingDate(nfse.processedAt)
      const doc = new PDFDocument({
        size: [PAGE_WIDTH, PAGE_HEIGHT],
        margin: 0,
        autoFirstPage: false,
        bufferPages: true,
        lang: "pt-BR",
        info: {
          Title: `DANFSe ${nfse.accessKey}`,
          Subject: "Documento Auxiliar da NFS-e",
          Creator: "etd-service",
          Producer: "etd-service",
          CreationDate: created,
          ModDate: created
        }
      })
      const chunks: Array<Buffer> = []
      doc.on("data", (chunk: Buffer) => chunks.push(chunk))
      doc.on("end", () => resolve(Buffer.concat(chunks)))
      doc.on("error", reject)

      doc.addPage()
      drawHeader(doc, nfse, options)
      drawIdentification(doc, nfse)
      let top = IDENTIFICATION_TOP + IDENTIFICATION_HEIGHT + BLOCK_GAP
      if (options.environment === 2) top = drawHomologationBand(doc, top)

      const parties = partyBlocks(doc, nfse)
      const amounts = amountBlocks(doc, nfse)
      const description = nfse.service.description
      const notes = present(nfse.notes) ? nfse.notes : EMPTY
      // The two free texts measured empty, to learn how much room the rest leaves them.
      const serviceBlock = (lines: ReadonlyArray<string>, size: number, note?: string) =>
        prepareBlock(doc, "SERVIÇO PRESTADO", [
          serviceFields(nfse),
          { kind: "text", label: "DESCRIÇÃO DO SERVIÇO", lines, size, note }
        ])
      const notesBlock = (lines: ReadonlyArray<string>, size: number, note?: string) =>
        prepareBlock(doc, "INFORMAÇÕES COMPLEMENTARES", [{ kind: "text", lines, size, note }])
      const fixedHeight = [...parties, serviceBlock([], 8), ...amounts, notesBlock([], 8)]
        .reduce((sum, block) => sum + block.height + BLOCK_GAP, 0)
      const split = splitTexts(doc, description, notes, CONTENT_BOTTOM - top - fixedHeight)

      const continuationTop = MARGIN + CONTINUATION_HEADER_HEIGHT + BLOCK_GAP + (options.environment === 2 ? HOMOLOGATION_BAND_HEIGHT + BLOCK_GAP : 0)
      const continuation = paginate(
        [
          { title: "DESCRIÇÃO DO SERVIÇO", lines: split.descriptionRest },
          { title: "INFORMAÇÕES COMPLEMENTARES", lines: split.notesRest }
        ],
        split.size,
        continuationTop
      )
      const pageOf = (title: string) => 2 + continuation.findIndex((page) => page.some((chunk) => chunk.title === continued(title)))
      const descriptionNote = split.descriptionRest.length > 0 ? `(continua na página ${pageOf("DESCRIÇÃO DO SERVIÇO")})` : undefined
      const notesNote = split.notesRest.length > 0 ? `(continua na página ${pageOf("INFORMAÇÕES COMPLEMENTARES")})` : undefined

      for (const block of [
        ...parties,
        serviceBlock(split.descriptionOnPage1, split.size, descriptionNote),
        ...amounts,
        notesBlock(split.notesOnPage1, split.size, notesNote)
      ]) {
        top = drawBlock(doc, block, top)
      }

      for (const page of continuation) {
        doc.addPage()
        let y = continuationHeader(doc, nfse, options)
        for (const chunk of page) {
          y = drawBlock(doc, prepareBlock(doc, chunk.title, [{ kind: "text", lines: chunk.lines, size: split.size }]), y)
        }
      }

      const range = doc.bufferedPageRange()
      for (let i = 0; i < range.count; i++) {
        doc.switchToPage(range.start + i)
        drawFooter(doc, i + 1, range.count)
        if (options.cancelled) drawCancelledStamp(doc)
      }
      doc.end()
    } catch (error) {
      reject(error)
    }
  })
