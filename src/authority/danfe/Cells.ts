/**
 * The DANFE's drawing model: rows of boxed cells, each a small label over a one-line value, under
 * a block's caption, as the national manual draws them. A value wider than its cell is set
 * smaller, down to a floor, and only then cut with "…": a box never spills into its neighbour.
 * Geometry in PDF points, origin top-left (pdfkit), standard fonts (Helvetica, WinAnsi).
 */
import { type Doc, drawAligned, drawLine, FONT, FONT_BOLD, INK, LABEL_INK } from "../danfse/Layout.js"

export const LABEL_SIZE = 5
export const VALUE_SIZE = 7.5
const MIN_VALUE_SIZE = 5.5
export const CELL_HEIGHT = 19
export const CAPTION_HEIGHT = 9
const CELL_PADDING = 2
export const FRAME = "#000000"

export interface Cell {
  readonly label: string
  readonly value: string
  /** The cell's share of the row's width. */
  readonly weight: number
  readonly align?: "left" | "right" | "center"
  readonly bold?: boolean
}

export interface Box {
  readonly left: number
  readonly width: number
}

/** `text` on one line within `width`: at `size`, or smaller down to `floor`, or cut with "…". */
export const fitLine = (
  doc: Doc,
  text: string,
  width: number,
  font: string,
  size: number,
  floor = MIN_VALUE_SIZE
): { readonly text: string; readonly size: number } => {
  doc.font(font).fontSize(size)
  const natural = doc.widthOfString(text)
  if (natural <= width) return { text, size }
  const shrunk = (size * width) / natural
  if (shrunk >= floor) return { text, size: Math.floor(shrunk * 10) / 10 }
  doc.fontSize(floor)
  let cut = text
  while (cut !== "" && doc.widthOfString(`${cut}…`) > width) cut = cut.slice(0, -1)
  return { text: `${cut}…`, size: floor }
}

/** One line in a box, aligned and fitted. */
export const drawFitted = (
  doc: Doc,
  text: string,
  box: Box,
  y: number,
  font: string,
  size: number,
  align: "left" | "right" | "center" = "left"
) => {
  const fitted = fitLine(doc, text, box.width, font, size)
  if (align === "left") drawLine(doc, fitted.text, box.left, y, font, fitted.size)
  else drawAligned(doc, fitted.text, box.left, box.width, y, font, fitted.size, align)
}

export const strokeBox = (doc: Doc, left: number, top: number, width: number, height: number) => {
  doc.lineWidth(0.5).rect(left, top, width, height).stroke(FRAME)
}

/** A cell's label at its top-left, set smaller when wider than the cell. */
export const drawCellLabel = (doc: Doc, label: string, box: Box, top: number) => {
  const fitted = fitLine(doc, label, box.width, FONT, LABEL_SIZE, 3.5)
  drawLine(doc, fitted.text, box.left, top + 1.6, FONT, fitted.size, LABEL_INK)
}

/** A row of cells across `box`, `height` tall; returns the row's bottom. */
export const drawCellRow = (
  doc: Doc,
  top: number,
  cells: ReadonlyArray<Cell>,
  box: Box,
  height = CELL_HEIGHT
): number => {
  const total = cells.reduce((sum, cell) => sum + cell.weight, 0)
  let x = box.left
  for (const cell of cells) {
    const width = (box.width * cell.weight) / total
    strokeBox(doc, x, top, width, height)
    const inner = { left: x + CELL_PADDING, width: width - 2 * CELL_PADDING }
    drawCellLabel(doc, cell.label, inner, top)
    drawFitted(
      doc,
      cell.value,
      inner,
      top + height - VALUE_SIZE - 2.6,
      cell.bold === true ? FONT_BOLD : FONT,
      VALUE_SIZE,
      cell.align ?? "left"
    )
    x += width
  }
  return top + height
}

/** A block's caption above its boxes; returns where the boxes start. */
export const drawCaption = (doc: Doc, caption: string, box: Box, top: number): number => {
  drawLine(doc, caption, box.left, top + 2.4, FONT_BOLD, 6, INK)
  return top + CAPTION_HEIGHT
}
