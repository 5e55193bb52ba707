/**
 * The DANFSe (Documento Auxiliar da NFS-e): the printable rendering of an authorized NFS-e, as the
 * national DANFSe API serves it in `sefin` mode and as the service (simulator mode) and the local
 * authority render it themselves. Modelled on the national layout (NT 008, "DANFSe v1.0"): header,
 * access key with its QR code, NFS-e and DPS identification, issuer, taker, intermediary, service,
 * municipal taxation, totals and complementary information, with Portuguese labels.
 *
 * One A4 page. A long description or long notes (2 000 characters each in the XSD) first shrink the
 * type (8 → 7 → 6 pt); what still does not fit continues on extra pages, so no text ever runs off a
 * page. That fitting and the pages are this file's; the parts it puts together are the data it
 * prints (DanfseData.ts), how values are written (Format.ts), the page and its blocks as a drawing
 * model (Layout.ts), the fixed parts of the pages (Page.ts) and the blocks of the note's data
 * (Blocks.ts).
 *
 * The output is a pure function of its input: the PDF dates and file id come from the NFS-e's
 * processing time, fonts are the standard ones (Helvetica, WinAnsi: every pt-BR accent), and the QR
 * code is drawn as vector squares from `QRCode.create(url).modules`, so the same note always gives
 * the same bytes.
 */
import PDFDocument from "pdfkit"
import { amountBlocks, notesBlock, partyBlocks, serviceBlock } from "./Blocks.js"
import type { DanfseData, DanfseOptions } from "./DanfseData.js"
import { EMPTY, present } from "./Format.js"
import {
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
  ROW_PADDING,
  TEXT_WIDTH,
  textRowHeight,
  wrapText
} from "./Layout.js"
import { continuationTop, drawCancelledStamp, drawContinuationHeader, drawFirstPageTop, drawFooter } from "./Page.js"

/** The sizes the two free texts try, largest first. */
const TEXT_SIZES = [8, 7, 6] as const

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
      let top = drawFirstPageTop(doc, nfse, options)

      const parties = partyBlocks(doc, nfse)
      const amounts = amountBlocks(doc, nfse)
      const description = nfse.service.description
      const notes = present(nfse.notes) ? nfse.notes : EMPTY
      // The two free texts measured empty, to learn how much room the rest leaves them.
      const fixedHeight = [...parties, serviceBlock(doc, nfse, [], 8), ...amounts, notesBlock(doc, [], 8)]
        .reduce((sum, block) => sum + block.height + BLOCK_GAP, 0)
      const split = splitTexts(doc, description, notes, CONTENT_BOTTOM - top - fixedHeight)

      const continuation = paginate(
        [
          { title: "DESCRIÇÃO DO SERVIÇO", lines: split.descriptionRest },
          { title: "INFORMAÇÕES COMPLEMENTARES", lines: split.notesRest }
        ],
        split.size,
        continuationTop(options)
      )
      const pageOf = (title: string) =>
        2 + continuation.findIndex((page) => page.some((chunk) => chunk.title === continued(title)))
      const descriptionNote = split.descriptionRest.length > 0
        ? `(continua na página ${pageOf("DESCRIÇÃO DO SERVIÇO")})`
        : undefined
      const notesNote = split.notesRest.length > 0
        ? `(continua na página ${pageOf("INFORMAÇÕES COMPLEMENTARES")})`
        : undefined

      for (
        const block of [
          ...parties,
          serviceBlock(doc, nfse, split.descriptionOnPage1, split.size, descriptionNote),
          ...amounts,
          notesBlock(doc, split.notesOnPage1, split.size, notesNote)
        ]
      ) {
        top = drawBlock(doc, block, top)
      }

      for (const page of continuation) {
        doc.addPage()
        let y = drawContinuationHeader(doc, nfse, options)
        for (const chunk of page) {
          y = drawBlock(
            doc,
            prepareBlock(doc, chunk.title, [{ kind: "text", lines: chunk.lines, size: split.size }]),
            y
          )
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
