/**
 * Reads the barcodes of a PDF's page as a scanner would: poppler's `pdftoppm` rasterizes the page
 * (independent of pdfkit, which drew it) and ZXing, a barcode library we did not write, decodes
 * what it finds. Used to check that a DANFE's Code-128 bars carry the note's access key and that an
 * NFC-e's QR code carries its consultation address.
 */
import {
  BinaryBitmap,
  Code128Reader,
  DecodeHintType,
  GlobalHistogramBinarizer,
  HybridBinarizer,
  QRCodeReader,
  RGBLuminanceSource
} from "@zxing/library"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface GreyImage {
  readonly width: number
  readonly height: number
  readonly pixels: Uint8ClampedArray
}

/** A binary PGM (P5, 8 bits), as `pdftoppm -gray` writes it. */
const readPgm = (file: Buffer): GreyImage => {
  const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(file.subarray(0, 64).toString("latin1"))
  if (header === null) throw new Error("not an 8-bit binary PGM")
  const width = Number(header[1])
  const height = Number(header[2])
  const start = header[0].length
  return { width, height, pixels: new Uint8ClampedArray(file.subarray(start, start + width * height)) }
}

/** Page `page` (1-based) of `pdf`, rasterized in grey at `dpi`. */
export const rasterize = (pdf: Uint8Array, page = 1, dpi = 300): GreyImage => {
  const dir = mkdtempSync(join(tmpdir(), "barcode-"))
  try {
    writeFileSync(join(dir, "doc.pdf"), pdf)
    execFileSync("pdftoppm", [
      "-gray",
      "-r",
      String(dpi),
      "-f",
      String(page),
      "-l",
      String(page),
      join(dir, "doc.pdf"),
      join(dir, "page")
    ])
    const name = execFileSync("ls", [dir], { encoding: "utf8" }).split("\n").find((f) => f.endsWith(".pgm"))
    if (name === undefined) throw new Error("pdftoppm wrote no page")
    return readPgm(readFileSync(join(dir, name)))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A rectangle of a page, in PDF points from its top-left corner. */
export interface PageBox {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

/**
 * The text of the Code 128 barcode inside `box` of a page rasterized at `dpi`. The box keeps other
 * ink out: ZXing's reader takes the first start pattern it sees on a row, and a row of text beside
 * the bars can offer a false one.
 */
export const decodeCode128 = (image: GreyImage, box: PageBox, dpi = 300): string => {
  const scale = dpi / 72
  const left = Math.round(box.x * scale)
  const top = Math.round(box.y * scale)
  const width = Math.round(box.width * scale)
  const height = Math.round(box.height * scale)
  const crop = new Uint8ClampedArray(width * height)
  for (let y = 0; y < height; y++) {
    crop.set(image.pixels.subarray((top + y) * image.width + left, (top + y) * image.width + left + width), y * width)
  }
  const source = new RGBLuminanceSource(crop, width, height)
  return new Code128Reader().decode(new BinaryBitmap(new GlobalHistogramBinarizer(source))).getText()
}

/** The text of the QR code on a rasterized page (ZXing finds it by its finder patterns). */
export const decodeQrCode = (image: GreyImage): string => {
  const source = new RGBLuminanceSource(new Uint8ClampedArray(image.pixels), image.width, image.height)
  // ZXing's thorough search, with its local binarizer and then its global one: a reader of either
  // kind that finds the symbol is enough, the text it reads still has to be the note's.
  const hints = new Map([[DecodeHintType.TRY_HARDER, true]])
  try {
    return new QRCodeReader().decode(new BinaryBitmap(new HybridBinarizer(source)), hints).getText()
  } catch {
    return new QRCodeReader().decode(new BinaryBitmap(new GlobalHistogramBinarizer(source)), hints).getText()
  }
}

/**
 * The text of the QR code on page 1, scanned again at another resolution when one fails, as a
 * person holds the phone again: ZXing misreads some long symbols (an offline NFC-e's, its signature
 * inside) at one resolution and not at the next. Throws when no resolution reads it.
 */
export const readQrCode = (pdf: Uint8Array): string => {
  let failure: unknown
  for (const dpi of [600, 450, 300, 800]) {
    try {
      return decodeQrCode(rasterize(pdf, 1, dpi))
    } catch (error) {
      failure = error
    }
  }
  throw failure
}
