/**
 * The DANFE (Documento Auxiliar da NF-e), A4 portrait, rendered by the service from the note's
 * `nfeProc`: the fixed blocks of DanfeBlocks.ts, the items table (DADOS DOS PRODUTOS / SERVIÇOS)
 * and the additional data (DADOS ADICIONAIS). Items that do not fit page 1 continue on further
 * pages under the same header (the manual's "folhas"), a row never split; additional data longer
 * than its box continues after the last item. A cancelled note carries an outlined diagonal
 * CANCELADA mark; one issued in homologation says SEM VALOR FISCAL the same way.
 *
 * The output is a pure function of the XML and the marks: the PDF's dates come from the note's
 * issue, the fonts are the standard ones, the barcode is vector bars.
 */
import { Effect } from "effect"
import * as Result from "effect/Result"
import { formatDateTime } from "../danfse/Format.js"
import {
  ALERT,
  CONTENT_WIDTH,
  type Doc,
  drawAligned,
  drawLine,
  drawOutlinedMark,
  FONT,
  MARGIN,
  PAGE_HEIGHT,
  PAGE_WIDTH,
  wrapText
} from "../danfse/Layout.js"
import { CAPTION_HEIGHT, drawCaption, drawCellLabel, fitLine, LABEL_SIZE, strokeBox } from "./Cells.js"
import {
  BLOCK_SPACING,
  CARRIER_HEIGHT,
  drawCarrier,
  drawHeader,
  drawRecipient,
  drawStub,
  drawTaxCalculation,
  HEADER_HEIGHT,
  PAGE_BOX,
  RECIPIENT_HEIGHT,
  STUB_TOTAL_HEIGHT,
  TAX_HEIGHT
} from "./DanfeBlocks.js"
import { amount, columnAmount, paymentMethod, trimmedDecimal } from "./DanfeFormat.js"
import { renderDanfeNfce } from "./DanfeNfce.js"
import { type DanfeItem, type DanfeNote, readNfe } from "./NfeReader.js"
import { pdfOf } from "./PdfFile.js"

export interface DanfeMarks {
  readonly cancelled: boolean
}

const BOTTOM = PAGE_HEIGHT - MARGIN
const ROW_SIZE = 6
const ROW_LINE = 7.2
const ROW_PADDING = 1.6
const TABLE_HEADER_HEIGHT = 16
const INFO_SIZE = 6.5
const INFO_LINE = 7.8
const INFO_BOX_HEIGHT = 80
const INFO_WIDTH = CONTENT_WIDTH * 2 / 3
const FISCO_WIDTH = CONTENT_WIDTH - INFO_WIDTH

interface Column {
  readonly label: string
  /** Points at the page's content width. */
  readonly width: number
  readonly align: "left" | "right" | "center"
  readonly value: (item: DanfeItem) => string
}

const COLUMNS = (csosn: boolean): ReadonlyArray<Column> => [
  { label: "CÓDIGO PRODUTO", width: 45, align: "left", value: (i) => i.code },
  { label: "DESCRIÇÃO DO PRODUTO / SERVIÇO", width: 114.28, align: "left", value: (i) => i.description },
  { label: "NCM/SH", width: 36, align: "center", value: (i) => i.ncm },
  { label: csosn ? "O/CSOSN" : "O/CST", width: 28, align: "center", value: (i) => i.taxSituation },
  { label: "CFOP", width: 22, align: "center", value: (i) => i.cfop },
  { label: "UN", width: 18, align: "center", value: (i) => i.unit },
  { label: "QUANT.", width: 36, align: "right", value: (i) => trimmedDecimal(i.quantity) },
  { label: "VALOR UNIT.", width: 40, align: "right", value: (i) => trimmedDecimal(i.unitValue) },
  { label: "VALOR TOTAL", width: 40, align: "right", value: (i) => columnAmount(i.value) },
  { label: "VALOR DESC.", width: 34, align: "right", value: (i) => columnAmount(i.discount) },
  { label: "B.CÁLC. ICMS", width: 38, align: "right", value: (i) => columnAmount(i.icmsBase) },
  { label: "VALOR ICMS", width: 32, align: "right", value: (i) => columnAmount(i.icms) },
  { label: "VALOR IPI", width: 28, align: "right", value: (i) => columnAmount(i.ipi) },
  { label: "ALÍQ. ICMS", width: 20, align: "right", value: (i) => columnAmount(i.icmsRate) },
  { label: "ALÍQ. IPI", width: 20, align: "right", value: (i) => columnAmount(i.ipiRate) }
]

