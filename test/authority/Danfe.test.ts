/**
 * The DANFE of an NF-e (A4) and the DANFE NFC-e (80 mm), drawn from signed notes with their
 * protocol, read back by tools we did not write: poppler's `pdftotext`/`pdfinfo` for the values
 * and the page, ZXing for the Code-128C barcode and the QR code. Expected values are taken from the
 * XML and written here in their pt-BR form through Intl, not through the renderer's formatting.
 */
import { DOMParser, type Element } from "@xmldom/xmldom"
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { danfeOf } from "../../src/authority/danfe/Danfe.js"
import { danfeBarcodeBox } from "../../src/authority/danfe/DanfeBlocks.js"
import { type NoteProtocol, processedNote, protocolElement } from "../../src/authority/sefaz/NfeProtocol.js"
import type { NfeInput } from "../../src/authority/sefaz/NfeXml.js"
import { loadNfeSchemas } from "../../src/authority/sefaz/NfeXsd.js"
import { signedNote } from "../../src/authority/sefaz/SignedNote.js"
import { simulatorSigner } from "../../src/authority/simulator/SimulatorSigner.js"
import type { GoodsItem } from "../../src/domain/GoodsInvoice.js"
import { decodeCode128, rasterize, readQrCode } from "../support/Barcode.js"
import { pageSizes, pdfText } from "../support/DanfseText.js"
import { counterSale, interstateSale, nfeInput, rsSimplesIssuer, simplesSale, taxedItem } from "../support/NfeXml.js"
import { hasTool } from "../support/tools.js"

const poppler = hasTool("pdftotext") && hasTool("pdftoppm") && hasTool("pdfinfo")
if (!poppler) console.warn("Danfe.test.ts: skipped, poppler-utils (pdftotext, pdftoppm, pdfinfo) is not installed")

const NFE = "http://www.portalfiscal.inf.br/nfe"

/** A note as the authority returns it: signed, with its protocol; or, offline, the signed note alone. */
const noteXml = async (input: NfeInput, authorized = true): Promise<string> => {
  const signed = await Effect.runPromise(signedNote(input, simulatorSigner()))
  if (!authorized) return signed.note
  const protocol: NoteProtocol = {
    environment: input.environment,
    application: "SP_NFE_PL009_V4",
    accessKey: signed.accessKey,
    receivedAt: new Date("2026-11-10T14:30:21Z"),
    protocol: "135260004567890",
    digestValue: "c2ltdWxhZG8=",
    status: "100",
    reason: "Autorizado o uso da NF-e"
  }
  return processedNote(signed.note, protocolElement(protocol))
}

const parse = (xml: string) => new DOMParser().parseFromString(xml, "application/xml")
const all = (from: { getElementsByTagNameNS(ns: string, name: string): ArrayLike<Element> }, name: string) =>
  Array.from(from.getElementsByTagNameNS(NFE, name))
const textOf = (
  from: Element | { getElementsByTagNameNS(ns: string, name: string): ArrayLike<Element> },
  name: string
) => all(from, name)[0]?.textContent ?? undefined

const brl = (raw: string) =>
  Number(raw).toLocaleString("pt-BR", { minimumFractionDigits: 2, maximumFractionDigits: 10 })
const cnpj = (digits: string) => digits.replace(/^(\d{2})(\d{3})(\d{3})(\d{4})(\d{2})$/, "$1.$2.$3/$4-$5")
const flat = (text: string) => text.replace(/\s+/g, "")

/** Every value of the note a reader checks the DANFE by, as it must read on the page. */
const expectedValues = (xml: string): Array<string> => {
  const doc = parse(xml)
  const emit = all(doc, "emit")[0]!
  const dest = all(doc, "dest")[0]
  const total = all(doc, "ICMSTot")[0]!
  const values = [
    textOf(doc, "nNF")!.padStart(9, "0").replace(/(\d{3})(?=\d)/g, "$1."),
    textOf(doc, "natOp")!,
    textOf(emit, "xNome")!,
    cnpj(textOf(emit, "CNPJ")!),
    textOf(emit, "IE")!,
    textOf(doc, "nProt")!,
    ...["vBC", "vICMS", "vProd", "vFrete", "vDesc", "vIPI", "vPIS", "vCOFINS", "vNF"].map((n) => brl(textOf(total, n)!))
  ]
  if (dest !== undefined) {
    values.push(textOf(dest, "xNome")!, textOf(dest, "xBairro")!, textOf(dest, "xMun")!)
    const taxId = textOf(dest, "CNPJ")
    if (taxId !== undefined) values.push(cnpj(taxId))
  }
  for (const det of all(doc, "det")) {
    for (const name of ["cProd", "NCM", "CFOP", "uCom"]) values.push(textOf(det, name)!)
    values.push(brl(textOf(det, "qCom")!), brl(textOf(det, "vUnCom")!), brl(textOf(all(det, "prod")[0]!, "vProd")!))
    const icms = textOf(all(det, "ICMS")[0]!, "vICMS")
    if (icms !== undefined) values.push(brl(icms))
  }
  const notes = textOf(doc, "infCpl")
  if (notes !== undefined) values.push(...notes.split(" "))
  return values.map(flat)
}

