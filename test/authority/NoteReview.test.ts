/**
 * The authority's side of an NF-e: the review a SEFAZ makes of a signed note (each official
 * rejection with a note that breaks it alone), and the documents of the exchange (enviNFe,
 * retEnviNFe, nfeProc), each valid against the official schema, the note's signature still
 * verifying inside the nfeProc.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  authorizationAnswer,
  authorizationRequest,
  AUTHORIZED,
  AUTHORIZED_REASON,
  batchRefusal,
  processedNote,
  protocolElement
} from "../../src/authority/sefaz/NfeProtocol.js"
import { buildNfe } from "../../src/authority/sefaz/NfeXml.js"
import { loadNfeSchemas, validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { duplicityOf, reviewNote } from "../../src/authority/sefaz/NoteReview.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { makePkcs12 } from "../support/certificates.js"
import { counterSale, hasXmllint, interstateSale, nfeInput, skippedWithout, xmllintNfe } from "../support/NfeXml.js"

beforeAll(() => loadNfeSchemas())

const emitter = makePkcs12({ cn: "DISTRIBUIDORA PAULISTA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const stranger = makePkcs12({
  cn: "OUTRA EMPRESA:44555666000199",
  cnpjOid: "44555666000199",
  password: "x",
  freshKey: true
})

const sign = (xml: string, who = emitter) =>
  signEnveloped(xml, { element: "infNFe", privateKeyPem: who.privateKeyPem, certificatePem: who.certificatePem })

const note = buildNfe(nfeInput())
const signed = sign(note.xml)
const stNote = buildNfe(nfeInput({
  request: {
    ...interstateSale,
    items: [{
      ...interstateSale.items[0]!,
      quantity: "1",
      unit_amount: 100000,
      discount: undefined,
      icms: { origin: 0, cst: "10", rate: "18.00", st: { margin: "40.00", rate: "18.00" } },
      ipi: { cst: "50", rate: "10.00" }
    }]
  }
}))
const reformNote = buildNfe(nfeInput({
  request: {
    ...interstateSale,
    items: interstateSale.items.map((item) => ({ ...item, ibs_cbs: { cst: "000", class_code: "000001" } }))
  }
}))

const statusOf = (xml: string, environment: "live" | "test" = "test") => {
  const review = reviewNote(xml, environment)
  return Result.isSuccess(review) ? AUTHORIZED : review.failure.status
}

describe("the review of a signed note", () => {
  it("passes notes with ICMS-ST and with the tax reform's IBS/CBS as the service computes them", () => {
    expect(Result.isSuccess(reviewNote(sign(stNote.xml), "test"))).toBe(true)
    expect(Result.isSuccess(reviewNote(sign(reformNote.xml), "test"))).toBe(true)
  })

  it("passes a note built and signed by the service, and keeps what identifies it", () => {
    const review = Result.getOrThrow(reviewNote(signed, "test"))
    expect(review).toMatchObject({
      accessKey: note.accessKey,
      model: "55",
      stateCode: "35",
      issuerTaxId: "11222333000181",
      series: 1,
      number: 1042,
      notes: "Pedido 2026/0457. Entrega em 5 dias úteis."
    })
    expect(review.digestValue).toMatch(/^[A-Za-z0-9+/]{27}=$/)
    expect(statusOf(sign(buildNfe(nfeInput({ request: counterSale })).xml))).toBe(AUTHORIZED)
  })

  // Each note changes one thing (and is signed again where the change is the signer's to make).
  const cases: ReadonlyArray<readonly [string, string, () => string, ("live" | "test")?]> = [
    ["225", "a note the schema refuses", () => sign(note.xml.replace("<NCM>84212300</NCM>", "<NCM>8421</NCM>"))],
    ["297", "a note changed after it was signed", () => signed.replace("<vNF>178.22</vNF>", "<vNF>178.23</vNF>")],
    ["213", "a note signed by another company's certificate", () => sign(note.xml, stranger)],
    ["502", "a key that is not the note's fields", () => sign(note.xml.replace("<nNF>1042</nNF>", "<nNF>1043</nNF>"))],
    ["897", "a guessable numeric code", () => {
      const key = note.accessKey
      const forged = key.slice(0, 35) + "12345678"
      const digit = String(digitOf(forged))
      return sign(
        note.xml.replaceAll(key, forged + digit).replace(/<cNF>[0-9]{8}<\/cNF>/, "<cNF>12345678</cNF>")
          .replace(/<cDV>[0-9]<\/cDV>/, `<cDV>${digit}</cDV>`)
      )
    }],
    ["253", "a wrong check digit", () => {
      const wrong = String((Number(note.accessKey[43]) + 1) % 10)
      return sign(
        note.xml.replaceAll(note.accessKey, note.accessKey.slice(0, 43) + wrong)
          .replace(/<cDV>[0-9]<\/cDV>/, `<cDV>${wrong}</cDV>`)
      )
    }],
    ["252", "a homologation note sent to production", () => signed, "live"],
    [
      "598",
      "a homologation note naming its recipient",
      () =>
        sign(note.xml.replace("NF-E EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL", "Auto Peças Carioca S.A."))
    ],
    ["373", "a homologation NFC-e whose first item has its own name", () =>
      sign(
        buildNfe(nfeInput({ request: counterSale })).xml.replace(
          "NOTA FISCAL EMITIDA EM AMBIENTE DE HOMOLOGACAO - SEM VALOR FISCAL",
          "Gasolina comum"
        )
      )],
    [
      "629",
      "an item whose value is not its quantity times its price",
      () => sign(note.xml.replace("<vProd>137.70</vProd>", "<vProd>137.72</vProd>"))
    ],
    [
      "564",
      "products' total not the items' sum",
      () => sign(note.xml.replace("<vProd>172.67</vProd>", "<vProd>172.68</vProd>"))
    ],
    [
      "531",
      "an ICMS base total not the items' sum",
      () => sign(note.xml.replace("<vBC>159.31</vBC>", "<vBC>159.30</vBC>"))
    ],
    [
      "532",
      "an ICMS total not the items' sum",
      () => sign(note.xml.replace("<vICMS>19.12</vICMS>", "<vICMS>19.13</vICMS>"))
    ],
    [
      "610",
      "a note total that is not its parts",
      () => sign(note.xml.replace("<vNF>178.22</vNF>", "<vNF>178.21</vNF>"))
    ],
    [
      "533",
      "an ICMS-ST base total not the items' sum",
      () => sign(stNote.xml.replace("<vBCST>1540.00</vBCST><vST>", "<vBCST>1540.01</vBCST><vST>"))
    ],
    [
      "534",
      "an ICMS-ST total not the items' sum",
      () => sign(stNote.xml.replace("<vST>97.20</vST>", "<vST>97.21</vST>"))
    ],
    [
      "1041",
      "an item's state IBS off its base × rate by more than a centavo",
      () => sign(reformNote.xml.replace("<vIBSUF>0.11</vIBSUF>", "<vIBSUF>0.13</vIBSUF>"))
    ],
    [
      "1069",
      "an item's CBS off its base × rate by more than a centavo",
      () => sign(reformNote.xml.replace("<vCBS>0.96</vCBS>", "<vCBS>0.99</vCBS>"))
    ],
    [
      "1150",
      "an item's IBS that is not its state and municipal parts",
      () => sign(reformNote.xml.replace("<vIBS>0.11</vIBS>", "<vIBS>0.12</vIBS>"))
    ],
    [
      "1076",
      "an IBS/CBS base total not the items' sum",
      () => sign(reformNote.xml.replace("<vBCIBSCBS>139.86</vBCIBSCBS>", "<vBCIBSCBS>139.85</vBCIBSCBS>"))
    ],
    [
      "1119",
      "items with IBS/CBS and no IBS/CBS total",
      () => sign(reformNote.xml.replace(/<IBSCBSTot>.*<\/IBSCBSTot>/, ""))
    ]
  ]

  for (const [status, what, make, environment] of cases) {
    it(`refuses ${what} with ${status}`, () => {
      const review = reviewNote(make(), environment ?? "test")
      expect(Result.isFailure(review) && review.failure.status).toBe(status)
      if (Result.isFailure(review)) expect(review.failure.reason).toMatch(/^Rejeição: /)
    })
  }

  it("tells a resubmission of the same note (204) from another note taking its number (539)", () => {
    const review = Result.getOrThrow(reviewNote(signed, "test"))
    expect(duplicityOf({ accessKey: note.accessKey, protocol: "135260000000001" }, review)).toEqual({
      status: "204",
      reason: "Rejeição: Duplicidade de NF-e [nProt:135260000000001]"
    })
    const other = buildNfe(nfeInput({ documentId: "doc_other" })).accessKey
    expect(duplicityOf({ accessKey: other, protocol: "135260000000001" }, review).status).toBe("539")
  })
})

/** The manual's check digit, for forging keys in the cases above. */
const digitOf = (body: string): number => {
  let sum = 0
  for (let i = body.length - 1, weight = 2; i >= 0; i--, weight = weight === 9 ? 2 : weight + 1) {
    sum += (body.charCodeAt(i) - 48) * weight
  }
  return sum % 11 < 2 ? 0 : 11 - (sum % 11)
}