/** An item's row: each column's lines, the description wrapped with the item's own notes below it. */
interface ItemRow {
  readonly cells: ReadonlyArray<ReadonlyArray<string>>
  readonly height: number
}

const itemRow = (doc: Doc, columns: ReadonlyArray<Column>, item: DanfeItem): ItemRow => {
  const cells = columns.map((column, i) => {
    const width = column.width - 3
    if (i === 1) {
      const text = item.additional === undefined ? item.description : `${item.description}\n${item.additional}`
      return wrapText(doc, text, width, FONT, ROW_SIZE)
    }
    // Codes wrap; figures are one line, set smaller when they must be.
    return i === 0 ? wrapText(doc, column.value(item), width, FONT, ROW_SIZE) : [column.value(item)]
  })
  const lines = Math.max(...cells.map((c) => c.length))
  return { cells, height: lines * ROW_LINE + 2 * ROW_PADDING }
}

/** What the notes box says: the note's text, then its payments, its contingency and its approximate taxes. */
const additionalText = (note: DanfeNote): string => {
  const parts: Array<string> = []
  if (note.notes !== undefined) parts.push(note.notes)
  if (note.payments.length > 0) {
    const paid = note.payments.map((p) => `${paymentMethod(p.method, p.description)} R$ ${amount(p.amount)}`)
    parts.push(`PAGAMENTO: ${paid.join("; ")}${note.change === undefined ? "" : `; troco R$ ${amount(note.change)}`}`)
  }
  if (note.contingency !== undefined) {
    parts.push(`EMITIDA EM CONTINGÊNCIA desde ${formatDateTime(note.contingency.since)}: ${note.contingency.reason}`)
  }
  if (note.totals.approximateTaxes !== undefined) {
    parts.push(`Valor aproximado dos tributos: R$ ${amount(note.totals.approximateTaxes)} (Lei 12.741/2012)`)
  }
  return parts.join("\n")
}

const ITEMS_TOP_FIRST = MARGIN + STUB_TOTAL_HEIGHT + HEADER_HEIGHT + RECIPIENT_HEIGHT + TAX_HEIGHT + CARRIER_HEIGHT +
  3 * BLOCK_SPACING + CAPTION_HEIGHT + TABLE_HEADER_HEIGHT
const ITEMS_BOTTOM_FIRST = BOTTOM - CAPTION_HEIGHT - INFO_BOX_HEIGHT - BLOCK_SPACING
const ITEMS_TOP_NEXT = MARGIN + HEADER_HEIGHT + CAPTION_HEIGHT + TABLE_HEADER_HEIGHT
const INFO_LINES_FIRST = Math.floor((INFO_BOX_HEIGHT - 9) / INFO_LINE)

/** Which rows and continued notes each page carries. */
interface PagePlan {
  readonly rows: ReadonlyArray<ItemRow>
  readonly notes: ReadonlyArray<string>
}

