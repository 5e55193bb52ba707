/**
 * The DANFSe (Documento Auxiliar da NFS-e): the printable rendering of an authorized NFS-e, made by
 * the service from the note's XML in every mode (the national DANFSe API is only an optional
 * source, `…_DANFSE_SOURCE=national`), and by the local authority for its DANFSe endpoint. It
 * follows the national layout, "DANFSe v2.0" of NT 008/2026 (SE/CGNFS-e, v1.0 of 2026-05-05,
 * v1.02 of 2026-07-14, which also retires the national DANFSe API from July 2026): header with
 * the access key and its QR code, NFS-e and DPS identification, issuer, taker, intermediary,
 * service, municipal taxation (ISSQN), federal taxation, the note's total with retentions and net
 * value, approximate taxes, IBS/CBS when the note has them, complementary information; every date
 * and time in Brasília time. A cancelled or replaced note carries an outlined diagonal mark that
 * leaves the text beneath readable.
 *
 * Every block goes on page 1 when they fit it: the two free texts (description and notes, 2 000
 * characters each in the XSD) take the largest of 8, 7 and 6 pt at which they fit, and what still
 * does not continues on further pages, so the totals stay on page 1. A note with more blocks than
 * page 1 holds (an intermediary, federal taxes and IBS/CBS together) flows down the pages instead,
 * a block moving whole to the next page and a free text split line by line. Nothing runs off a page. What it prints
 * is read by NfseReader.ts into DanfseData.ts; Format.ts and Labels.ts write the values, Layout.ts
 * is the drawing model, Page.ts the fixed parts, PartyBlocks.ts and TaxBlocks.ts the blocks.
 *
 * The output is a pure function of its input: the PDF dates and file id come from the NFS-e's
 * processing time, fonts are the standard ones (Helvetica, WinAnsi: every pt-BR accent), and the QR
 * code is drawn as vector squares, so the same note always gives the same bytes.
 */
import PDFDocument from "pdfkit"
import type { DanfseData, DanfseOptions } from "./DanfseData.js"
import { EMPTY, present } from "./Format.js"
import {
  type Block,
  BLOCK_GAP,
  BLOCK_TITLE_HEIGHT,
  CONTENT_BOTTOM,
  type Doc,
  drawBlock,
  FONT,
  lineHeight,
  PAGE_HEIGHT,
  PAGE_WIDTH,
  prepareBlock,
  TEXT_WIDTH,
  textRowHeight,
  wrapText
} from "./Layout.js"
import { readNote } from "./NfseReader.js"
import { continuationTop, drawContinuationHeader, drawFirstPageTop, drawFooter, drawMark } from "./Page.js"
import { partyBlocks } from "./PartyBlocks.js"
import {
  approximateTaxesBlock,
  federalTaxBlock,
  ibsCbsBlocks,
  municipalTaxBlock,
  replacesBlocks,
  serviceBlock,
  totalsBlock
} from "./TaxBlocks.js"

/** The sizes the two free texts try, largest first. */
const TEXT_SIZES = [8, 7, 6] as const
const DESCRIPTION = "DESCRIÇÃO DO SERVIÇO"
const NOTES = "INFORMAÇÕES COMPLEMENTARES"

/** A block of fixed height, or a free text, drawn whole or split. */
type Item = { readonly block: Block } | { readonly title: string; readonly text: string }

const items = (doc: Doc, nfse: DanfseData): ReadonlyArray<Item> => [
  ...partyBlocks(doc, nfse).map((block) => ({ block })),
  { block: serviceBlock(doc, nfse) },
  { title: DESCRIPTION, text: present(nfse.service.description) ? nfse.service.description : EMPTY },
  { block: municipalTaxBlock(doc, nfse) },
  { block: federalTaxBlock(doc, nfse) },
  { block: totalsBlock(doc, nfse) },
  { block: approximateTaxesBlock(doc, nfse) },
  ...ibsCbsBlocks(doc, nfse).map((block) => ({ block })),
  ...replacesBlocks(doc, nfse).map((block) => ({ block })),
  { title: NOTES, text: present(nfse.notes) ? nfse.notes : EMPTY }
]

