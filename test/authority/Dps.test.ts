/**
 * The DPS v1.01 built from a document: valid against the official schema (checked by our
 * validator and independently by xmllint), the deterministic 45-character id, dhEmi in Brasília
 * time, escaping that survives a round trip, the regime-dependent tax fields, and readDps for the
 * local authority.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { buildDps, type DpsInput, formatRateForXml } from "../../src/authority/sefin/Dps.js"
import { dpsId } from "../../src/authority/sefin/DpsId.js"
import { readDps } from "../../src/authority/sefin/DpsRead.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { plainAmounts } from "../support/amounts.js"
import { hasXmllint, realisticDpsInput, withXmllint, xmllintValidate } from "../support/NfseXml.js"

const build = (overrides: Partial<DpsInput> = {}) => buildDps({ ...realisticDpsInput, ...overrides })

const expectValid = (xml: string) => expect(validateXml("DPS", xml)).toEqual(Result.void)

const read = (xml: string) => {
  const parsed = readDps(xml)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  return parsed.success
}

const dhEmiOf = (xml: string) => /<dhEmi>([^<]*)<\/dhEmi>/.exec(xml)?.[1]

describe("DPS v1.01", () => {
  it("builds a DPS from a realistic document that the official schema accepts", () => {
    const { id, xml } = build()
    expectValid(xml)
    expect(
      xml.startsWith(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DPS versao=\"1.01\" xmlns=\"http://www.sped.fazenda.gov.br/nfse\">"
      )
    )
      .toBe(true)
    expect(xml).toContain(`<infDPS Id="${id}"><tpAmb>2</tpAmb>`)
    // No whitespace between elements, no signature yet.
    expect(xml).not.toMatch(/>\s+</)
    expect(xml).not.toContain("Signature")
    expect(xml).toContain(
      "<serie>1</serie><nDPS>42</nDPS><dCompet>2026-11-10</dCompet><tpEmit>1</tpEmit><cLocEmi>3550308</cLocEmi>"
    )
    expect(xml).toContain(
      "<prest><CNPJ>11222333000181</CNPJ><regTrib><opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib></regTrib></prest>"
    )
    expect(xml).toContain("<locPrest><cLocPrestacao>3550308</cLocPrestacao></locPrest>")
    expect(xml).toContain("<cTribNac>010701</cTribNac>")
    expect(xml).toContain("<cNBS>115022000</cNBS>")
    expect(xml).toContain("<vServPrest><vServ>1500.00</vServ></vServPrest>")
    expect(xml).toContain("<tribMun><tribISSQN>1</tribISSQN><tpRetISSQN>1</tpRetISSQN></tribMun>")
    expect(xml).toContain("<infoCompl><xInfComp>Pedido de compra 2026/0457</xInfComp></infoCompl>")
  })

  it.skipIf(!hasXmllint)(withXmllint("is accepted by xmllint with the patched official schemas"), () => {
    for (const xml of [build().xml, build({ taker: { tax_id: "52998224725", name: "Maria" } }).xml]) {
      const run = xmllintValidate("DPS_v1.01.xsd", xml)
      expect(run.ok, run.output).toBe(true)
      expect(run.output).toContain("validates")
    }
  })

  it("writes dhEmi as Brasília time with its offset and no fraction, also across midnight UTC", () => {
    expect(dhEmiOf(build().xml)).toBe("2026-11-10T11:30:15-03:00")
    // 02:30 UTC on New Year's Day is still the previous year in Brasília.
    expect(dhEmiOf(build({ emittedAt: new Date("2026-01-01T02:30:00.999Z") }).xml)).toBe("2025-12-31T23:30:00-03:00")
    expect(dhEmiOf(build({ emittedAt: new Date("2026-03-01T00:00:00Z") }).xml)).toBe("2026-02-28T21:00:00-03:00")
    expect(dhEmiOf(build({ emittedAt: new Date("2026-03-01T03:00:00Z") }).xml)).toBe("2026-03-01T00:00:00-03:00")
    for (const at of ["2026-06-30T23:59:59.999Z", "2026-12-31T03:00:00.001Z"]) {
      const dhEmi = dhEmiOf(build({ emittedAt: new Date(at) }).xml)!
      expect(dhEmi).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}-03:00$/)
      // Same instant, to the second.
      expect(Date.parse(dhEmi)).toBe(Math.floor(Date.parse(at) / 1000) * 1000)
    }
  })

  it("derives the 45-character DPS id: cLocEmi, registration type, tax id, series, number", () => {
    const cnpj = dpsId({ municipalityCode: "3550308", taxId: "11.222.333/0001-81", series: "1", number: 42 })
    expect(cnpj).toBe("DPS" + "3550308" + "2" + "11222333000181" + "00001" + "000000000000042")
    expect(cnpj).toHaveLength(45)

    const cpf = dpsId({
      municipalityCode: "1302603",
      taxId: "529.982.247-25",
      series: "99999",
      number: 999_999_999_999_999
    })
    expect(cpf).toBe("DPS" + "1302603" + "1" + "00052998224725" + "99999" + "999999999999999")
    expect(cpf).toHaveLength(45)

    const alphanumeric = dpsId({ municipalityCode: "3550308", taxId: "12abc34501de35", series: "900", number: 7 })
    expect(alphanumeric).toBe("DPS" + "3550308" + "2" + "12ABC34501DE35" + "00900" + "000000000000007")
    expect(alphanumeric).toHaveLength(45)

    expect(build().id).toBe(cnpj)
  })

  it("builds a valid DPS for a CPF issuer, and a CPF issuer's id carries registration type 1", () => {
    const { id, xml } = build({ issuer: { taxId: "52998224725", municipalityCode: "3550308" } })
    expectValid(xml)
    expect(id.slice(10, 11)).toBe("1")
    expect(xml).toContain("<prest><CPF>52998224725</CPF>")
  })

  it("validates an alphanumeric CNPJ issuer: the package of 27/07/2026 has alphanumeric CNPJ and DPS id types", () => {
    const { id, xml } = build({ issuer: { taxId: "12ABC34501DE35", municipalityCode: "3550308" } })
    expectValid(xml)
    expect(id.slice(10, 25)).toBe("212ABC34501DE35")
    expect(xml).toContain("<prest><CNPJ>12ABC34501DE35</CNPJ>")
  })

  it("escapes &, <, >, quotes and keeps accents, round-tripping through the schema and readDps", () => {
    const name = `Zé & Filhos <Açaí> "Ltda" 'ME' — São João`
    const description = "Manutenção de <servidor> & rede\nLinha 2: \"ok\" 'sim'\n\tRecuo"
    const notes = "Obs: a < b && c > d \"aspas\" 'apóstrofo'"
    const { xml } = build({
      taker: { ...realisticDpsInput.taker!, name },
      service: { ...realisticDpsInput.service, description },
      notes
    })
    // xNome is any text; the em dash is outside the Latin-1 range the TSString fields allow, and xNome
    // is not one of them.
    expectValid(xml)
    expect(xml).toContain("<xNome>Zé &amp; Filhos &lt;Açaí&gt; \"Ltda\" 'ME' — São João</xNome>")
    const parsed = read(xml)
    expect(parsed.taker?.name).toBe(name)
    expect(parsed.service.description).toBe(description)
    expect(parsed.notes).toBe(notes)
  })

  it("makes single-line fields schema-shaped: whitespace runs collapsed, NFC, control characters dropped", () => {
    const { xml } = build({
      taker: {
        ...realisticDpsInput.taker!,
        address: { ...realisticDpsInput.taker!.address!, street: "  Rua\tdas  Flores\n" }
      },
      // "e" + combining acute: NFC makes it the Latin-1 "é" the TSString pattern accepts.
      notes: "Primeira linha\r\nsegunda\u0000 linha  Cafe\u0301"
    })
    expectValid(xml)
    expect(xml).toContain("<xLgr>Rua das Flores</xLgr>")
    expect(read(xml).notes).toBe("Primeira linha segunda linha Café")
  })

  it("leaves cNBS out when the document has no NBS code, which the schema of 27/07/2026 allows again", () => {
    const { xml } = build({ service: { ...realisticDpsInput.service, nbsCode: undefined } })
    expect(xml).not.toContain("cNBS")
    expectValid(xml)
  })

  it("writes a taker with a CNPJ and a full address, or a CPF without address or email", () => {
    const withAddress = build().xml
    expectValid(withAddress)
    expect(withAddress).toContain(
      "<toma><CNPJ>45997418000153</CNPJ><xNome>Comércio de Peças Ação &amp; Cia Ltda</xNome>" +
        "<end><endNac><cMun>3304557</cMun><CEP>20040901</CEP></endNac><xLgr>Avenida Rio Branco</xLgr><nro>156</nro>" +
        "<xCpl>Sala 1203</xCpl><xBairro>Centro</xBairro></end><email>financeiro@example.com.br</email></toma>"
    )
    const bare = build({ taker: { tax_id: "529.982.247-25", name: "Maria da Silva" } }).xml
    expectValid(bare)
    expect(bare).toContain("<toma><CPF>52998224725</CPF><xNome>Maria da Silva</xNome></toma>")

    const noComplement = build({
      taker: { ...realisticDpsInput.taker!, address: { ...realisticDpsInput.taker!.address!, complement: undefined } }
    }).xml
    expectValid(noComplement)
    expect(noComplement).not.toContain("xCpl")
    expect(read(withAddress).taker).toEqual({
      taxId: "45997418000153",
      idKind: "CNPJ",
      name: "Comércio de Peças Ação & Cia Ltda",
      email: "financeiro@example.com.br",
      address: {
        street: "Avenida Rio Branco",
        number: "156",
        complement: "Sala 1203",
        district: "Centro",
        municipalityCode: "3304557",
        postalCode: "20040901"
      }
    })
  })

  it("fills regTrib, pAliq and totTrib by Simples Nacional regime", () => {
    const notOpted = build().xml
    expect(notOpted).not.toContain("pAliq")
    expect(notOpted).toContain(
      "<totTrib><vTotTrib><vTotTribFed>0.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>30.00</vTotTribMun></vTotTrib></totTrib>"
    )

    const meEpp = build({ issuer: { ...realisticDpsInput.issuer, simplesNacional: "me_epp" } }).xml
    expectValid(meEpp)
    expect(meEpp).toContain(
      "<regTrib><opSimpNac>3</opSimpNac><regApTribSN>1</regApTribSN><regEspTrib>0</regEspTrib></regTrib>"
    )
    // Not withheld: the ISS is paid in the DAS and the note informs no rate (the real Manaus ME/EPP note).
    expect(meEpp).toContain("<tpRetISSQN>1</tpRetISSQN></tribMun>")
    expect(read(meEpp).amounts.issRate).toBeUndefined()

    const mei = build({ issuer: { ...realisticDpsInput.issuer, simplesNacional: "mei" } }).xml
    expectValid(mei)
    expect(mei).toContain("<regTrib><opSimpNac>2</opSimpNac><regEspTrib>0</regEspTrib></regTrib>")
    expect(mei).toContain("<totTrib><indTotTrib>0</indTotTrib></totTrib>")

    const declared =
      build({ tax: { approximate_taxes: { amounts: { federal: 20_535, state: 0, municipal: 3_000 } } } }).xml
    expectValid(declared)
    expect(declared).toContain("<vTotTribFed>205.35</vTotTribFed>")
  })

  it("writes deductions as vDedRed/vDR and formats centavos as reais", () => {
    const { xml } = build({
      amounts: plainAmounts(100_000_07, "5", 2_500_50)
    })
    expectValid(xml)
    expect(xml).toContain("<vServ>100000.07</vServ></vServPrest><vDedRed><vDR>2500.50</vDR></vDedRed>")
    expect(read(xml).amounts).toEqual({
      services: "100000.07",
      deductions: "2500.50",
      issTaxation: "1",
      issRetention: "1",
      deductionDocuments: [],
      totalTaxesKind: "vTotTrib"
    })
    expect(build({ amounts: { ...realisticDpsInput.amounts, services: 5, base: 5 } }).xml).toContain(
      "<vServ>0.05</vServ>"
    )
  })

  it("formats ISS rates for pAliq with two decimals, never rounding a finer one", () => {
    expect(formatRateForXml("2")).toBe("2.00")
    expect(formatRateForXml("2.5")).toBe("2.50")
    expect(formatRateForXml("5.00")).toBe("5.00")
    expect(formatRateForXml("2.1250")).toBe("2.125")
  })

  it("omits infoCompl without notes", () => {
    const { xml } = build({ notes: null })
    expectValid(xml)
    expect(xml).not.toContain("infoCompl")
    expect(read(xml).notes).toBeNull()
  })

  it("reads a DPS back field by field, also once a Signature is appended", () => {
    const { id, xml } = build()
    const signed = xml.replace(
      "</DPS>",
      "<Signature xmlns=\"http://www.w3.org/2000/09/xmldsig#\"><SignedInfo/></Signature></DPS>"
    )
    const parsed = read(signed)
    expect(parsed).toMatchObject({
      id,
      tpAmb: 2,
      emittedAt: "2026-11-10T11:30:15-03:00",
      competence: "2026-11-10",
      series: "1",
      number: 42,
      applicationVersion: "etd-service_0.1.0",
      municipalityCode: "3550308",
      issuer: { taxId: "11222333000181", simplesNacional: "1" },
      service: {
        code: "010701",
        nbsCode: "115022000",
        description: realisticDpsInput.service.description,
        municipalityCode: "3550308"
      },
      amounts: { services: "1500.00", issTaxation: "1", issRetention: "1" },
      notes: "Pedido de compra 2026/0457"
    })
  })

  it("refuses to read what is not a DPS", () => {
    for (
      const xml of [
        "<DPS>",
        "<NFSe xmlns=\"http://www.sped.fazenda.gov.br/nfse\"/>",
        "<DPS versao=\"1.01\"/>",
        "<DPS xmlns=\"http://www.sped.fazenda.gov.br/nfse\"><infDPS Id=\"DPS1\"><tpAmb>3</tpAmb></infDPS></DPS>",
        "<!DOCTYPE DPS [<!ENTITY a \"b\">]><DPS xmlns=\"http://www.sped.fazenda.gov.br/nfse\"/>"
      ]
    ) {
      const parsed = readDps(xml)
      expect(Result.isFailure(parsed) && parsed.failure._tag, xml).toBe("DpsUnreadable")
    }
  })
})
