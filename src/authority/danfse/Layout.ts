/**
 * The DANFSe's page and its one drawing model. Geometry in PDF points, origin top-left as pdfkit
 * draws; the fonts are the standard ones (Helvetica, WinAnsi: every pt-BR accent).
 *
 * A block is a titled box of rows (fields in twelfths of its width, a paragraph, a centred line),
 * measured before it is drawn, so the page can be planned from the blocks' heights. Text is
 * wrapped here, line by line, rather than by pdfkit: the layout must know every line before
 * drawing to decide the size and the split, and pdfkit's own flow would add pages on its own.
 */
/// <reference types="pdfkit" />
import QRCode from "qrcode"
import { EMPTY, printable } from "./Format.js"

// ---------------------------------------------------------------------------------------------
// Page geometry

export const PAGE_WIDTH = 595.28
export const PAGE_HEIGHT = 841.89
export const MARGIN = 22
export const CONTENT_WIDTH = PAGE_WIDTH - 2 * MARGIN
export const FOOTER_TOP = PAGE_HEIGHT - MARGIN - 8
export const CONTENT_BOTTOM = FOOTER_TOP - 4

export const FONT = "Helvetica"
export const FONT_BOLD = "Helvetica-Bold"
export const INK = "#000000"
export const LABEL_INK = "#444444"
export const RULE = "#7a7a7a"
const TITLE_FILL = "#e4e4e4"
export const ALERT = "#c00000"

export const BLOCK_GAP = 3
export const BLOCK_TITLE_HEIGHT = 11
const BLOCK_TITLE_SIZE = 7
export const BLOCK_PADDING_X = 4
const LABEL_SIZE = 5.4
export const LABEL_HEIGHT = 6.6
const VALUE_SIZE = 7.6
export const ROW_PADDING = 1.8
const FIELD_GUTTER = 4
const FIELD_MAX_LINES = 4

export const lineHeight = (size: number): number => size * 1.22

// ---------------------------------------------------------------------------------------------
// Line wrapping