const textBlock = (doc: Doc, title: string, lines: ReadonlyArray<string>, size: number, note?: string) =>
  prepareBlock(doc, title, [{ kind: "text", lines, size, note }])

const continued = (title: string) => `${title} (continuação)`

// ---------------------------------------------------------------------------------------------
// Every block on page 1: the free texts share what is left, and continue on further pages

interface TextSplit {
  readonly size: number
  readonly onPage1: ReadonlyArray<ReadonlyArray<string>>
  readonly rest: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * The largest size at which the free texts fit `room` whole; failing that, the smallest size, the
 * room filled and the rest of each text carried over. Two lines of the room go to the "continues
 * on page n" notes; each text gets half of the rest, or more when the other needs less.
 */
const splitTexts = (doc: Doc, texts: readonly [string, string], room: number): TextSplit => {
  for (const size of TEXT_SIZES) {
    const [first, second] = texts.map((text) => wrapText(doc, text, TEXT_WIDTH, FONT, size)) as [
      Array<string>,
      Array<string>
    ]
    if ((first.length + second.length) * lineHeight(size) <= room) {
      return { size, onPage1: [first, second], rest: [[], []] }
    }
    if (size === TEXT_SIZES[TEXT_SIZES.length - 1]) {
      const capacity = Math.max(0, Math.floor(room / lineHeight(size)) - 2)
      const forFirst = Math.min(first.length, Math.max(Math.floor(capacity / 2), capacity - second.length))
      const forSecond = Math.min(second.length, capacity - forFirst)
      return {
        size,
        onPage1: [first.slice(0, forFirst), second.slice(0, forSecond)],
        rest: [first.slice(forFirst), second.slice(forSecond)]
      }
    }
  }
  throw new Error("unreachable: the last size always returns")
}

/** Continuation pages: each a list of (title, lines) chunks, filled top to bottom. */
const paginate = (
  sections: ReadonlyArray<{ title: string; lines: ReadonlyArray<string> }>,
  size: number,
  top: number
) => {
  const pages: Array<Array<{ title: string; lines: ReadonlyArray<string> }>> = []
  let page: Array<{ title: string; lines: ReadonlyArray<string> }> = []
  let y = top
  for (const section of sections) {
    let rest = section.lines
    while (rest.length > 0) {
      const fits = Math.floor((CONTENT_BOTTOM - y - textBlockHeight(0, size)) / lineHeight(size))
      if (fits < 1) {
        pages.push(page)
        page = []
        y = top
        continue
      }
      page.push({ title: continued(section.title), lines: rest.slice(0, fits) })
      y += textBlockHeight(Math.min(fits, rest.length), size) + BLOCK_GAP
      rest = rest.slice(fits)
    }
  }
  if (page.length > 0) pages.push(page)
  return pages
}

/** A titled box around `lines` of text: its height. */
const textBlockHeight = (lines: number, size: number) =>
  BLOCK_TITLE_HEIGHT + textRowHeight(lines, size, false, false) + 1

/** Draws every block on page 1 when they fit it with the free texts' titles; false when they do not. */
const onePage = (doc: Doc, nfse: DanfseData, options: DanfseOptions, list: ReadonlyArray<Item>, top: number) => {
  const fixed = list.reduce(
    (sum, item) => sum + BLOCK_GAP + ("block" in item ? item.block.height : textBlockHeight(0, 8)),
    0
  )
  const room = CONTENT_BOTTOM - top - fixed
  if (room < 4 * lineHeight(TEXT_SIZES[TEXT_SIZES.length - 1])) return false
  const texts = list.filter((item): item is { title: string; text: string } => "text" in item)
  const split = splitTexts(doc, [texts[0]!.text, texts[1]!.text], room)
  const pages = paginate(
    texts.map((item, i) => ({ title: item.title, lines: split.rest[i]! })),
    split.size,
    continuationTop(options)
  )
  const pageOf = (title: string) =>
    2 + pages.findIndex((page) => page.some((chunk) => chunk.title === continued(title)))
  let y = top
  for (const item of list) {
    if ("block" in item) {
      y = drawBlock(doc, item.block, y)
      continue
    }
    const i = texts.indexOf(item)
    const note = split.rest[i]!.length > 0 ? `(continua na página ${pageOf(item.title)})` : undefined
    y = drawBlock(doc, textBlock(doc, item.title, split.onPage1[i]!, split.size, note), y)
  }
  for (const page of pages) {
    doc.addPage()
    let at = drawContinuationHeader(doc, nfse, options)
    for (const chunk of page) at = drawBlock(doc, textBlock(doc, chunk.title, chunk.lines, split.size), at)
  }
  return true
}

// ---------------------------------------------------------------------------------------------
// More blocks than page 1 holds: everything flows down the pages

/** Draws the items down the pages, opening a continuation page whenever the next one does not fit. */
const flow = (doc: Doc, nfse: DanfseData, options: DanfseOptions, list: ReadonlyArray<Item>, top: number) => {
  const size = TEXT_SIZES[0]
  let page = 1
  let y = top
  let pageTop = top
  const newPage = () => {
    doc.addPage()
    page++
    y = drawContinuationHeader(doc, nfse, options)
    pageTop = y
  }
  for (const item of list) {
    if ("block" in item) {
      if (y + item.block.height > CONTENT_BOTTOM && y > pageTop) newPage()
      y = drawBlock(doc, item.block, y)
      continue
    }
    let lines = wrapText(doc, item.text, TEXT_WIDTH, FONT, size)
    let title = item.title
    while (lines.length > 0) {
      const room = Math.floor((CONTENT_BOTTOM - y - textBlockHeight(0, size)) / lineHeight(size))
      if (room >= lines.length) {
        y = drawBlock(doc, textBlock(doc, title, lines, size), y)
        break
      }
      // One line of the room goes to the note saying where the text goes on.
      if (room < 3 && y > pageTop) {
        newPage()
        continue
      }
      const chunk = lines.slice(0, Math.max(1, room - 1))
      drawBlock(doc, textBlock(doc, title, chunk, size, `(continua na página ${page + 1})`), y)
      lines = lines.slice(chunk.length)
      title = continued(item.title)
      newPage()
    }
  }
}

const processingDate = (processedAt: string): Date => {
  // JavaScript dates take at most milliseconds; the authority writes up to 7 fractional digits.
  const date = new Date(processedAt.replace(/(\.\d{3})\d+/, "$1"))
  return Number.isNaN(date.getTime()) ? new Date(0) : date
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
      const top = drawFirstPageTop(doc, nfse, options)
      const list = items(doc, nfse)
      if (!onePage(doc, nfse, options, list, top)) flow(doc, nfse, options, list, top)

      const range = doc.bufferedPageRange()
      for (let i = 0; i < range.count; i++) {
        doc.switchToPage(range.start + i)
        drawFooter(doc, i + 1, range.count)
        drawMark(doc, options)
      }
      doc.end()
    } catch (error) {
      reject(error)
    }
  })

/** The marks a note's state puts on its DANFSe. */
export interface DanfseMarks {
  readonly cancelled: boolean
  readonly substituted: boolean
}

/**
 * The DANFSe of an authorized NFS-e's XML, in the environment the note itself names. A note that
 * cannot be read is a defect: it is the XML the authority returned and the service stored.
 */
export const renderNfseXml = (xml: string, marks: DanfseMarks): Promise<Uint8Array> => {
  const read = readNote(xml)
  if (read._tag === "Failure") return Promise.reject(new Error(`the stored NFS-e cannot be rendered: ${read.failure}`))
  return renderDanfse(read.success.data, { ...marks, environment: read.success.environment })
}
