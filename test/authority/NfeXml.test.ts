/**
 * The NF-e 4.00 XML of goods invoices: every note built passes the official schema (PL_010 v1.30)
 * with our validator and with Debian's xmllint, its figures are the hand-computed ones to the
 * centavo, its access key is the layout's (check digit computed independently here), and its
 * signature (inclusive C14N, RSA-SHA1, as the NF-e schema fixes) verifies with us and with xmlsec1.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { isValidNfeAccessKey, nfeAccessKey, numericCodeOf } from "../../src/authority/sefaz/NfeAccessKey.js"
import { HOMOLOGATION_ITEM } from "../../src/authority/sefaz/NfeItems.js"
import { buildNfe, HOMOLOGATION_RECIPIENT } from "../../src/authority/sefaz/NfeXml.js"
import { loadNfeSchemas, nfeXsdDirectory, validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { parseXml } from "../../src/authority/xml/XmlText.js"
import type { GoodsItem } from "../../src/domain/GoodsInvoice.js"
import { makePkcs12, testRoot } from "../support/certificates.js"
import {
  counterSale,
  hasXmllint,
  hasXmlsec1,
  interstateSale,
  nfeInput,
  rsSimplesIssuer,
  simplesSale,
  skippedWithout,
  spIssuer,
  taxedItem,
  xmllintNfe,
  xmlsecVerifyNfe
} from "../support/NfeXml.js"

beforeAll(() => loadNfeSchemas())

const NFE = "http://www.portalfiscal.inf.br/nfe"

/** The text of the first element of that name, anywhere in the note. */
const textOf = (xml: string, name: string, index = 0): string | undefined => {
  const doc = Result.getOrThrow(parseXml(xml))
  return doc.getElementsByTagNameNS(NFE, name).item(index)?.textContent ?? undefined
}

