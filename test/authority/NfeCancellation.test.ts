/**
 * The cancellation event of a goods note (110111): built, signed over `infEvento` and checked
 * against the official event schemas by libxml2 and by Debian's `xmllint`, its signature verified by
 * `xmlsec1`; the schemas byte for byte as published; the authority's answer schema-valid too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  cancellationEvent,
  cancellationEventId,
  eventAnswer,
  eventBatch,
  loadCancellationSchemas,
  validateCancellation
} from "../../src/authority/sefaz/NfeCancellation.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { makePkcs12, testCa, testRoot } from "../support/certificates.js"
import {
  expectPublishedSchemas,
  hasXmllint,
  hasXmlsec1,
  skippedWithout,
  xmllintCancellation,
  xmlsecVerifyNfe
} from "../support/NfeXml.js"

const CNPJ = "11222333000181"
const KEY = "35261111222333000181550010000010421234567891"
const emitter = makePkcs12({ cn: `EMPRESA LTDA:${CNPJ}`, cnpjOid: CNPJ, password: "x" })

const input = {
  environment: "test" as const,
  accessKey: KEY,
  issuerTaxId: CNPJ,
  protocol: "135260000012345",
  reason: "Venda desfeita a pedido do cliente & <sem> entrega",
  requestedAt: new Date("2026-11-10T15:00:00Z")
}

const signed = (xml: string) =>
  signEnveloped(xml, {
    element: "nfeEvent",
    privateKeyPem: emitter.privateKeyPem,
    certificatePem: emitter.certificatePem
  })

describe("the cancellation event (110111)", () => {
  it("is a schema-valid, signed batch of one event, identified by its type, key and sequence", async () => {
    await loadCancellationSchemas()
    const event = signed(cancellationEvent(input))
    expect(cancellationEventId(KEY)).toBe(`ID110111${KEY}01`)
    expect(event).toContain(`Id="ID110111${KEY}01"`)
    expect(event).toContain("<xJust>Venda desfeita a pedido do cliente &amp; &lt;sem&gt; entrega</xJust>")
    expect(event).toContain("<dhEvento>2026-11-10T12:00:00-03:00</dhEvento>")
    const batch = eventBatch("1042", event)
    const valid = validateCancellation("envEvento", batch)
    expect(Result.isSuccess(valid), JSON.stringify(valid)).toBe(true)
    expect(Result.isSuccess(verifyEnveloped(event, "nfeEvent"))).toBe(true)
    // Tampering with the reason breaks the signature.
    expect(Result.isFailure(verifyEnveloped(event.replace("Venda desfeita", "Venda mantida"), "nfeEvent"))).toBe(true)
    // A justification under 15 characters is refused by the schema (TJust).
    const short = eventBatch("1", signed(cancellationEvent({ ...input, reason: "curta" })))
    expect(Result.isFailure(validateCancellation("envEvento", short))).toBe(true)
  })

  it("answers in the official shape: the batch processed, the event registered with its protocol", async () => {
    await loadCancellationSchemas()
    const answer = eventAnswer("1042", {
      environment: "test",
      application: "TESTE_1.0",
      accessKey: KEY,
      at: new Date("2026-11-10T15:00:05Z"),
      status: "135",
      reason: "Evento registrado e vinculado a NF-e",
      protocol: "135260000054321"
    })
    expect(Result.isSuccess(validateCancellation("retEnvEvento", answer))).toBe(true)
  })

  it(
    skippedWithout(
      "xmllint",
      hasXmllint,
      "passes xmllint --schema with the official event schemas",
      "Debian's libxml2-utils"
    ),
    () => {
      if (!hasXmllint) return
      const checked = xmllintCancellation(
        "envEventoCancNFe_v1.00.xsd",
        eventBatch("1", signed(cancellationEvent(input)))
      )
      expect(checked.ok, checked.output).toBe(true)
    }
  )

  it(
    skippedWithout("xmlsec1", hasXmlsec1, "is verified by xmlsec1 against the emitter's chain", "Debian's xmlsec1"),
    () => {
      if (!hasXmlsec1) return
      const event = signed(cancellationEvent(input))
      expect(xmlsecVerifyNfe(event, "infEvento", [testRoot().certPem, testCa().certPem]).ok).toBe(true)
    }
  )

  it("uses the event schemas byte for byte as published (SHA256SUMS)", () =>
    expectPublishedSchemas("nfe-evento-cancelamento-v1.00", "NFE_CANCELLATION_XSD_DIR"))
})