const plan = (rows: ReadonlyArray<ItemRow>, overflow: ReadonlyArray<string>): ReadonlyArray<PagePlan> => {
  const pages: Array<{ rows: Array<ItemRow>; notes: Array<string> }> = [{ rows: [], notes: [] }]
  let y = ITEMS_TOP_FIRST
  let bottom = ITEMS_BOTTOM_FIRST
  for (const row of rows) {
    if (y + row.height > bottom && pages[pages.length - 1]!.rows.length > 0) {
      pages.push({ rows: [], notes: [] })
      y = ITEMS_TOP_NEXT
      bottom = BOTTOM
    }
    pages[pages.length - 1]!.rows.push(row)
    y += row.height
  }
  let remaining = [...overflow]
  if (pages.length === 1) y = BOTTOM // page 1's notes box is full: the rest goes on a page of its own
  while (remaining.length > 0) {
    const room = Math.floor((BOTTOM - y - BLOCK_SPACING - CAPTION_HEIGHT - 10) / INFO_LINE)
    if (room < 2) {
      pages.push({ rows: [], notes: [] })
      y = MARGIN + HEADER_HEIGHT
      continue
    }
    const page = pages[pages.length - 1]!
    page.notes.push(...remaining.slice(0, room))
    y += BLOCK_SPACING + CAPTION_HEIGHT + 10 + Math.min(room, remaining.length) * INFO_LINE
    remaining = remaining.slice(room)
  }
  return pages
}

const drawTable = (
  doc: Doc,
  columns: ReadonlyArray<Column>,
  rows: ReadonlyArray<ItemRow>,
  top: number,
  frameBottom: number | undefined
): number => {
  let y = drawCaption(doc, "DADOS DOS PRODUTOS / SERVIÇOS", PAGE_BOX, top)
  let x = MARGIN
  for (const column of columns) {
    strokeBox(doc, x, y, column.width, TABLE_HEADER_HEIGHT)
    wrapText(doc, column.label, column.width - 2, FONT, LABEL_SIZE).slice(0, 2).forEach((line, i) =>
      drawAligned(doc, line, x + 1, column.width - 2, y + 3 + i * 6, FONT, LABEL_SIZE, "center")
    )
    x += column.width
  }
  y += TABLE_HEADER_HEIGHT
  const tableTop = y
  for (const row of rows) {
    x = MARGIN
    row.cells.forEach((lines, c) => {
      const column = columns[c]!
      const width = column.width - 3
      lines.forEach((line, l) => {
        const fitted = fitLine(doc, line, width, FONT, ROW_SIZE, 4)
        const lineTop = y + ROW_PADDING + l * ROW_LINE
        if (column.align === "left") drawLine(doc, fitted.text, x + 1.5, lineTop, FONT, fitted.size)
        else drawAligned(doc, fitted.text, x + 1.5, width, lineTop, FONT, fitted.size, column.align)
      })
      x += column.width
    })
    y += row.height
  }
  const bottom = frameBottom ?? y
  x = MARGIN
  for (const column of columns) {
    strokeBox(doc, x, tableTop, column.width, bottom - tableTop)
    x += column.width
  }
  return bottom + BLOCK_SPACING
}

const drawNotesBox = (doc: Doc, lines: ReadonlyArray<string>, fisco: string, top: number, height: number) => {
  strokeBox(doc, MARGIN, top, INFO_WIDTH, height)
  drawCellLabel(doc, "INFORMAÇÕES COMPLEMENTARES", { left: MARGIN + 2, width: INFO_WIDTH - 4 }, top)
  lines.forEach((line, i) => drawLine(doc, line, MARGIN + 3, top + 9 + i * INFO_LINE, FONT, INFO_SIZE))
  strokeBox(doc, MARGIN + INFO_WIDTH, top, FISCO_WIDTH, height)
  drawCellLabel(doc, "RESERVADO AO FISCO", { left: MARGIN + INFO_WIDTH + 2, width: FISCO_WIDTH - 4 }, top)
  if (fisco === "") return
  wrapText(doc, fisco, FISCO_WIDTH - 6, FONT, INFO_SIZE).slice(0, INFO_LINES_FIRST).forEach((line, i) =>
    drawLine(doc, line, MARGIN + INFO_WIDTH + 3, top + 9 + i * INFO_LINE, FONT, INFO_SIZE)
  )
}