const signer = makePkcs12({ cn: "DISTRIBUIDORA PAULISTA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const signed = (xml: string) =>
  signEnveloped(xml, { element: "infNFe", privateKeyPem: signer.privateKeyPem, certificatePem: signer.certificatePem })

/** The schema requires the signature: a note is validated signed, as the authority receives it. */
const expectSchemaValid = (xml: string) => {
  const result = validateNfe("NFe", signed(xml))
  expect(Result.isSuccess(result) ? [] : result.failure.messages).toEqual([])
}

/** The mod-11 check digit as the manual states it: weights 4,3,2,9,8,…,2 from the left over 43 characters. */
const manualCheckDigit = (body: string): string => {
  const weights = Array.from({ length: 43 }, (_, i) => ((42 - i) % 8) + 2)
  const sum = [...body].reduce((total, c, i) => total + (c.charCodeAt(0) - 48) * weights[i]!, 0)
  const remainder = sum % 11
  return String(remainder < 2 ? 0 : 11 - remainder)
}

describe("the access key", () => {
  it("is cUF + AAMM + CNPJ + model + series + number + tpEmis + cNF + a check digit the manual's way gives", () => {
    const key = nfeAccessKey({
      stateCode: "35",
      yearMonth: "2611",
      issuerTaxId: "11.222.333/0001-81",
      model: "55",
      series: 1,
      number: 1042,
      emissionType: "1",
      numericCode: "48213907"
    })
    expect(key.slice(0, 43)).toBe("3526111122233300018155001000001042148213907")
    expect(key.slice(43)).toBe(manualCheckDigit(key.slice(0, 43)))
    expect(isValidNfeAccessKey(key)).toBe(true)
    expect(isValidNfeAccessKey(key.slice(0, 43) + String((Number(key[43]) + 1) % 10))).toBe(false)
  })

  it("keeps an alphanumeric CNPJ as it is, each character weighing its code − 48", () => {
    const key = nfeAccessKey({
      stateCode: "35",
      yearMonth: "2608",
      issuerTaxId: "12ABC34501DE35",
      model: "65",
      series: 2,
      number: 7,
      emissionType: "9",
      numericCode: "10293847"
    })
    expect(key.slice(6, 20)).toBe("12ABC34501DE35")
    expect(key.slice(43)).toBe(manualCheckDigit(key.slice(0, 43)))
    expect(isValidNfeAccessKey(key)).toBe(true)
  })

  it("draws the numeric code from the document id: the same at every attempt, never the number nor a guessable code", () => {
    expect(numericCodeOf("doc_a", 1)).toBe(numericCodeOf("doc_a", 1))
    expect(numericCodeOf("doc_a", 1)).not.toBe(numericCodeOf("doc_b", 1))
    const codes = Array.from({ length: 2000 }, (_, i) => numericCodeOf(`doc_${i}`, i))
    for (const [i, code] of codes.entries()) {
      expect(code).toMatch(/^[0-9]{8}$/)
      expect(code).not.toBe(String(i).padStart(8, "0"))
      expect(["00000000", "11111111", "12345678", "23456789", "01234567"]).not.toContain(code)
    }
    expect(new Set(codes).size).toBeGreaterThan(1990)
  })
})

describe("an NF-e of a São Paulo emitter in the normal regime to a contributor in Rio de Janeiro", () => {
  const built = buildNfe(nfeInput())

  it("passes the official NF-e 4.00 schema", () => expectSchemaValid(built.xml))

  it.skipIf(!hasXmllint)(
    skippedWithout("xmllint", hasXmllint, "passes xmllint --schema nfe_v4.00.xsd", "Debian package libxml2-utils"),
    () => {
      const run = xmllintNfe("nfe_v4.00.xsd", signed(built.xml))
      expect(run.output).toContain("validates")
      expect(run.ok).toBe(true)
    }
  )

  it("has its access key in infNFe's Id, in cNF and cDV, and is interstate from SP (cUF 35, idDest 2)", () => {
    expect(built.accessKey).toMatch(/^3526111122233300018155001000001042/)
    expect(isValidNfeAccessKey(built.accessKey)).toBe(true)
    expect(built.xml).toContain(`Id="NFe${built.accessKey}"`)
    expect(textOf(built.xml, "cNF")).toBe(built.accessKey.slice(35, 43))
    expect(textOf(built.xml, "cDV")).toBe(built.accessKey.slice(43))
    expect(textOf(built.xml, "cUF")).toBe("35")
    expect(textOf(built.xml, "idDest")).toBe("2")
    expect(textOf(built.xml, "tpAmb")).toBe("2")
    expect(textOf(built.xml, "dhEmi")).toBe("2026-11-10T11:30:15-03:00")
    expect(textOf(built.xml, "CRT")).toBe("3")
    expect(textOf(built.xml, "xMun")).toBe("São Paulo")
  })

  it("computes every figure to the centavo (hand-computed)", () => {
    // Item 1: 3 × 45.90 = 137.70, less 2.70 = 135.00; IPI 5 % 6.75; ICMS 12 % of 135.00 = 16.20;
    // PIS 1.65 % = 2.2275 → 2.23; COFINS 7.6 % = 10.26.
    // Item 2: 10.5 × 3.33 = 34.965 → 34.97, + 1.50 freight = 36.47; base reduced by 33.33 %:
    // 36.47 × 0.6667 = 24.314549 → 24.31; ICMS 12 % = 2.9172 → 2.92.
    expect(built.figures.items.map((item) => [item.value, item.icms, item.ipi, item.pis, item.cofins])).toEqual([
      [13770, { base: 13500, amount: 1620 }, { base: 13500, amount: 675 }, { base: 13500, amount: 223 }, {
        base: 13500,
        amount: 1026
      }],
      [3497, { base: 2431, amount: 292 }, null, null, null]
    ])
    expect(built.figures.totals).toEqual({
      icmsBase: 15931,
      icms: 1912,
      stBase: 0,
      st: 0,
      products: 17267,
      freight: 150,
      insurance: 0,
      discount: 270,
      ipi: 675,
      pis: 223,
      cofins: 1026,
      otherExpenses: 0,
      total: 17822
    })
    expect(textOf(built.xml, "vNF")).toBe("178.22")
    expect(textOf(built.xml, "vUnCom", 1)).toBe("3.3300000000")
    expect(textOf(built.xml, "qCom", 1)).toBe("10.5000")
    expect(built.xml).toContain("<ICMS20><orig>2</orig><CST>20</CST><modBC>3</modBC><pRedBC>33.33</pRedBC>")
    expect(built.xml).toContain("<IPI><cEnq>999</cEnq><IPINT><CST>52</CST></IPINT></IPI>")
  })

  it("names the recipient as homologation requires, and by its own name in production", () => {
    expect(textOf(built.xml, "xNome", 1)).toBe(HOMOLOGATION_RECIPIENT)
    const live = buildNfe(nfeInput({ environment: "live" }))
    expect(textOf(live.xml, "xNome", 1)).toBe("Auto Peças Carioca S.A.")
    expect(textOf(live.xml, "tpAmb")).toBe("1")
    expectSchemaValid(live.xml)
  })

  it("escapes the item's text, and the same document always builds the same key", () => {
    expect(built.xml).toContain("Junta de vedação &amp; anel &lt;borracha&gt;")
    expect(buildNfe(nfeInput()).accessKey).toBe(built.accessKey)
    expect(buildNfe(nfeInput({ documentId: "doc_other" })).accessKey).not.toBe(built.accessKey)
  })

  describe("signed as the NF-e schema fixes it (inclusive C14N, RSA-SHA1, SHA-1)", () => {
    const note = signed(built.xml)

    it("is what the schema requires and verifies with our verifier, naming the CNPJ", () => {
      expect(Result.isFailure(validateNfe("NFe", built.xml))).toBe(true)
      expect(note).toContain(`<Reference URI="#NFe${built.accessKey}">`)
      expect(note).toContain(`<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>`)
      expect(note).toContain(`<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>`)
      expect(validateNfe("NFe", note)).toEqual(Result.void)
      const verified = verifyEnveloped(note, "infNFe")
      expect(Result.isSuccess(verified) && verified.success.taxId).toBe("11222333000181")
      expect(Result.isFailure(verifyEnveloped(note.replace("<vNF>178.22</vNF>", "<vNF>17.82</vNF>"), "infNFe")))
        .toBe(true)
    })

    it.skipIf(!hasXmlsec1)(
      skippedWithout(
        "xmlsec1",
        hasXmlsec1,
        "verifies with xmlsec1, which refuses a changed total",
        "Debian package xmlsec1"
      ),
      () => {
        const trust = [signer.caCertificatePem, testRoot().certPem]
        const run = xmlsecVerifyNfe(note, "infNFe", trust)
        expect(run.output).toMatch(/^OK$/m)
        expect(xmlsecVerifyNfe(note.replace("<vNF>178.22</vNF>", "<vNF>17.82</vNF>"), "infNFe", trust).ok).toBe(false)
      }
    )
  })
})

describe("the tax reform's IBS and CBS on an NF-e's items (NT 2025.002, 2026 rates)", () => {
  const full = { cst: "000", class_code: "000001" } as const
  const built = buildNfe(nfeInput({
    request: { ...interstateSale, items: interstateSale.items.map((item) => ({ ...item, ibs_cbs: full })) }
  }))

  it("passes the official schema with IBSCBS in each item and IBSCBSTot after ICMSTot", () => {
    expectSchemaValid(built.xml)
    if (hasXmllint) expect(xmllintNfe("nfe_v4.00.xsd", signed(built.xml)).ok).toBe(true)
  })

  it("takes the base of rule UB16-10 and the 2026 rates, to the centavo (hand-computed); vNF unchanged", () => {
    // Item 1: 135.00 − ICMS 16.20 − PIS 2.23 − COFINS 10.26 = 106.31 (the IPI is not deducted);
    // IBS UF 0.10 % = 0.10631 → 0.11; IBS municipal 0 %; CBS 0.90 % = 0.95679 → 0.96.
    // Item 2: 34.97 + 1.50 freight − ICMS 2.92 = 33.55; IBS UF 0.03355 → 0.03; CBS 0.30195 → 0.30.
    expect(built.xml).toContain(
      "<IBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib><gIBSCBS><vBC>106.31</vBC>" +
        "<gIBSUF><pIBSUF>0.10</pIBSUF><vIBSUF>0.11</vIBSUF></gIBSUF>" +
        "<gIBSMun><pIBSMun>0.00</pIBSMun><vIBSMun>0.00</vIBSMun></gIBSMun><vIBS>0.11</vIBS>" +
        "<gCBS><pCBS>0.90</pCBS><vCBS>0.96</vCBS></gCBS></gIBSCBS></IBSCBS>"
    )
    expect(built.xml).toContain("<vBC>33.55</vBC><gIBSUF><pIBSUF>0.10</pIBSUF><vIBSUF>0.03</vIBSUF>")
    expect(built.xml).toContain(
      "<IBSCBSTot><vBCIBSCBS>139.86</vBCIBSCBS><gIBS><gIBSUF><vDif>0.00</vDif><vDevTrib>0.00</vDevTrib>" +
        "<vIBSUF>0.14</vIBSUF></gIBSUF><gIBSMun><vDif>0.00</vDif><vDevTrib>0.00</vDevTrib><vIBSMun>0.00</vIBSMun>" +
        "</gIBSMun><vIBS>0.14</vIBS><vCredPres>0.00</vCredPres><vCredPresCondSus>0.00</vCredPresCondSus></gIBS>" +
        "<gCBS><vDif>0.00</vDif><vDevTrib>0.00</vDevTrib><vCBS>1.26</vCBS><vCredPres>0.00</vCredPres>" +
        "<vCredPresCondSus>0.00</vCredPresCondSus></gCBS></IBSCBSTot>"
    )
    expect(textOf(built.xml, "vNF")).toBe("178.22")
  })

  it("leaves the groups out when no item declares them", () => {
    expect(buildNfe(nfeInput()).xml).not.toContain("IBSCBS")
  })
})

describe("ICMS charged by substitution (ICMS-ST, modBCST 4: the added-value margin)", () => {
  const item = (icms: GoodsItem["icms"], ipi?: GoodsItem["ipi"]): GoodsItem => ({
    ...taxedItem,
    cfop: "6403",
    quantity: "1",
    unit_amount: 100000,
    discount: undefined,
    icms,
    ...(ipi === undefined ? { ipi: undefined } : { ipi }),
    pis: { cst: "07" },
    cofins: { cst: "07" }
  })
  const normal = buildNfe(nfeInput({
    request: {
      ...interstateSale,
      items: [
        item({ origin: 0, cst: "10", rate: "18.00", st: { margin: "40.00", rate: "18.00" } }, {
          cst: "50",
          rate: "10.00"
        }),
        item({
          origin: 0,
          cst: "70",
          rate: "18.00",
          base_reduction: "33.33",
          st: { margin: "40.00", rate: "18.00", base_reduction: "33.33" }
        })
      ]
    }
  }))
  const simples = buildNfe(nfeInput({
    issuer: rsSimplesIssuer,
    request: {
      ...simplesSale,
      items: [
        {
          ...item({
            origin: 0,
            csosn: "201",
            credit_rate: "2.50",
            st: { margin: "50.00", rate: "17.00", own_rate: "12.00" }
          }),
          unit_amount: 50000
        },
        {
          ...item({ origin: 0, csosn: "202", st: { margin: "140.00", rate: "17.00", own_rate: "12.00" } }),
          unit_amount: 50000
        }
      ]
    }
  }))

  it("passes the official schema with ICMS10, ICMS70, ICMSSN201 and ICMSSN202", () => {
    expectSchemaValid(normal.xml)
    expectSchemaValid(simples.xml)
  })

  it("computes the ST base and tax to the centavo (hand-computed) and adds vST to the note's total", () => {
    // CST 10: 1 000.00 + IPI 100.00 = 1 100.00 × 1.40 = 1 540.00; 18 % = 277.20 − own 180.00 = 97.20.
    expect(normal.xml).toContain(
      "<ICMS10><orig>0</orig><CST>10</CST><modBC>3</modBC><vBC>1000.00</vBC><pICMS>18.00</pICMS>" +
        "<vICMS>180.00</vICMS><modBCST>4</modBCST><pMVAST>40.00</pMVAST><vBCST>1540.00</vBCST>" +
        "<pICMSST>18.00</pICMSST><vICMSST>97.20</vICMSST></ICMS10>"
    )
    // CST 70: own base 1 000.00 × 0.6667 = 666.70, 18 % = 120.006 → 120.01; ST base 1 000.00 × 1.40 × 0.6667
    // = 933.38, 18 % = 168.0084 → 168.01 − 120.01 = 48.00.
    expect(normal.xml).toContain(
      "<ICMS70><orig>0</orig><CST>70</CST><modBC>3</modBC><pRedBC>33.33</pRedBC><vBC>666.70</vBC>" +
        "<pICMS>18.00</pICMS><vICMS>120.01</vICMS><modBCST>4</modBCST><pMVAST>40.00</pMVAST>" +
        "<pRedBCST>33.33</pRedBCST><vBCST>933.38</vBCST><pICMSST>18.00</pICMSST><vICMSST>48.00</vICMSST></ICMS70>"
    )
    expect(normal.figures.totals).toMatchObject({ stBase: 247338, st: 14520, total: 200000 + 10000 + 14520 })
    expect(textOf(normal.xml, "vST")).toBe("145.20")
    expect(textOf(normal.xml, "vNF")).toBe("2245.20")
    // CSOSN 201: 500.00 × 1.50 = 750.00, 17 % = 127.50 − own 12 % 60.00 = 67.50; credit 2.5 % = 12.50.
    expect(simples.xml).toContain(
      "<ICMSSN201><orig>0</orig><CSOSN>201</CSOSN><modBCST>4</modBCST><pMVAST>50.00</pMVAST><vBCST>750.00</vBCST>" +
        "<pICMSST>17.00</pICMSST><vICMSST>67.50</vICMSST><pCredSN>2.50</pCredSN><vCredICMSSN>12.50</vCredICMSSN>"
    )
    // CSOSN 202, a margin above 100 %: 500.00 × 2.40 = 1 200.00, 17 % = 204.00 − 60.00 = 144.00.
    expect(simples.xml).toContain(
      "<pMVAST>140.00</pMVAST><vBCST>1200.00</vBCST><pICMSST>17.00</pICMSST><vICMSST>144.00"
    )
  })

  it("with an exempt own operation (CST 30, CSOSN 203) deducts what the request names, or nothing", () => {
    const exempt = buildNfe(nfeInput({
      request: {
        ...interstateSale,
        items: [item({ origin: 0, cst: "30", st: { margin: "40.00", rate: "18.00" } }, { cst: "50", rate: "10.00" })]
      }
    }))
    expectSchemaValid(exempt.xml)
    // 1 100.00 × 1.40 = 1 540.00 at 18 %: 277.20, nothing deducted.
    expect(exempt.xml).toContain(
      "<ICMS30><orig>0</orig><CST>30</CST><modBCST>4</modBCST><pMVAST>40.00</pMVAST><vBCST>1540.00</vBCST>" +
        "<pICMSST>18.00</pICMSST><vICMSST>277.20</vICMSST></ICMS30>"
    )
    const band = buildNfe(nfeInput({
      issuer: rsSimplesIssuer,
      request: {
        ...simplesSale,
        items: [{
          ...item({ origin: 0, csosn: "203", st: { margin: "50.00", rate: "17.00", own_rate: "12.00" } }),
          unit_amount: 50000
        }]
      }
    }))
    expectSchemaValid(band.xml)
    expect(band.xml).toContain("<ICMSSN202><orig>0</orig><CSOSN>203</CSOSN><modBCST>4</modBCST>")
    expect(band.xml).toContain("<vBCST>750.00</vBCST><pICMSST>17.00</pICMSST><vICMSST>67.50</vICMSST>")
  })
})

describe("an NF-e of a Simples Nacional emitter in Rio Grande do Sul (CSOSN)", () => {
  const built = buildNfe(nfeInput({ issuer: rsSimplesIssuer, request: simplesSale, environment: "live" }))

  it("passes the schema, with CRT 1, ICMSSN101 and its credit, ICMSSN102, PIS/COFINS 49 at zero", () => {
    expectSchemaValid(built.xml)
    expect(textOf(built.xml, "CRT")).toBe("1")
    expect(textOf(built.xml, "cUF")).toBe("43")
    expect(textOf(built.xml, "idDest")).toBe("1")
    expect(textOf(built.xml, "indFinal")).toBe("1")
    // A sale on the internet says whether a marketplace took part (0: the seller's own site).
    expect(textOf(built.xml, "indIntermed")).toBe("0")
    // 2.56 % of 99.80 = 2.55488 → 2.55.
    expect(built.xml).toContain(
      "<ICMSSN101><orig>0</orig><CSOSN>101</CSOSN><pCredSN>2.56</pCredSN><vCredICMSSN>2.55</vCredICMSSN></ICMSSN101>"
    )
    expect(built.xml).toContain("<ICMSSN102><orig>0</orig><CSOSN>102</CSOSN></ICMSSN102>")
    expect(built.xml).toContain(
      "<PIS><PISOutr><CST>49</CST><vBC>99.80</vBC><pPIS>0.00</pPIS><vPIS>0.00</vPIS></PISOutr></PIS>"
    )
    expect(built.figures.totals.total).toBe(11270)
    expect(built.figures.totals.icms).toBe(0)
    expect(built.xml).toContain(
      "<detPag><tPag>17</tPag><vPag>112.70</vPag><card><tpIntegra>2</tpIntegra></card></detPag>"
    )
  })
})

describe("an NFC-e at the counter", () => {
  const built = buildNfe(nfeInput({ request: counterSale }))

  it("passes the schema as model 65: the NFC-e's DANFE, a final consumer, no recipient, freight none", () => {
    expectSchemaValid(built.xml)
    expect(built.model).toBe("65")
    expect(built.accessKey.slice(20, 22)).toBe("65")
    expect(textOf(built.xml, "tpImp")).toBe("4")
    expect(textOf(built.xml, "indFinal")).toBe("1")
    expect(textOf(built.xml, "modFrete")).toBe("9")
    expect(built.xml).not.toContain("<dest>")
  })

  it("prices fuel below the centavo: 40.123 L × R$ 5.899 = R$ 236.685577 → 236.69", () => {
    expect(textOf(built.xml, "vUnCom")).toBe("5.8990000000")
    expect(textOf(built.xml, "qCom")).toBe("40.1230")
    expect(built.figures.items[0]!.value).toBe(23669)
    expect(built.figures.totals.total).toBe(24369)
    expect(textOf(built.xml, "vTroco")).toBe("6.31")
  })

  it("calls its first item as homologation requires; in production, by its own description", () => {
    expect(textOf(built.xml, "xProd")).toBe(HOMOLOGATION_ITEM)
    expect(textOf(built.xml, "xProd", 1)).toBe("Água mineral 500 ml")
    expect(textOf(buildNfe(nfeInput({ request: counterSale, environment: "live" })).xml, "xProd")).toBe(
      "Gasolina comum"
    )
  })

  it("in offline contingency carries tpEmis 9 in its key and its ide, with when and why", () => {
    const offline = buildNfe(nfeInput({
      request: counterSale,
      contingency: { since: new Date("2026-11-10T14:00:00Z"), reason: "Sem conexão com a SEFAZ desde as 11h" }
    }))
    expectSchemaValid(offline.xml)
    expect(offline.accessKey[34]).toBe("9")
    expect(textOf(offline.xml, "tpEmis")).toBe("9")
    expect(textOf(offline.xml, "dhCont")).toBe("2026-11-10T11:00:00-03:00")
    expect(textOf(offline.xml, "xJust")).toBe("Sem conexão com a SEFAZ desde as 11h")
    expect(offline.accessKey).not.toBe(built.accessKey)
  })
})

describe("the schema check itself", () => {
  // The service ships its own copy; every file must be the published one (schemas/nfe-v4.00/README.md).
  it("uses the schemas byte for byte as published (SHA256SUMS)", () => {
    const dir = nfeXsdDirectory()
    const sums = fs.readFileSync(path.join(dir, "SHA256SUMS"), "utf8").trim().split("\n").map((line) =>
      line.split(/\s+/)
    )
    expect(sums.map(([, name]) => name).sort()).toEqual(fs.readdirSync(dir).filter((f) => f.endsWith(".xsd")).sort())
    for (const [sum, name] of sums) {
      expect(crypto.createHash("sha256").update(fs.readFileSync(path.join(dir, name!))).digest("hex"), name).toBe(sum)
    }
  })

  it("refuses a note the schema does not allow, naming the element", () => {
    const broken = signed(buildNfe(nfeInput()).xml.replace("<NCM>84212300</NCM>", "<NCM>8421</NCM>"))
    const result = validateNfe("NFe", broken)
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) expect(result.failure.messages.join("\n")).toContain("NCM")
  })

  it("accepts the emitter from the São Paulo fixture and every ICMS group the payload offers", () => {
    const groups = [
      { origin: 0 as const, cst: "40" as const },
      { origin: 0 as const, cst: "41" as const },
      { origin: 0 as const, cst: "50" as const },
      { origin: 0 as const, cst: "90" as const },
      { origin: 0 as const, cst: "90" as const, rate: "18", base_reduction: "10" }
    ]
    for (const icms of groups) {
      const request = { ...interstateSale, items: [{ ...interstateSale.items[0]!, icms }] }
      expectSchemaValid(buildNfe(nfeInput({ request, issuer: spIssuer })).xml)
    }
    const simplesGroups = [
      { origin: 1 as const, csosn: "103" as const },
      { origin: 1 as const, csosn: "300" as const },
      { origin: 1 as const, csosn: "400" as const },
      { origin: 1 as const, csosn: "500" as const },
      { origin: 1 as const, csosn: "900" as const },
      { origin: 1 as const, csosn: "900" as const, rate: "17.5", base_reduction: "20", credit_rate: "1.25" }
    ]
    for (const icms of simplesGroups) {
      const request = { ...simplesSale, items: [{ ...simplesSale.items[0]!, icms }] }
      expectSchemaValid(buildNfe(nfeInput({ request, issuer: rsSimplesIssuer })).xml)
    }
  })
})
