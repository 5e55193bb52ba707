/**
 * The DANFSe as a reader sees it: the PDF goes through poppler (pdftoppm, pdftotext), independent
 * of pdfkit, and the page is checked for what it prints, where, and that nothing runs off it. The
 * QR code is read back from the rasterized page module by module and compared with the symbol an
 * independent `QRCode.create` makes of the consultation address (no QR decoder is installed here).
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import QRCode from "qrcode"
import { renderDanfse } from "../../src/authority/danfse/Danfse.js"
import type { DanfseData } from "../../src/authority/danfse/DanfseData.js"
import {
  formatDateTime,
  formatMoney,
  formatRate,
  formatTaxId,
  groupAccessKey
} from "../../src/authority/danfse/Format.js"
import { danfseQrCodeBox } from "../../src/authority/danfse/Page.js"
import { hasTool } from "../support/tools.js"

const hasPoppler = hasTool("pdftoppm") && hasTool("pdftotext")

const note: DanfseData = {
  accessKey: "35503082211222333000181000000000012326119876543215",
  nfseNumber: 123,
  processedAt: "2026-11-03T14:05:09.1234567-03:00",
  issuer: {
    taxId: "11222333000181",
    name: "Clínica São João da Conceição Ltda.",
    municipalityName: "São Paulo",
    email: "financeiro@clinicasaojoao.com.br",
    phone: "11987654321",
    address: {
      street: "Avenida Paulista",
      number: "1578",
      complement: "Conjunto 42",
      district: "Bela Vista",
      municipalityCode: "3550308",
      municipalityName: "São Paulo",
      state: "SP",
      postalCode: "01310200"
    }
  },
  taker: {
    taxId: "52998224725",
    name: "José Antônio Gonçalves",
    email: "jose.goncalves@example.com",
    address: {
      street: "Rua Três Corações",
      number: "45",
      district: "Perdizes",
      municipalityCode: "3550308",
      state: "SP",
      postalCode: "05010000"
    }
  },
  service: {
    code: "040303",
    description: "Consulta médica especializada em cardiologia, com eletrocardiograma e orientação ao paciente.",
    nbsCode: "123012200",
    municipalityCode: "3550308",
    municipalityName: "São Paulo"
  },
  amounts: {
    services: "1500.00",
    deductions: "0.00",
    base: "1500.00",
    issRate: "2.00",
    issAmount: "30.00",
    net: "1470.00"
  },
  dps: {
    id: "DPS355030821122233300018100001000000000000123",
    series: "1",
    number: 123,
    emittedAt: "2026-11-03T14:05:01-03:00",
    competence: "2026-11-03"
  },
  notes: "Pagamento via PIX em 03/11/2026. Atendimento nº 4521."
}

const production = { cancelled: false, environment: 1 } as const

const withTempDir = <A>(use: (dir: string) => A): A => {
  const dir = mkdtempSync(join(tmpdir(), "danfse-test-"))
  try {
    return use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const run = (command: string, args: ReadonlyArray<string>) => {
  const result = spawnSync(command, args, { encoding: "buffer" })
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr.toString()}`)
  return result.stdout
}

const pdfToText = (pdf: Uint8Array, extra: ReadonlyArray<string> = []): string =>
  withTempDir((dir) => {
    const file = join(dir, "danfse.pdf")
    writeFileSync(file, pdf)
    return run("pdftotext", [...extra, file, "-"]).toString("utf8")
  })

const pageCount = (text: string) => text.split("\f").filter((page) => page.trim() !== "").length

/** Every word pdftotext finds, with its box, and the page sizes (points). */
const wordBoxes = (pdf: Uint8Array) => {
  const html = pdfToText(pdf, ["-bbox"])
  const pages = [...html.matchAll(/<page width="([\d.]+)" height="([\d.]+)">/g)].map((m) => ({
    width: Number(m[1]),
    height: Number(m[2])
  }))
  const words = [
    ...html.matchAll(/<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)<\/word>/g)
  ]
    .map((m) => ({ xMin: Number(m[1]), yMin: Number(m[2]), xMax: Number(m[3]), yMax: Number(m[4]), text: m[5]! }))
  return { pages, words }
}

const expectEverythingOnThePage = (pdf: Uint8Array) => {
  const { pages, words } = wordBoxes(pdf)
  expect(pages.length).toBeGreaterThan(0)
  const { width, height } = pages[0]!
  const outside = words.filter((w) => w.xMin < 10 || w.yMin < 10 || w.xMax > width - 10 || w.yMax > height - 10)
  expect(outside).toEqual([])
}

