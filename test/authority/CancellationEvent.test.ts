/**
 * The cancellation request (pedRegEvento with e101101) and the authority's registered event
 * (evento): ids as the shipped v1.01 schemas (27/07/2026) and production have them (no
 * nPedRegEvento, a 59-character Id), both valid against the official XSDs (checked by our validator
 * and by xmllint), and read back on the other side; then the earlier form and the other event types.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import {
  buildAnalysisDecisionRequest,
  buildCancellationRequest,
  buildEvento,
  buildSubstitutionEventRequest,
  cancellationReasonCode,
  type CancellationRequestInput,
  eventId,
  readCancellationRequest,
  readEvento
} from "../../src/authority/sefin/CancellationEvent.js"
import {
  eventFormOf,
  PRODUCTION_EVENT_FORM,
  refusalBlamesEventForm,
  validateEventRequest
} from "../../src/authority/sefin/EventRequest.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { makePkcs12 } from "../support/certificates.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { hasXmllint, sampleAccessKey, withXmllint, xmllintValidate } from "../support/NfseXml.js"

const request: CancellationRequestInput = {
  tpAmb: 2,
  requestedAt: new Date("2026-11-12T02:15:00.500Z"),
  issuerTaxId: "11.222.333/0001-81",
  accessKey: sampleAccessKey,
  reasonCode: cancellationReasonCode.service_not_provided,
  reason: "Serviço não prestado: contrato <rescindido> & valores devolvidos",
  // The form the shipped schemas and production take; the earlier one is tested below.
  form: "without_sequence"
}

const issuer = makePkcs12({ cn: "EMPRESA TESTE LTDA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const authority = makePkcs12({
  cn: "SEFIN LOCAL:00394460005887",
  cnpjOid: "00394460005887",
  password: "x",
  freshKey: true
})

const signedRequest = () =>
  signEnveloped(buildCancellationRequest(request).xml, {
    element: "infPedReg",
    privateKeyPem: issuer.privateKeyPem,
    certificatePem: issuer.certificatePem
  })

const registeredEvent = () => {
  const signed = signedRequest()
  const parsed = readCancellationRequest(signed)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  const xml = buildEvento({
    signedRequestXml: signed,
    request: parsed.success,
    processedAt: new Date("2026-11-12T02:15:03.250Z"),
    eventNumber: 987654
  })
  return signEnveloped(xml, {
    element: "infEvento",
    privateKeyPem: authority.privateKeyPem,
    certificatePem: authority.certificatePem,
    withComments: true
  })
}

describe("cancellation request (pedRegEvento e101101)", () => {
  it("builds the request with its 59-character PRE id and no nPedRegEvento, valid against the schema unsigned and signed", () => {
    const { id, xml } = buildCancellationRequest(request)
    expect(id).toBe(`PRE${sampleAccessKey}101101`)
    expect(id).toHaveLength(59)
    expect(xml).toBe(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><pedRegEvento versao=\"1.01\" xmlns=\"http://www.sped.fazenda.gov.br/nfse\">" +
        `<infPedReg Id="${id}"><tpAmb>2</tpAmb><verAplic>etd-service_0.1.0</verAplic>` +
        "<dhEvento>2026-11-11T23:15:00-03:00</dhEvento><CNPJAutor>11222333000181</CNPJAutor>" +
        `<chNFSe>${sampleAccessKey}</chNFSe>` +
        "<e101101><xDesc>Cancelamento de NFS-e</xDesc><cMotivo>2</cMotivo>" +
        "<xMotivo>Serviço não prestado: contrato &lt;rescindido&gt; &amp; valores devolvidos</xMotivo></e101101>" +
        "</infPedReg></pedRegEvento>"
    )
    expect(validateXml("pedRegEvento", xml)).toEqual(Result.void)
    expect(validateXml("pedRegEvento", signedRequest())).toEqual(Result.void)
  })

  it.skipIf(!hasXmllint)(withXmllint("is accepted by xmllint, signed and unsigned"), () => {
    for (const xml of [buildCancellationRequest(request).xml, signedRequest()]) {
      const run = xmllintValidate("pedRegEvento_v1.01.xsd", xml)
      expect(run.ok, run.output).toBe(true)
    }
  })

  it("uses CPFAutor for a CPF issuer and the three reason codes", () => {
    for (const reasonCode of Object.values(cancellationReasonCode)) {
      const { id, xml } = buildCancellationRequest({
        ...request,
        issuerTaxId: "529.982.247-25",
        reasonCode
      })
      expect(validateXml("pedRegEvento", xml)).toEqual(Result.void)
      expect(id).toBe(`PRE${sampleAccessKey}101101`)
      expect(xml).toContain("<CPFAutor>52998224725</CPFAutor>")
      expect(xml).not.toContain("nPedRegEvento")
      expect(xml).toContain(`<cMotivo>${reasonCode}</cMotivo>`)
    }
  })

  it("fails validation for a reason under 15 characters (the schema's TSMotivo)", () => {
    const result = validateXml("pedRegEvento", buildCancellationRequest({ ...request, reason: "curto demais" }).xml)
    expect(Result.isFailure(result) ? result.failure.messages.join("\n") : "").toContain("xMotivo")
  })

  it("reads a request back, with the cancellation's reason", () => {
    const parsed = readCancellationRequest(signedRequest())
    expect(parsed).toEqual(Result.succeed({
      id: `PRE${sampleAccessKey}101101`,
      tpAmb: 2,
      applicationVersion: "etd-service_0.1.0",
      requestedAt: "2026-11-11T23:15:00-03:00",
      authorTaxId: "11222333000181",
      accessKey: sampleAccessKey,
      sequence: 1,
      form: "without_sequence",
      eventType: "101101",
      cancellation: { reasonCode: "2", reason: request.reason }
    }))
  })

  it("still reads a request in the earlier package's form (62-character Id, nPedRegEvento)", () => {
    const earlier = signedRequest()
      .replace(`Id="PRE${sampleAccessKey}101101"`, `Id="PRE${sampleAccessKey}101101002"`)
      .replace(`</chNFSe>`, `</chNFSe><nPedRegEvento>002</nPedRegEvento>`)
    const parsed = readCancellationRequest(earlier)
    expect(Result.isSuccess(parsed) && parsed.success.sequence).toBe(2)
  })

  it("reads another event type by name, without cancellation details, and refuses what is no request", () => {
    const substitution = buildCancellationRequest(request).xml
      .replace(
        /<e101101>.*<\/e101101>/,
        "<e105102><xDesc>Cancelamento de NFS-e por Substituição</xDesc><cMotivo>01</cMotivo></e105102>"
      )
    const parsed = readCancellationRequest(substitution)
    expect(Result.isSuccess(parsed) && parsed.success.eventType).toBe("105102")
    expect(Result.isSuccess(parsed) && parsed.success.cancellation).toBeUndefined()

    for (
      const xml of [
        "<pedRegEvento",
        "<evento xmlns=\"http://www.sped.fazenda.gov.br/nfse\"/>",
        buildCancellationRequest(request).xml.replace(/<e101101>.*<\/e101101>/, "")
      ]
    ) {
      const result = readCancellationRequest(xml)
      expect(Result.isFailure(result) && result.failure._tag, xml).toBe("CancellationRequestUnreadable")
    }
  })
})

describe("registered event (evento)", () => {
  it("embeds the signed request unchanged under an EVT id; valid against the schema once signed", () => {
    const xml = registeredEvent()
    const id = eventId(sampleAccessKey, "101101", 1)
    expect(id).toBe(`EVT${sampleAccessKey}101101001`)
    expect(id).toHaveLength(62)
    expect(xml).toContain(
      `<infEvento Id="${id}"><verAplic>LocalSefin_1.0</verAplic><ambGer>2</ambGer><nSeqEvento>1</nSeqEvento>` +
        "<dhProc>2026-11-11T23:15:03-03:00</dhProc><nDFSe>987654</nDFSe><pedRegEvento "
    )
    expect(xml).toContain(signedRequest().replace(/^<\?xml[^>]*>/, ""))
    expect(validateXml("evento", xml)).toEqual(Result.void)
    // Both signatures hold: the authority's over infEvento, the issuer's over the embedded request.
    expect(Result.isSuccess(verifyEnveloped(xml, "infEvento"))).toBe(true)
    const embedded = /<pedRegEvento .*<\/pedRegEvento>/.exec(xml)![0]
    expect(Result.isSuccess(verifyEnveloped(embedded, "infPedReg"))).toBe(true)
  })

  it("is refused by the schema unsigned: the evento schema requires its Signature", () => {
    const parsed = readCancellationRequest(signedRequest())
    if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
    const unsigned = buildEvento({
      signedRequestXml: signedRequest(),
      request: parsed.success,
      processedAt: new Date()
    })
    const result = validateXml("evento", unsigned)
    expect(Result.isFailure(result) ? result.failure.messages.join("\n") : "").toContain("Signature")
  })

  it.skipIf(!hasXmllint)(withXmllint("is accepted by xmllint once signed"), () => {
    const run = xmllintValidate("evento_v1.01.xsd", registeredEvent())
    expect(run.ok, run.output).toBe(true)
  })

  it("reads the registered event: id, processing time and the request", () => {
    const parsed = readEvento(registeredEvent())
    if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
    expect(parsed.success).toMatchObject({
      id: `EVT${sampleAccessKey}101101001`,
      processedAt: "2026-11-11T23:15:03-03:00",
      sequence: 1,
      eventNumber: "987654",
      applicationVersion: "LocalSefin_1.0",
      request: { accessKey: sampleAccessKey, eventType: "101101", cancellation: { reasonCode: "2" } }
    })
    expect(new Date(parsed.success.processedAt).toISOString()).toBe("2026-11-12T02:15:03.000Z")
    expect(Result.isFailure(readEvento(signedRequest()))).toBe(true)
  })
})

describe("the form production takes, and the other events", () => {
  const production = { ...request, form: undefined }

  it("is the default: no nPedRegEvento and a 59-character Id; the earlier form is checked as its equivalent", () => {
    expect(PRODUCTION_EVENT_FORM).toBe("without_sequence")
    const { id, xml } = buildCancellationRequest(production)
    expect(id).toBe(`PRE${sampleAccessKey}101101`)
    expect(id).toHaveLength(59)
    expect(xml).not.toContain("nPedRegEvento")
    expect(xml).toContain(`<chNFSe>${sampleAccessKey}</chNFSe><e101101>`)
    expect(eventFormOf(xml)).toBe("without_sequence")
    // The shipped schema takes it as it is; the earlier form is refused as it is, and valid as its equivalent.
    expect(validateXml("pedRegEvento", xml)).toEqual(Result.void)
    expect(validateEventRequest(xml)).toEqual(Result.void)
    const earlier = buildCancellationRequest({ ...production, form: "with_sequence" }).xml
    expect(Result.isFailure(validateXml("pedRegEvento", earlier))).toBe(true)
    expect(validateEventRequest(earlier)).toEqual(Result.void)
    // Anything else wrong in it is still refused (a reason under 15 characters).
    const short = validateEventRequest(buildCancellationRequest({ ...production, reason: "curto demais" }).xml)
    expect(Result.isFailure(short)).toBe(true)
    const parsed = readCancellationRequest(xml)
    expect(Result.isSuccess(parsed) && parsed.success).toMatchObject({ form: "without_sequence", sequence: 1, id })
  })

  it("tells a refusal of the form from any other schema failure", () => {
    expect(refusalBlamesEventForm("Element 'nPedRegEvento': This element is not expected.")).toBe(true)
    expect(refusalBlamesEventForm("The 'Id' attribute is invalid - datatype 'TSIdPedRegEvt'")).toBe(true)
    expect(refusalBlamesEventForm("Element 'xMotivo': [facet 'minLength'] The value has a length of 12")).toBe(false)
  })

  it("builds the analysis request (e101103), the substitution (e105102) and the decisions (e105104/e105105)", () => {
    const analysis = buildCancellationRequest({ ...request, analysis: true })
    expect(analysis.id).toBe(`PRE${sampleAccessKey}101103`)
    expect(analysis.xml).toContain(
      "<e101103><xDesc>Solicitação de Análise Fiscal para Cancelamento de NFS-e</xDesc><cMotivo>2</cMotivo>"
    )
    expect(validateXml("pedRegEvento", analysis.xml)).toEqual(Result.void)

    const substitution = buildSubstitutionEventRequest({
      tpAmb: 2,
      requestedAt: request.requestedAt,
      issuerTaxId: request.issuerTaxId,
      accessKey: sampleAccessKey,
      reasonCode: "99",
      reason: "Valor informado a menor na nota",
      substituteAccessKey: sampleAccessKey.replace(/^3/, "4"),
      form: "without_sequence"
    })
    expect(validateXml("pedRegEvento", substitution.xml)).toEqual(Result.void)
    const read = readCancellationRequest(substitution.xml)
    expect(Result.isSuccess(read) && read.success.substituteAccessKey).toBe(sampleAccessKey.replace(/^3/, "4"))

    for (const granted of [true, false]) {
      const decision = buildAnalysisDecisionRequest({
        tpAmb: 2,
        decidedAt: request.requestedAt,
        agentCpf: "52998224725",
        accessKey: sampleAccessKey,
        granted,
        reason: "Cancelamento analisado pelo fisco municipal",
        form: "without_sequence"
      })
      expect(validateXml("pedRegEvento", decision.xml), decision.xml).toEqual(Result.void)
      expect(decision.id).toBe(`PRE${sampleAccessKey}${granted ? "105104" : "105105"}`)
    }
  })
})
