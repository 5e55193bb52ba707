/**
 * A PDF made by pdfkit in memory, reproducible: its dates are the note's issue (not the clock), so
 * the same note always gives the same bytes. The page size may depend on the content (the NFC-e's
 * roll is as long as the receipt): it is then computed with the document's fonts before the first page.
 */
import PDFDocument from "pdfkit"
import type { Doc } from "../danfse/Layout.js"

const issueDate = (issuedAt: string): Date => {
  const date = new Date(issuedAt)
  return Number.isNaN(date.getTime()) ? new Date(0) : date
}

/** The finished PDF of `draw`, on pages of `size`. */
export const pdfOf = (
  title: string,
  issuedAt: string,
  size: [number, number] | ((doc: Doc) => [number, number]),
  draw: (doc: Doc) => void
): Promise<Uint8Array> =>
  new Promise<Uint8Array>((resolve, reject) => {
    try {
      const created = issueDate(issuedAt)
      const info = {
        Title: title,
        Creator: "etd-service",
        Producer: "etd-service",
        CreationDate: created,
        ModDate: created
      }
      const doc = new PDFDocument({ margin: 0, autoFirstPage: false, lang: "pt-BR", info })
      const pageSize = typeof size === "function" ? size(doc) : size
      doc.options.size = pageSize
      const chunks: Array<Buffer> = []
      doc.on("data", (chunk: Buffer) => chunks.push(chunk))
      doc.on("end", () => resolve(Buffer.concat(chunks)))
      doc.on("error", reject)
      draw(doc)
      doc.end()
    } catch (error) {
      reject(error)
    }
  })