/** A grayscale raster of a region of page 1 (PGM, parsed here: "P5 width height 255" + bytes). */
const rasterize = (pdf: Uint8Array, dpi: number, crop: { x: number; y: number; width: number; height: number }) =>
  withTempDir((dir) => {
    const file = join(dir, "danfse.pdf")
    writeFileSync(file, pdf)
    const px = (points: number) => Math.round((points * dpi) / 72)
    const pgm = run("pdftoppm", [
      "-gray",
      "-r",
      String(dpi),
      "-f",
      "1",
      "-l",
      "1",
      "-x",
      String(px(crop.x)),
      "-y",
      String(px(crop.y)),
      "-W",
      String(px(crop.width)),
      "-H",
      String(px(crop.height)),
      file
    ])
    const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 40).toString("latin1"))
    if (header === null) throw new Error("pdftoppm -gray did not produce a binary PGM")
    const width = Number(header[1])
    const height = Number(header[2])
    const pixels = pgm.subarray(header[0].length)
    return { width, height, dark: (x: number, y: number) => pixels[y * width + x]! < 128 }
  })

// Without poppler-utils (pdftoppm, pdftotext) the PDF cannot be read back independently of pdfkit:
// those tests are skipped, and say so in the report.
describe.skipIf(!hasPoppler)("DANFSe rendering, read back with poppler (pdftoppm, pdftotext)", () => {
  it("is a PDF whose first page pdftoppm turns into an A4 PNG", async () => {
    const pdf = await renderDanfse(note, production)
    expect(Buffer.from(pdf.subarray(0, 5)).toString("latin1")).toBe("%PDF-")
    withTempDir((dir) => {
      const file = join(dir, "danfse.pdf")
      writeFileSync(file, pdf)
      run("pdftoppm", ["-png", "-r", "60", "-f", "1", "-l", "1", file, join(dir, "page")])
      const png = readFileSync(join(dir, "page-1.png"))
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      // IHDR: A4 (595 × 842 points) at 60 dpi is about 496 × 702 pixels (poppler rounds up).
      expect(Math.abs(png.readUInt32BE(16) - 496)).toBeLessThanOrEqual(1)
      expect(Math.abs(png.readUInt32BE(20) - 702)).toBeLessThanOrEqual(1)
    })
  })

  it("prints the access key, the parties with their accents, amounts, ids and dates in pt-BR", async () => {
    const text = pdfToText(await renderDanfse(note, production))
    expect(text).toContain("DANFSe v2.0")
    expect(text).toContain("Documento Auxiliar da NFS-e")
    expect(text).toContain("3550 3082 2112 2233 3000 1810 0000 0000 0123 2611 9876 5432 15")
    expect(text).toContain("Clínica São João da Conceição Ltda.")
    expect(text).toContain("José Antônio Gonçalves")
    expect(text).toContain(
      "Consulta médica especializada em cardiologia, com eletrocardiograma e orientação ao paciente."
    )
    expect(text).toContain("Pagamento via PIX em 03/11/2026. Atendimento nº 4521.")
    for (const amount of ["R$ 1.500,00", "R$ 0,00", "R$ 30,00", "R$ 1.470,00", "2,00%"]) expect(text).toContain(amount)
    expect(text).toContain("11.222.333/0001-81")
    expect(text).toContain("529.982.247-25")
    expect(text).toContain("01310-200")
    expect(text).toContain("(11) 98765-4321")
    expect(text).toContain("04.03.03")
    expect(text).toContain("1.2301.22.00")
    expect(text).toContain("03/11/2026 14:05:09") // processing (dhProc), in Brasília time
    expect(text).toContain("03/11/2026 14:05:01") // DPS emission (dhEmi)
    expect(text).toContain("DPS355030821122233300018100001000000000000123")
    expect(text).toContain("Produção")
    expect(text).not.toContain("CANCELADA")
    expect(text).not.toContain("SEM VALIDADE JURÍDICA")
    expect(pageCount(text)).toBe(1)
  })

  it("stamps CANCELADA only when cancelled and SEM VALIDADE JURÍDICA only in homologation", async () => {
    for (const cancelled of [false, true]) {
      for (const environment of [1, 2] as const) {
        const text = pdfToText(await renderDanfse(note, { cancelled, environment }))
        expect(text.includes("CANCELADA"), `cancelled=${cancelled} environment=${environment}`).toBe(cancelled)
        expect(text.includes("SEM VALIDADE JURÍDICA"), `cancelled=${cancelled} environment=${environment}`).toBe(
          environment === 2
        )
        expect(text).toContain("José Antônio Gonçalves")
      }
    }
  })

  it("formats an alphanumeric CNPJ and says when the taker is not identified", async () => {
    const text = pdfToText(
      await renderDanfse({ ...note, issuer: { ...note.issuer, taxId: "12ABC34501DE35" }, taker: undefined }, production)
    )
    expect(text).toContain("12.ABC.345/01DE-35")
    expect(text).toContain("TOMADOR / ADQUIRENTE NÃO IDENTIFICADO NA NFS-e")
  })

  it("draws the QR code of the public consultation address, module for module", async () => {
    const url = `https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${note.accessKey}`
    const expected = QRCode.create(url, { errorCorrectionLevel: "M" }).modules
    // Homologation and cancelled: the band and the stamp must leave the symbol alone too.
    for (const options of [production, { cancelled: true, environment: 2 } as const]) {
      const pdf = await renderDanfse(note, options)
      const margin = 3 // inside the quiet zone: only the symbol's own modules are dark in the crop
      const raster = rasterize(pdf, 200, {
        x: danfseQrCodeBox.x - margin,
        y: danfseQrCodeBox.y - margin,
        width: danfseQrCodeBox.size + 2 * margin,
        height: danfseQrCodeBox.size + 2 * margin
      })
      // The symbol's extent from its dark pixels (finder patterns sit in three of its corners).
      let [left, top, right, bottom] = [raster.width, raster.height, -1, -1]
      for (let y = 0; y < raster.height; y++) {
        for (let x = 0; x < raster.width; x++) {
          if (!raster.dark(x, y)) continue
          left = Math.min(left, x)
          top = Math.min(top, y)
          right = Math.max(right, x)
          bottom = Math.max(bottom, y)
        }
      }
      expect(right - left).toBeGreaterThan(100)
      const moduleWidth = (right - left + 1) / expected.size
      const moduleHeight = (bottom - top + 1) / expected.size
      const drawn: Array<string> = []
      const wanted: Array<string> = []
      for (let row = 0; row < expected.size; row++) {
        let drawnRow = ""
        let wantedRow = ""
        for (let col = 0; col < expected.size; col++) {
          const x = Math.floor(left + (col + 0.5) * moduleWidth)
          const y = Math.floor(top + (row + 0.5) * moduleHeight)
          drawnRow += raster.dark(x, y) ? "#" : "."
          wantedRow += expected.get(row, col) ? "#" : "."
        }
        drawn.push(drawnRow)
        wanted.push(wantedRow)
      }
      expect(drawn).toEqual(wanted)
    }
  })

  it("keeps a 2000-character description and 2000-character notes whole, the totals on page 1", async () => {
    const filler = "Manutenção preventiva e corretiva de equipamentos de informática, com substituição de peças. "
    const description = `${filler.repeat(30).slice(0, 1980)} FIM-DA-DESCRICAO`
    const notes = `${filler.repeat(30).slice(0, 1984)} FIM-DAS-NOTAS`
    expect([description.length, notes.length]).toEqual([1997, 1998])
    const pdf = await renderDanfse({ ...note, service: { ...note.service, description }, notes }, {
      cancelled: true,
      environment: 2
    })
    const text = pdfToText(pdf)
    expect(text).toContain("FIM-DA-DESCRICAO")
    expect(text).toContain("FIM-DAS-NOTAS")
    // The national layout's blocks leave page 1 room for most of both texts at 6 pt; the rest continues.
    const pages = text.split("\f").filter((page) => page.trim() !== "")
    expect(pages[0]).toContain("R$ 1.470,00")
    expect(pageCount(text)).toBeLessThanOrEqual(2)
    expectEverythingOnThePage(pdf)
  })

  it("continues what cannot fit one page on further pages, losing no line", async () => {
    const description = Array.from({ length: 300 }, (_, i) => `descrição-linha-${i}`).join("\n")
    const notes = Array.from({ length: 250 }, (_, i) => `observação-linha-${i}`).join("\n")
    const pdf = await renderDanfse({ ...note, service: { ...note.service, description }, notes }, {
      cancelled: true,
      environment: 2
    })
    const text = pdfToText(pdf)
    const pages = text.split("\f").filter((page) => page.trim() !== "")
    expect(pages.length).toBeGreaterThan(1)
    expect(pages[0]).toContain("(continua na página 2)")
    expect(pages[0]).toContain("R$ 1.470,00")
    for (let i = 0; i < 300; i++) expect(text.match(new RegExp(`descrição-linha-${i}\\b`, "g"))).toHaveLength(1)
    for (let i = 0; i < 250; i++) expect(text.match(new RegExp(`observação-linha-${i}\\b`, "g"))).toHaveLength(1)
    pages.forEach((page, i) => {
      expect(page).toContain(`Página ${i + 1} de ${pages.length}`)
      expect(page).toContain("CANCELADA")
      expect(page).toContain("SEM VALIDADE JURÍDICA")
    })
    expectEverythingOnThePage(pdf)
  })

  it("keeps the page whole with every field at its schema maximum", async () => {
    const wide = (n: number) => "W".repeat(n)
    const address = {
      street: wide(255),
      number: wide(60),
      complement: wide(156),
      district: wide(60),
      municipalityName: wide(60),
      state: "SP",
      postalCode: "01310200"
    }
    const filler = "Manutenção preventiva e corretiva de equipamentos de informática, com substituição de peças. "
    const pdf = await renderDanfse(
      {
        ...note,
        issuer: { ...note.issuer, name: wide(300), email: wide(80), municipalityName: wide(60), address },
        taker: { ...note.taker, name: wide(300), email: wide(80), address },
        service: {
          ...note.service,
          municipalityName: wide(60),
          description: `${filler.repeat(30).slice(0, 1990)} FIM-DA-DESCRICAO`
        },
        notes: `${filler.repeat(30).slice(0, 1990)} FIM-DAS-NOTAS`
      },
      { cancelled: true, environment: 2 }
    )
    const text = pdfToText(pdf)
    expect(text).toContain("FIM-DA-DESCRICAO")
    expect(text).toContain("FIM-DAS-NOTAS")
    expect(text).toContain("R$ 1.470,00")
    expectEverythingOnThePage(pdf)
  })

  it("prints characters the standard fonts lack as ?, and breaks a word longer than the line", async () => {
    const word = "x".repeat(400)
    const pdf = await renderDanfse(
      { ...note, service: { ...note.service, description: `Serviço 😀 中 ok ${word}` } },
      production
    )
    const text = pdfToText(pdf)
    expect(text).toContain("Serviço ? ? ok")
    expect(text.replace(/\s/g, "")).toContain(word)
    expectEverythingOnThePage(pdf)
  })

  it("dates the PDF with the NFS-e's processing time", async () => {
    const html = pdfToText(await renderDanfse(note, production), ["-bbox"])
    expect(html).toContain(`<meta name="CreationDate" content="2026-11-03T17:05:09Z"/>`)
  })
})