/** The marks across each page and, above the frame, the same words as plain text read first. */
const drawMarks = (doc: Doc, note: DanfeNote, marks: DanfeMarks) => {
  const homologation = note.environment === 2
  if (!marks.cancelled && !homologation) return
  drawOutlinedMark(
    doc,
    marks.cancelled ? "CANCELADA" : "SEM VALOR FISCAL",
    marks.cancelled ? 96 : 64,
    PAGE_WIDTH / 2,
    PAGE_HEIGHT / 2
  )
  const captions = [
    marks.cancelled ? "NF-e CANCELADA por evento registrado na SEFAZ" : "",
    homologation ? "EMITIDA EM AMBIENTE DE HOMOLOGAÇÃO - SEM VALOR FISCAL" : ""
  ].filter((caption) => caption !== "")
  drawAligned(doc, captions.join(" - "), MARGIN, CONTENT_WIDTH, MARGIN - 11, "Helvetica-Bold", 7, "center", ALERT)
}

const draw = (doc: Doc, note: DanfeNote, marks: DanfeMarks) => {
  const columns = COLUMNS(note.issuer.crt === "1" || note.issuer.crt === "4")
  doc.addPage()
  const rows = note.items.map((item) => itemRow(doc, columns, item))
  const notes = wrapText(doc, additionalText(note), INFO_WIDTH - 6, FONT, INFO_SIZE)
  const pages = plan(rows, notes.slice(INFO_LINES_FIRST))
  pages.forEach((page, i) => {
    if (i > 0) doc.addPage()
    let y = MARGIN
    if (i === 0) {
      y = drawStub(doc, note, y)
      y = drawHeader(doc, note, y, 1, pages.length)
      y = drawRecipient(doc, note, y)
      y = drawTaxCalculation(doc, note, y)
      y = drawCarrier(doc, note, y)
      drawTable(doc, columns, page.rows, y, ITEMS_BOTTOM_FIRST)
      const notesTop = drawCaption(doc, "DADOS ADICIONAIS", PAGE_BOX, BOTTOM - INFO_BOX_HEIGHT - CAPTION_HEIGHT)
      drawNotesBox(doc, notes.slice(0, INFO_LINES_FIRST), note.fiscoNotes ?? "", notesTop, INFO_BOX_HEIGHT)
    } else {
      y = drawHeader(doc, note, y, i + 1, pages.length)
      if (page.rows.length > 0) y = drawTable(doc, columns, page.rows, y, undefined)
    }
    if (i > 0 && page.notes.length > 0) {
      const notesTop = drawCaption(doc, "DADOS ADICIONAIS (CONTINUAÇÃO)", PAGE_BOX, y)
      drawNotesBox(doc, page.notes, "", notesTop, 10 + page.notes.length * INFO_LINE)
    }
    drawMarks(doc, note, marks)
  })
}

export const renderDanfe = (note: DanfeNote, marks: DanfeMarks): Promise<Uint8Array> =>
  pdfOf(`DANFE ${note.accessKey}`, note.issuedAt, [PAGE_WIDTH, PAGE_HEIGHT], (doc) => draw(doc, note, marks))

/**
 * The DANFE of a stored `nfeProc`: the A4 DANFE of an NF-e, the 80 mm DANFE NFC-e of an NFC-e. A
 * note that cannot be read is a defect: it is the XML the service built and the authority signed.
 */
export const danfeOf = (xml: string, marks: DanfeMarks): Promise<Uint8Array> => {
  const read = readNfe(xml)
  if (Result.isFailure(read)) return Promise.reject(new Error(`the stored NF-e cannot be rendered: ${read.failure}`))
  return read.success.model === "65" ? renderDanfeNfce(read.success, marks) : renderDanfe(read.success, marks)
}

/** `danfeOf` as the goods port's `danfe`: a note that cannot be drawn is a defect. */
export const drawDanfe = (note: { readonly xml: string; readonly cancelled: boolean }): Effect.Effect<Uint8Array> =>
  Effect.promise(() => danfeOf(note.xml, { cancelled: note.cancelled })).pipe(Effect.withSpan("Danfe.draw"))
