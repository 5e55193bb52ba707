/**
 * Number voiding (inutilização): the request built, signed over `infInut` and checked against the
 * official schemas by libxml2 and by Debian's `xmllint`, its signature verified by `xmlsec1`; the
 * schemas byte for byte as published; the authority's answers schema-valid too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  loadVoidingSchemas,
  validateVoiding,
  voidingAnswer,
  voidingId,
  type VoidingInput,
  voidingRequest
} from "../../src/authority/sefaz/NfeVoiding.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { makePkcs12, testCa, testRoot } from "../support/certificates.js"
import {
  expectPublishedSchemas,
  hasXmllint,
  hasXmlsec1,
  skippedWithout,
  xmllintVoiding,
  xmlsecVerifyNfe
} from "../support/NfeXml.js"

const CNPJ = "11222333000181"
const emitter = makePkcs12({ cn: `EMPRESA LTDA:${CNPJ}`, cnpjOid: CNPJ, password: "x" })

const input: VoidingInput = {
  environment: "test",
  stateCode: "35",
  issuerTaxId: "11.222.333/0001-81",
  model: "55",
  series: 1,
  from: 7,
  to: 9,
  reason: "Notas rejeitadas pela SEFAZ & <nunca> autorizadas",
  requestedAt: new Date("2026-11-10T15:00:00Z")
}

const signed = (xml: string) =>
  signEnveloped(xml, {
    element: "infInut",
    privateKeyPem: emitter.privateKeyPem,
    certificatePem: emitter.certificatePem
  })

describe("number voiding (inutilização)", () => {
  it("is a schema-valid, signed request identified by state, year, emitter, model, series and range", async () => {
    await loadVoidingSchemas()
    expect(voidingId(input)).toBe(`ID3526${CNPJ}55001000000007000000009`)
    const request = signed(voidingRequest(input))
    expect(request).toContain("<xServ>INUTILIZAR</xServ>")
    expect(request).toContain("<ano>26</ano>")
    expect(request).toContain("<xJust>Notas rejeitadas pela SEFAZ &amp; &lt;nunca&gt; autorizadas</xJust>")
    const valid = validateVoiding("inutNFe", request)
    expect(Result.isSuccess(valid), JSON.stringify(valid)).toBe(true)
    expect(Result.isSuccess(verifyEnveloped(request, "infInut"))).toBe(true)
    expect(Result.isFailure(verifyEnveloped(request.replace("<nNFFin>9<", "<nNFFin>99<"), "infInut"))).toBe(true)
    // A justification under 15 characters is refused by the schema (TJust).
    expect(Result.isFailure(validateVoiding("inutNFe", signed(voidingRequest({ ...input, reason: "curta" })))))
      .toBe(true)
  })

  it("answers in the official shape, registered (102) with its protocol or refused without one", async () => {
    await loadVoidingSchemas()
    const at = new Date("2026-11-10T15:00:05Z")
    const registered = voidingAnswer({
      request: input,
      application: "TESTE_1.0",
      at,
      status: "102",
      reason: "Inutilização de número homologado",
      protocol: "135260000054321"
    })
    expect(Result.isSuccess(validateVoiding("retInutNFe", registered))).toBe(true)
    expect(registered).toContain("<nProt>135260000054321</nProt>")
    const refused = voidingAnswer({
      request: input,
      application: "TESTE_1.0",
      at,
      status: "241",
      reason: "Rejeição: Um número da faixa já foi utilizado"
    })
    expect(Result.isSuccess(validateVoiding("retInutNFe", refused))).toBe(true)
  })

  it(
    skippedWithout(
      "xmllint",
      hasXmllint,
      "passes xmllint --schema with the official schemas",
      "Debian's libxml2-utils"
    ),
    () => {
      if (!hasXmllint) return
      const checked = xmllintVoiding("inutNFe_v4.00.xsd", signed(voidingRequest(input)))
      expect(checked.ok, checked.output).toBe(true)
    }
  )

  it(
    skippedWithout("xmlsec1", hasXmlsec1, "is verified by xmlsec1 against the emitter's chain", "Debian's xmlsec1"),
    () => {
      if (!hasXmlsec1) return
      const request = signed(voidingRequest(input))
      expect(xmlsecVerifyNfe(request, "infInut", [testRoot().certPem, testCa().certPem]).ok).toBe(true)
    }
  )

  it(
    "uses the voiding's schemas byte for byte as published (SHA256SUMS)",
    () => expectPublishedSchemas("nfe-inutilizacao-v4.00", "NFE_VOIDING_XSD_DIR")
  )
})