/** The words of every item's description (a description wraps inside its column). */
const descriptionWords = (xml: string): Array<string> =>
  all(parse(xml), "xProd").flatMap((x) => x.textContent!.split(/\s+/)).filter((w) => w.length > 2)

describe.skipIf(!poppler)("the DANFE", () => {
  beforeAll(() => loadNfeSchemas())

  it("an NF-e's A4 DANFE prints the note's values and its barcode reads back as the access key", async () => {
    const xml = await noteXml(nfeInput({ request: interstateSale }))
    const pdf = await danfeOf(xml, { cancelled: false })
    const sizes = pageSizes(pdf)
    expect(sizes).toEqual([{ width: 595.28, height: 841.89 }])
    const text = pdfText(pdf)
    const page = flat(text)
    for (const value of expectedValues(xml)) expect(page).toContain(value)
    for (const word of descriptionWords(xml)) expect(page).toContain(flat(word))
    const key = /Id="NFe(\d{44})"/.exec(xml)![1]!
    expect(page).toContain(key)
    for (
      const block of [
        "RECEBEMOS DE",
        "DANFE",
        "CHAVE DE ACESSO",
        "PROTOCOLO DE AUTORIZAÇÃO DE USO",
        "DESTINATÁRIO / REMETENTE",
        "CÁLCULO DO IMPOSTO",
        "TRANSPORTADOR / VOLUMES TRANSPORTADOS",
        "DADOS DOS PRODUTOS / SERVIÇOS",
        "DADOS ADICIONAIS",
        "FOLHA 1/1",
        "0 - Remetente (CIF)",
        "Boleto Bancário"
      ]
    ) expect(text).toContain(block)
    // Homologation, not cancelled.
    expect(text).toContain("SEM VALOR FISCAL")
    expect(text).not.toContain("CANCELADA")

    const box = danfeBarcodeBox
    expect(decodeCode128(rasterize(pdf), { x: box.x + 1, y: box.y + 1, width: box.width - 2, height: box.height - 2 }))
      .toBe(key)
  })

  it("a Simples emitter's items show origin and CSOSN; a live note has no homologation words; the bytes repeat", async () => {
    const xml = await noteXml(nfeInput({ request: simplesSale, issuer: rsSimplesIssuer, environment: "live" }))
    const pdf = await danfeOf(xml, { cancelled: false })
    const text = pdfText(pdf)
    expect(text).toContain("O/CSOSN")
    expect(text).toMatch(/CX-1\s.*\s0101\s/)
    expect(text).toMatch(/CX-2\s.*\s0102\s/)
    for (const value of expectedValues(xml)) expect(flat(text)).toContain(value)
    expect(text).not.toMatch(/HOMOLOGA|SEM VALOR FISCAL/)
    expect(Buffer.from(await danfeOf(xml, { cancelled: false })).equals(Buffer.from(pdf))).toBe(true)
  })

  it("items beyond page 1 continue on further pages under the same header, each printed once; long notes continue after them", async () => {
    const items: Array<GoodsItem> = Array.from({ length: 70 }, (_, i) => ({
      ...taxedItem,
      code: `PECA-${String(i + 1).padStart(3, "0")}`,
      description: i % 7 === 0
        ? `Peça de reposição número ${i + 1} para motores diesel de linha pesada, com garantia de fábrica de doze meses`
        : `Peça de reposição ${i + 1}`,
      quantity: "1",
      discount: undefined
    }))
    const notes = Array.from({ length: 420 }, (_, i) => `obs${String(i).padStart(4, "0")}`).join(" ")
    const sale = { ...interstateSale, items, payments: [{ method: "bank_slip" as const, amount: 0 }], notes }
    const draft = await noteXml(nfeInput({ request: sale }))
    const vNF = textOf(all(parse(draft), "ICMSTot")[0]!, "vNF")!
    const paid = Math.round(Number(vNF) * 100)
    const xml = await noteXml(nfeInput({ request: { ...sale, payments: [{ method: "bank_slip", amount: paid }] } }))
    const pdf = await danfeOf(xml, { cancelled: false })
    const pages = pdfText(pdf).split("\f").filter((p) => p.trim() !== "")
    expect(pages.length).toBeGreaterThanOrEqual(3)
    const key = /Id="NFe(\d{44})"/.exec(xml)![1]!
    pages.forEach((page, i) => {
      expect(flat(page)).toContain(key)
      expect(page).toContain(`FOLHA ${i + 1}/${pages.length}`)
    })
    const whole = pages.join("\n")
    for (const item of items) expect(whole.match(new RegExp(`${item.code}\\b`, "g"))?.length).toBe(1)
    expect(whole).toContain("DADOS ADICIONAIS (CONTINUAÇÃO)")
    for (const word of notes.split(" ")) expect(whole).toContain(word)
    expect(pageSizes(pdf).every((size) => size.width === 595.28 && size.height === 841.89)).toBe(true)
  })

  it("a cancelled NF-e is marked CANCELADA over readable values", async () => {
    const xml = await noteXml(nfeInput({ request: interstateSale, environment: "live" }))
    const text = pdfText(await danfeOf(xml, { cancelled: true }))
    expect(text).toContain("NF-e CANCELADA")
    for (const value of expectedValues(xml)) expect(flat(text)).toContain(value)
  })

  it("an NFC-e's DANFE is an 80 mm receipt with the sale, the payments, the query address and a QR code that reads back", async () => {
    const xml = await noteXml(nfeInput({ request: counterSale }))
    const pdf = await danfeOf(xml, { cancelled: false })
    const [size, ...more] = pageSizes(pdf)
    expect(more).toEqual([])
    expect(size!.width).toBeCloseTo(226.77, 1)
    const text = pdfText(pdf)
    const page = flat(text)
    const doc = parse(xml)
    const key = /Id="NFe(\d{44})"/.exec(xml)![1]!
    for (
      const value of [
        key,
        textOf(doc, "urlChave")!,
        textOf(doc, "nProt")!,
        ...all(doc, "det").flatMap((det) => [
          textOf(det, "cProd")!,
          brl(textOf(det, "qCom")!),
          brl(textOf(det, "vUnCom")!),
          brl(textOf(all(det, "prod")[0]!, "vProd")!)
        ]),
        `ValoraPagarR$${brl(textOf(doc, "vNF")!)}`,
        `Dinheiro${brl(textOf(doc, "vPag")!)}`,
        `TrocoR$${brl(textOf(doc, "vTroco")!)}`,
        "CONSUMIDORNÃOIDENTIFICADO",
        "DocumentoAuxiliardaNotaFiscaldeConsumidorEletrônica",
        "EMITIDAEMAMBIENTEDEHOMOLOGAÇÃO-SEMVALORFISCAL"
      ]
    ) expect(page).toContain(flat(value))
    expect(readQrCode(pdf)).toBe(textOf(doc, "qrCode"))
  })

  it("an NFC-e issued offline says it is in contingency and pending, and its QR code carries the signed offline facts", async () => {
    const input = nfeInput({
      request: { ...counterSale, recipient: { tax_id: "52998224725", name: "João Consumidor" } },
      environment: "live",
      contingency: { since: new Date("2026-11-10T14:00:00Z"), reason: "Sem comunicação com a SEFAZ autorizadora" }
    })
    const xml = await noteXml(input, false)
    const pdf = await danfeOf(xml, { cancelled: false })
    const text = pdfText(pdf)
    expect(text).toContain("EMITIDA EM CONTINGÊNCIA")
    expect(text).toContain("Pendente de autorização")
    expect(flat(text)).toContain(flat("CONSUMIDOR - CPF: 529.982.247-25 - João Consumidor"))
    const qr = readQrCode(pdf)
    expect(qr).toBe(textOf(parse(xml), "qrCode"))
  })

  it("a cancelled NFC-e is marked CANCELADA", async () => {
    const xml = await noteXml(nfeInput({ request: counterSale, environment: "live" }))
    const text = pdfText(await danfeOf(xml, { cancelled: true }))
    expect(text).toContain("NFC-e CANCELADA")
    expect(text).not.toContain("HOMOLOGAÇÃO")
  })
})