describe("the documents of the exchange", () => {
  const receivedAt = new Date("2026-11-10T14:30:17Z")
  // Reviewed when the tests run: the schemas load in beforeAll, after the file's collection.
  const reviewed = () => Result.getOrThrow(reviewNote(signed, "test"))
  const protocol = () =>
    protocolElement({
      environment: "test",
      application: "SP_NFE_PL009_V4",
      accessKey: note.accessKey,
      receivedAt,
      protocol: "135260000001234",
      digestValue: reviewed().digestValue,
      status: AUTHORIZED,
      reason: AUTHORIZED_REASON
    })

  it("enviNFe carries the signed note, synchronous, and passes its schema", () => {
    const request = authorizationRequest("1", signed)
    expect(request).toContain("<indSinc>1</indSinc><NFe ")
    expect(validateNfe("enviNFe", request)).toEqual(Result.void)
  })

  it("retEnviNFe of a processed batch carries the protocol, and a batch refusal none; both pass the schema", () => {
    const answer = authorizationAnswer({
      environment: "test",
      application: "SP_NFE_PL009_V4",
      accessKey: note.accessKey,
      receivedAt,
      protocol: "135260000001234",
      digestValue: reviewed().digestValue,
      status: AUTHORIZED,
      reason: AUTHORIZED_REASON
    }, "35")
    expect(answer).toContain("<cStat>104</cStat><xMotivo>Lote processado</xMotivo>")
    expect(validateNfe("retEnviNFe", answer)).toEqual(Result.void)
    const refusal = batchRefusal(
      "test",
      "SP_NFE_PL009_V4",
      "35",
      receivedAt,
      "225",
      "Rejeição: Falha no Schema XML do lote de NFe"
    )
    expect(validateNfe("retEnviNFe", refusal)).toEqual(Result.void)
  })

  it("nfeProc joins the note and its protocol, passes its schema, and the note's signature still verifies", () => {
    const proc = processedNote(signed, protocol())
    expect(validateNfe("nfeProc", proc)).toEqual(Result.void)
    expect(proc).toContain(`<chNFe>${note.accessKey}</chNFe>`)
    expect(proc).toContain(`<digVal>${reviewed().digestValue}</digVal>`)
    // The note inside is byte for byte the signed one: its signature verifies on its own again.
    const inner = proc.slice(proc.indexOf("<NFe "), proc.indexOf("</NFe>") + "</NFe>".length)
    expect(Result.isSuccess(verifyEnveloped(inner, "infNFe"))).toBe(true)
  })

  it.skipIf(!hasXmllint)(
    skippedWithout("xmllint", hasXmllint, "xmllint agrees on the nfeProc", "Debian package libxml2-utils"),
    () => {
      const run = xmllintNfe("procNFe_v4.00.xsd", processedNote(signed, protocol()))
      expect(run.output).toContain("validates")
    }
  )
})