export type Doc = PDFKit.PDFDocument

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
export const wrapText = (doc: Doc, text: string, width: number, font: string, size: number): Array<string> => {
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
export const clampLines = (doc: Doc, lines: Array<string>, max: number, width: number, font: string, size: number) => {
  if (lines.length <= max) return lines
  const widthOf = measure(doc, font, size)
  let last = lines[max - 1]!
  while (last !== "" && widthOf(`${last}…`) > width) last = last.slice(0, -1)
  return [...lines.slice(0, max - 1), `${last}…`]
}

// ---------------------------------------------------------------------------------------------
// Blocks: a titled box of rows, measured before it is drawn

export interface Field {
  readonly label: string
  readonly value: string
  /** Twelfths of the block's width. */
  readonly span: number
  readonly bold?: boolean
}

export type Row =
  | { readonly kind: "fields"; readonly fields: ReadonlyArray<Field> }
  | {
    readonly kind: "text"
    readonly label?: string
    readonly lines: ReadonlyArray<string>
    readonly size: number
    readonly note?: string | undefined
  }
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

export interface Block {
  readonly title: string
  readonly rows: ReadonlyArray<PreparedRow>
  readonly height: number
}

export const INNER_LEFT = MARGIN + BLOCK_PADDING_X
const INNER_WIDTH = CONTENT_WIDTH - 2 * BLOCK_PADDING_X
/** Width available to a paragraph that spans the whole block. */
export const TEXT_WIDTH = INNER_WIDTH

export const textRowHeight = (lineCount: number, size: number, label: boolean, note: boolean): number =>
  ROW_PADDING * 2 + (label ? LABEL_HEIGHT : 0) + (lineCount + (note ? 1 : 0)) * lineHeight(size)

const prepareRow = (doc: Doc, row: Row): PreparedRow => {
  switch (row.kind) {
    case "fields": {
      let x = INNER_LEFT
      const fields = row.fields.map((field) => {
        const width = (INNER_WIDTH * field.span) / 12 - FIELD_GUTTER
        const font = field.bold ? FONT_BOLD : FONT
        const lines = clampLines(
          doc,
          wrapText(doc, field.value, width, font, VALUE_SIZE),
          FIELD_MAX_LINES,
          width,
          font,
          VALUE_SIZE
        )
        const prepared = { ...field, x, width, lines }
        x += (INNER_WIDTH * field.span) / 12
        return prepared
      })
      const lineCount = Math.max(1, ...fields.map((f) => f.lines.length))
      return { kind: "fields", fields, height: ROW_PADDING * 2 + LABEL_HEIGHT + lineCount * lineHeight(VALUE_SIZE) }
    }
    case "text":
      return {
        ...row,
        height: textRowHeight(row.lines.length, row.size, row.label !== undefined, row.note !== undefined)
      }
    case "centered":
      return { ...row, height: ROW_PADDING * 2 + lineHeight(VALUE_SIZE) }
  }
}

export const prepareBlock = (doc: Doc, title: string, rows: ReadonlyArray<Row>): Block => {
  const prepared = rows.map((row) => prepareRow(doc, row))
  return { title, rows: prepared, height: BLOCK_TITLE_HEIGHT + prepared.reduce((sum, row) => sum + row.height, 0) + 1 }
}

export const drawLine = (doc: Doc, text: string, x: number, y: number, font: string, size: number, color = INK) => {
  if (text === "") return
  doc.font(font).fontSize(size).fillColor(color).text(text, x, y, { lineBreak: false })
}

/**
 * One line centred or right-aligned in `width`. pdfkit only aligns text it wraps itself (with
 * `lineBreak: false` its alignment arithmetic has no line width), so the offset is computed here.
 */
export const drawAligned = (
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

/** A field's label; one wider than `width` is set smaller rather than run into its neighbour. */
export const drawLabel = (doc: Doc, label: string, x: number, y: number, width?: number) => {
  const natural = measure(doc, FONT_BOLD, LABEL_SIZE)(label)
  const size = width === undefined || natural <= width ? LABEL_SIZE : Math.max(4, (LABEL_SIZE * width) / natural)
  drawLine(doc, label, x, y, FONT_BOLD, size, LABEL_INK)
}

const drawBlockFrame = (doc: Doc, title: string, top: number, height: number) => {
  doc.rect(MARGIN, top, CONTENT_WIDTH, BLOCK_TITLE_HEIGHT).fill(TITLE_FILL)
  doc.lineWidth(0.6).rect(MARGIN, top, CONTENT_WIDTH, height).stroke(RULE)
  drawLine(doc, title, INNER_LEFT, top + 2.6, FONT_BOLD, BLOCK_TITLE_SIZE)
}

/** Draws the block with its top at `top`; returns where the next block starts. */
export const drawBlock = (doc: Doc, block: Block, top: number): number => {
  drawBlockFrame(doc, block.title, top, block.height)
  let y = top + BLOCK_TITLE_HEIGHT
  for (const row of block.rows) {
    switch (row.kind) {
      case "fields":
        for (const field of row.fields) {
          drawLabel(doc, field.label, field.x, y + ROW_PADDING, field.width)
          field.lines.forEach((line, i) =>
            drawLine(
              doc,
              line,
              field.x,
              y + ROW_PADDING + LABEL_HEIGHT + i * lineHeight(VALUE_SIZE),
              field.bold ? FONT_BOLD : FONT,
              VALUE_SIZE
            )
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
        if (row.note !== undefined) {
          drawLine(doc, row.note, INNER_LEFT, lineTop, "Helvetica-Oblique", row.size, LABEL_INK)
        }
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

/** NT 008's grey for the CANCELADA / SUBSTITUÍDA mark (K35), the DANFE's too. */
const MARK_GREY = "#a6a6a6"

/**
 * A word across the page, diagonal, outlined only and half transparent, so every value beneath it
 * stays readable; centred on (`x`, `y`).
 */
export const drawOutlinedMark = (doc: Doc, word: string, size: number, x: number, y: number) => {
  doc.save()
  doc.rotate(-35, { origin: [x, y] })
  doc.font(FONT_BOLD).fontSize(size)
  const width = doc.widthOfString(word)
  doc.lineWidth(size / 60).strokeOpacity(0.8).strokeColor(MARK_GREY)
  doc.text(word, x - width / 2, y - size / 2, { lineBreak: false, stroke: true, fill: false })
  doc.restore()
}

/**
 * A QR code of `text`, `size` points square at (`x`, `y`), drawn as vector rectangles (one per
 * horizontal run of dark modules, filled at once), not as an image: the same text always gives
 * the same bytes, and the symbol stays sharp at any zoom.
 */
export const drawQrSymbol = (
  doc: Doc,
  text: string,
  errorCorrectionLevel: "L" | "M" | "Q" | "H",
  x: number,
  y: number,
  size: number
) => {
  const modules = QRCode.create(text, { errorCorrectionLevel }).modules
  const moduleSize = size / modules.size
  for (let row = 0; row < modules.size; row++) {
    let col = 0
    while (col < modules.size) {
      if (!modules.get(row, col)) {
        col++
        continue
      }
      const start = col
      while (col < modules.size && modules.get(row, col)) col++
      doc.rect(x + start * moduleSize, y + row * moduleSize, (col - start) * moduleSize, moduleSize)
    }
  }
  doc.fill(INK)
}
