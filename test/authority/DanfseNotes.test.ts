/**
 * The DANFSe of real and rich notes, read back with `pdftotext -layout`: every value of the XML is
 * on the page (test/support/DanfseText.ts says how each is expected to look). The notes are the
 * real production note of Manaus and our own notes in danfse-notes/, each signed here as the
 * authority signs and checked against the official XSD (our validator and xmllint): ISS withheld
 * with federal retentions, discounts, deductions, a municipal benefit and an intermediary; an
 * export to a foreign taker with IBS/CBS, replacing another note (and a variant for a recipient
 * other than the taker); the ISS-withheld note with its deduction proved by a document, for an
 * event; an immune note of a CPF with a
 * percentage deduction and a taker without NIF.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { readFileSync } from "node:fs"
import { renderNfseXml } from "../../src/authority/danfse/Danfse.js"
import { readNote } from "../../src/authority/danfse/NfseReader.js"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { makePkcs12 } from "../support/certificates.js"
import { missingValues, pdfText } from "../support/DanfseText.js"
import { hasXmllint, xmllintValidate } from "../support/NfseXml.js"
import { hasTool } from "../support/tools.js"

beforeAll(() => loadSchemas())

const POPPLER = hasTool("pdftotext")

const authority = makePkcs12({ cn: "SEFIN LOCAL:00394460005887", cnpjOid: "00394460005887", password: "x" })

const signed = (name: string, edit: (xml: string) => string = (xml) => xml) =>
  signEnveloped(edit(readFileSync(new URL(`danfse-notes/${name}`, import.meta.url), "utf8")), {
    element: "infNFSe",
    privateKeyPem: authority.privateKeyPem,
    certificatePem: authority.certificatePem,
    withComments: true
  })

const manaus = readFileSync(
  new URL(
    "../../../shared/reference/nfse-nacional/samples/real-nfse-manaus-prod-2026-01.redacted.xml",
    import.meta.url
  ),
  "utf8"
)
const b2b = signed("b2b-withheld.xml")
const exportNote = signed("export-ibscbs-substitute.xml")
const immune = signed("immune-deduction.xml")

// The export for a recipient other than the taker (IBSCBS/dest).
const forAnother = signed("export-ibscbs-substitute.xml", (xml) =>
  xml.replace(
    "<indDest>0</indDest>",
    "<indDest>1</indDest><dest><CNPJ>11444777000161</CNPJ><xNome>Filial Brasileira da Acme Ltda.</xNome><end><endNac>" +
      "<cMun>3304557</cMun><CEP>20040002</CEP></endNac><xLgr>Avenida Rio Branco</xLgr><nro>1</nro>" +
      "<xBairro>Centro</xBairro></end><email>fiscal@acme-br.example</email></dest>"
  ))

// The B2B note with its deduction proved by a document, for an event.
const withDocuments = signed("b2b-withheld.xml", (xml) =>
  xml.replace(
    "<vDedRed><vDR>1000.00</vDR></vDedRed>",
    "<vDedRed><documentos><docDedRed><chNFe>35260311444777000161550010000012341000012345</chNFe><tpDedRed>2</tpDedRed>" +
      "<dtEmiDoc>2026-03-01</dtEmiDoc><vDedutivelRedutivel>1200.00</vDedutivelRedutivel>" +
      "<vDeducaoReducao>1000.00</vDeducaoReducao><fornec><CNPJ>45997418000153</CNPJ>" +
      "<xNome>Fornecedora de Materiais Ltda.</xNome></fornec></docDedRed></documentos></vDedRed>"
  ).replace(
    "<infoCompl>",
    "<atvEvento><xNome>Feira de Tecnologia 2026</xNome><dtIni>2026-03-05</dtIni><dtFim>2026-03-08</dtFim>" +
      "<idAtvEvt>EVT2026001</idAtvEvt></atvEvento><infoCompl>"
  ))

const notes = { manaus, b2b, export: exportNote, immune, forAnother, withDocuments } as const
const plain = { cancelled: false, substituted: false } as const

describe("the test notes", () => {
  it("pass the official NFS-e schema, with our validator and with xmllint", () => {
    for (const [name, xml] of Object.entries(notes)) {
      expect(validateXml("NFSe", xml), name).toEqual(Result.void)
      if (hasXmllint) expect(xmllintValidate("NFSe_v1.01.xsd", xml).output, name).toContain("validates")
    }
  })

  it("are read whole: parties, taxes, totals and the IBS/CBS group", () => {
    const read = (xml: string) => Result.getOrThrow(readNote(xml)).data
    const rich = read(b2b)
    expect(rich.issuer).toMatchObject({
      municipalRegistration: "12345678",
      tradeName: "Paulista Sistemas",
      simplesNacional: "1"
    })
    expect(rich.intermediary).toMatchObject({
      taxId: "45997418000153",
      address: { municipalityName: "Brasília", state: "DF" }
    })
    expect(rich.federalTax).toEqual({
      pisCofinsCst: "01",
      pisCofinsBase: "9500.00",
      pisRate: "0.65",
      cofinsRate: "3.00",
      pis: "61.75",
      cofins: "285.00",
      pisCofinsRetention: "3",
      socialSecurity: "1100.00",
      incomeTax: "150.00",
      csll: "95.00"
    })
    expect(rich.amounts).toMatchObject({
      deductions: "1000.00",
      base: "8000.00",
      totalWithheld: "1745.00",
      net: "7555.00"
    })
    const exported = read(exportNote)
    expect(exported.taker?.address).toMatchObject({
      countryCode: "US",
      city: "San Francisco",
      foreignPostalCode: "94105"
    })
    expect(exported.ibsCbs).toMatchObject({ cst: "000", classification: "000001", cbs: "180.00", ibsTotal: "20.00" })
    expect(exported.replaces).toMatchObject({ reasonCode: "99" })
    // The real note's padded municipal registration, without its padding.
    expect(read(manaus).issuer.municipalRegistration).toBe("51034401")
  })

  it("refuses what is not an NFS-e", () => {
    expect(Result.isFailure(readNote("<NFSe/>"))).toBe(true)
    expect(Result.isFailure(readNote("not xml"))).toBe(true)
    return expect(renderNfseXml("<x/>", plain)).rejects.toThrow("cannot be rendered")
  })
})

describe.skipIf(!POPPLER)("the DANFSe read back with pdftotext (needs poppler-utils)", () => {
  for (const [name, xml] of Object.entries(notes)) {
    it(`shows every value of the ${name} note`, async () => {
      const text = pdfText(await renderNfseXml(xml, plain))
      expect(missingValues(xml, text)).toEqual([])
      expect(text).not.toContain("CANCELADA")
      expect(text).not.toContain("NFS-e SUBSTITUÍDA por outra")
    })
  }

  it("shows the recipient of a note with IBS/CBS: the taker itself, or the one the note names", async () => {
    expect(pdfText(await renderNfseXml(exportNote, plain))).toContain("O DESTINATÁRIO É O PRÓPRIO TOMADOR / ADQUIRENTE")
    const text = pdfText(await renderNfseXml(forAnother, plain))
    expect(text).toMatch(/DESTINATÁRIO\s+CNPJ/)
    expect(text).toContain("Rio de Janeiro - RJ")
    expect(pdfText(await renderNfseXml(b2b, plain))).not.toContain("DESTINATÁRIO")
  })

  it("names each tpRetPisCofins of the shipped schema in words; the federal retentions leave PIS/COFINS out", async () => {
    const words = [
      "PIS/COFINS/CSLL não retidos",
      "PIS/COFINS retidos",
      "PIS/COFINS não retidos",
      "PIS/COFINS/CSLL retidos",
      "PIS/COFINS retidos, CSLL não retido",
      "PIS retido, COFINS/CSLL não retidos",
      "COFINS retido, PIS/CSLL não retidos",
      "PIS não retido, COFINS/CSLL retidos",
      "PIS/COFINS não retidos, CSLL retido",
      "COFINS não retido, PIS/CSLL retidos"
    ]
    for (const [code, label] of words.entries()) {
      const xml = signed(
        "b2b-withheld.xml",
        (note) => note.replace("<tpRetPisCofins>3</tpRetPisCofins>", `<tpRetPisCofins>${code}</tpRetPisCofins>`)
      )
      const text = pdfText(await renderNfseXml(xml, plain)).replace(/\s+/g, " ")
      // The label, whole, as the block's last value.
      expect(text, String(code)).toContain(`3,00% ${label} VALOR TOTAL DA NFS-e`)
    }
    // RETENÇÕES FEDERAIS = CP 1.100,00 + IRRF 150,00 + CSLL 95,00; PIS 61,75 and COFINS 285,00 are due, not withheld.
    // ISSQN RETIDO, RETENÇÕES FEDERAIS, TOTAL DAS RETENÇÕES (vTotalRet), VALOR LÍQUIDO (vLiq).
    const text = pdfText(await renderNfseXml(b2b, plain)).replace(/\s+/g, " ")
    expect(text).toContain("VALOR LÍQUIDO DA NFS-e R$ 400,00 R$ 1.345,00 R$ 1.745,00 R$ 7.555,00")
  })

  it("names the environment the note itself says", async () => {
    expect(pdfText(await renderNfseXml(manaus, plain))).not.toContain("SEM VALIDADE JURÍDICA")
    expect(pdfText(await renderNfseXml(b2b, plain))).toContain("SEM VALIDADE JURÍDICA")
  })

  it("writes every date and time in Brasília time, whatever offset the XML has", async () => {
    // dhEmi 13:20 at -04:00 and dhProc 08:05:09 at +00:00.
    expect(pdfText(await renderNfseXml(b2b, plain))).toContain("10/03/2026 14:20:00")
    const text = pdfText(await renderNfseXml(immune, plain))
    expect(text).toContain("20/05/2026 05:05:09")
    expect(text).toContain("horário de Brasília")
  })

  it("marks a cancelled note CANCELADA on every page, and every value stays readable", async () => {
    const text = pdfText(await renderNfseXml(b2b, { cancelled: true, substituted: false }))
    const pages = text.split("\f").filter((page) => page.trim() !== "")
    expect(pages.length).toBeGreaterThan(1)
    for (const page of pages) expect(page).toContain("NFS-e CANCELADA")
    expect(missingValues(b2b, text)).toEqual([])
  })

  it("marks a replaced note SUBSTITUÍDA, and every value stays readable", async () => {
    for (const xml of [manaus, exportNote]) {
      const text = pdfText(await renderNfseXml(xml, { cancelled: true, substituted: true }))
      expect(text).toContain("NFS-e SUBSTITUÍDA por outra")
      expect(text).toMatch(/SITUAÇÃO DA NFS-e[\s\S]*SUBSTITUÍDA/)
      expect(text).not.toContain("NFS-e CANCELADA")
      expect(missingValues(xml, text)).toEqual([])
    }
  })

  it("says '-' where the note has nothing: the real note has no federal group, no intermediary, no ISS computed", async () => {
    const text = pdfText(await renderNfseXml(manaus, plain))
    expect(text).toContain("SEM TRIBUTAÇÃO FEDERAL INFORMADA NA NFS-e")
    expect(text).toContain("INTERMEDIÁRIO NÃO IDENTIFICADO NA NFS-e")
    expect(text).not.toContain("Não informado")
    expect(text).toMatch(/ISSQN APURADO\s*\n(.*\s)?-\s*$/m)
  })

  it("gives the same bytes for the same note", async () => {
    const first = await renderNfseXml(exportNote, { cancelled: true, substituted: false })
    const second = await renderNfseXml(exportNote, { cancelled: true, substituted: false })
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(true)
  })
})
