/**
 * The correction letter of an NF-e (CC-e, event 110110): built with its text and the fixed
 * conditions of use, signed over `infEvento`, checked against the official generic envelope by
 * libxml2 and by Debian's `xmllint`, its signature verified by `xmlsec1`; the envelope's schemas
 * byte for byte as published; the authority's answer schema-valid too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { eventAnswer, eventBatch } from "../../src/authority/sefaz/NfeCancellation.js"
import {
  CORRECTION_CONDITIONS,
  correctionEvent,
  correctionEventId,
  loadEventSchemas,
  validateEvent
} from "../../src/authority/sefaz/NfeCorrection.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { makePkcs12, testCa, testRoot } from "../support/certificates.js"
import {
  expectPublishedSchemas,
  hasXmllint,
  hasXmlsec1,
  skippedWithout,
  xmllintEvent,
  xmlsecVerifyNfe
} from "../support/NfeXml.js"

const CNPJ = "11222333000181"
const KEY = "35261111222333000181550010000010421234567891"
const emitter = makePkcs12({ cn: `EMPRESA LTDA:${CNPJ}`, cnpjOid: CNPJ, password: "x" })

const input = {
  environment: "test" as const,
  accessKey: KEY,
  issuerTaxId: CNPJ,
  sequence: 3,
  text: "Onde se lê   volume 1, leia-se volumes 1 e 2 & <caixa> lacrada",
  requestedAt: new Date("2026-11-10T15:00:00Z")
}

const signed = (xml: string) =>
  signEnveloped(xml, {
    element: "nfeEvent",
    privateKeyPem: emitter.privateKeyPem,
    certificatePem: emitter.certificatePem
  })

describe("the correction letter (110110)", () => {
  it("is a schema-valid, signed batch of one event, numbered by its sequence, with the fixed conditions of use", async () => {
    await loadEventSchemas()
    const event = signed(correctionEvent(input))
    expect(correctionEventId(KEY, 3)).toBe(`ID110110${KEY}03`)
    expect(event).toContain(`Id="ID110110${KEY}03"`)
    expect(event).toContain("<nSeqEvento>3</nSeqEvento>")
    expect(event).toContain("<descEvento>Carta de Correcao</descEvento>")
    expect(event).toContain(
      "<xCorrecao>Onde se lê volume 1, leia-se volumes 1 e 2 &amp; &lt;caixa&gt; lacrada</xCorrecao>"
    )
    expect(event).toContain(`<xCondUso>${CORRECTION_CONDITIONS}</xCondUso>`)
    const valid = validateEvent("envEvento", eventBatch("1042", event))
    expect(Result.isSuccess(valid), JSON.stringify(valid)).toBe(true)
    expect(Result.isSuccess(verifyEnveloped(event, "nfeEvent"))).toBe(true)
    expect(Result.isFailure(verifyEnveloped(event.replace("volumes 1 e 2", "volumes 1 a 9"), "nfeEvent"))).toBe(true)
    // The envelope takes one or two digits (the limit of 20 letters is the service's): 100 is refused.
    const beyond = eventBatch("1", signed(correctionEvent({ ...input, sequence: 100 })))
    expect(Result.isFailure(validateEvent("envEvento", beyond))).toBe(true)
  })

  it("answers in the official shape: the batch processed, the letter registered with its protocol", async () => {
    await loadEventSchemas()
    const answer = eventAnswer("1042", {
      environment: "test",
      application: "TESTE_1.0",
      accessKey: KEY,
      at: new Date("2026-11-10T15:00:05Z"),
      status: "135",
      reason: "Evento registrado e vinculado a NF-e",
      protocol: "135260000054321",
      event: { type: "110110", sequence: 3, registered: "Carta de Correcao registrada" }
    })
    expect(Result.isSuccess(validateEvent("retEnvEvento", answer))).toBe(true)
    expect(answer).toContain("<tpEvento>110110</tpEvento>")
    expect(answer).toContain("<nSeqEvento>3</nSeqEvento>")
  })

  it(
    skippedWithout(
      "xmllint",
      hasXmllint,
      "passes xmllint --schema with the official envelope",
      "Debian's libxml2-utils"
    ),
    () => {
      if (!hasXmllint) return
      const checked = xmllintEvent("envEvento_v1.00.xsd", eventBatch("1", signed(correctionEvent(input))))
      expect(checked.ok, checked.output).toBe(true)
    }
  )

  it(
    skippedWithout("xmlsec1", hasXmlsec1, "is verified by xmlsec1 against the emitter's chain", "Debian's xmlsec1"),
    () => {
      if (!hasXmlsec1) return
      const event = signed(correctionEvent(input))
      expect(xmlsecVerifyNfe(event, "infEvento", [testRoot().certPem, testCa().certPem]).ok).toBe(true)
    }
  )

  it("uses the envelope's schemas byte for byte as published (SHA256SUMS)", () =>
    expectPublishedSchemas("nfe-evento-v1.00", "NFE_EVENT_XSD_DIR"))
})