describe("DANFSe rendering", () => {
  it("gives the same bytes for the same note, fast", async () => {
    const first = await renderDanfse(note, { cancelled: true, environment: 2 })
    const rounds = 20
    const started = performance.now()
    let last = first
    for (let i = 0; i < rounds; i++) last = await renderDanfse(note, { cancelled: true, environment: 2 })
    const perRender = (performance.now() - started) / rounds
    expect(Buffer.from(last).equals(Buffer.from(first))).toBe(true)
    // Generous bound for a loaded CI machine; a render takes ~10 ms on an idle one.
    expect(perRender).toBeLessThan(250)
  })
})

describe("DANFSe formatting", () => {
  it("writes amounts and rates in pt-BR without going through floating point", () => {
    expect(formatMoney("1500.00")).toBe("R$ 1.500,00")
    expect(formatMoney("1234567.5")).toBe("R$ 1.234.567,50")
    expect(formatMoney("0.00")).toBe("R$ 0,00")
    expect(formatMoney("90071992547409.99")).toBe("R$ 90.071.992.547.409,99")
    expect(formatMoney(undefined)).toBe("-")
    expect(formatRate("2.00")).toBe("2,00%")
    expect(formatRate("5")).toBe("5,00%")
  })

  it("formats CNPJ (numeric and alphanumeric), CPF, and leaves other ids alone", () => {
    expect(formatTaxId("11222333000181")).toBe("11.222.333/0001-81")
    expect(formatTaxId("12abc34501de35")).toBe("12.ABC.345/01DE-35")
    expect(formatTaxId("52998224725")).toBe("529.982.247-25")
    expect(formatTaxId("NIF-PT-123456789")).toBe("NIF-PT-123456789")
    // Check digits that do not hold: not a CNPJ, printed as given.
    expect(formatTaxId("11222333000182")).toBe("11222333000182")
  })

  it("shows every time in Brasília time, whatever its offset and the machine's zone, and groups the key by four", () => {
    expect(formatDateTime("2026-01-15T19:43:39-03:00")).toBe("15/01/2026 19:43:39")
    expect(formatDateTime("2026-01-15T19:43:39.1234567-03:00")).toBe("15/01/2026 19:43:39")
    expect(formatDateTime("2026-01-15T18:43:39-04:00")).toBe("15/01/2026 19:43:39")
    expect(formatDateTime("2026-01-16T01:10:00Z")).toBe("15/01/2026 22:10:00")
    expect(formatDateTime("2026-01-01T00:30:00+00:00")).toBe("31/12/2025 21:30:00")
    // Without an offset there is nothing to convert from: printed as written.
    expect(formatDateTime("2026-01-15T19:43:39")).toBe("15/01/2026 19:43:39")
    expect(groupAccessKey("13026032242713924000185000000000003226012551995400")).toBe(
      "1302 6032 2427 1392 4000 1850 0000 0000 0032 2601 2551 9954 00"
    )
  })
})
