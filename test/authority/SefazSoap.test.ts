/**
 * Where an emitter's notes go (the published authorizer map and each authorizer's addresses) and
 * the SOAP 1.2 envelope around the layout's documents: an enviNFe goes out in nfeDadosMsg with its
 * action in the content type, and the retEnviNFe comes back out of nfeResultMsg as it was; a fault or
 * a stranger body is a failure that says what came.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { authorizationRequest } from "../../src/authority/sefaz/NfeProtocol.js"
import { buildNfe } from "../../src/authority/sefaz/NfeXml.js"
import { loadNfeSchemas, validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { authorizerOf, sefazAddress, type SefazService } from "../../src/authority/sefaz/SefazAddresses.js"
import { soapContent, soapRequest, soapResponse } from "../../src/authority/sefaz/SefazSoap.js"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { makePkcs12 } from "../support/certificates.js"
import { BRAZILIAN_STATES, nfeInput } from "../support/NfeXml.js"

beforeAll(() => loadNfeSchemas())

const SERVICES: ReadonlyArray<SefazService> = [
  "NfeAutorizacao",
  "NfeRetAutorizacao",
  "NfeConsultaProtocolo",
  "NfeStatusServico",
  "RecepcaoEvento",
  "NfeInutilizacao"
]

describe("where an emitter's notes go", () => {
  it("São Paulo authorizes its own; Rio de Janeiro's go to SVRS; Maranhão's NF-e to SVAN", () => {
    expect(authorizerOf("55", "SP")).toBe("SP")
    expect(authorizerOf("55", "RJ")).toBe("SVRS")
    expect(authorizerOf("65", "RJ")).toBe("SVRS")
    expect(authorizerOf("55", "MA")).toBe("SVAN")
    expect(sefazAddress("55", "SP", "live", "NfeAutorizacao")).toBe(
      "https://nfe.fazenda.sp.gov.br/ws/nfeautorizacao4.asmx"
    )
    expect(sefazAddress("55", "RJ", "test", "NfeStatusServico")).toMatch(
      /^https:\/\/nfe-homologacao\.svrs\.rs\.gov\.br\//
    )
  })

  it("has every service of layout 4.00 for every state, model and environment, over HTTPS", () => {
    for (const model of ["55", "65"] as const) {
      for (const state of BRAZILIAN_STATES) {
        for (const environment of ["live", "test"] as const) {
          for (const service of SERVICES) {
            expect(sefazAddress(model, state, environment, service), `${model} ${state} ${environment} ${service}`)
              .toMatch(/^https:\/\/[^\s]+$/)
          }
        }
      }
    }
  })
})

describe("the SOAP 1.2 envelope", () => {
  const certificate = makePkcs12({
    cn: "DISTRIBUIDORA PAULISTA:11222333000181",
    cnpjOid: "11222333000181",
    password: "x"
  })
  const signedNote = () =>
    signEnveloped(buildNfe(nfeInput()).xml, {
      element: "infNFe",
      privateKeyPem: certificate.privateKeyPem,
      certificatePem: certificate.certificatePem
    })

  it("carries the enviNFe in nfeDadosMsg with the operation in the content type, and gives it back intact", () => {
    const message = authorizationRequest("42", signedNote())
    const request = soapRequest("NfeAutorizacao", message)
    expect(request.contentType).toBe(
      "application/soap+xml; charset=utf-8; action=\"http://www.portalfiscal.inf.br/nfe/wsdl/NFeAutorizacao4/nfeAutorizacaoLote\""
    )
    expect(request.body).toContain(
      "<nfeDadosMsg xmlns=\"http://www.portalfiscal.inf.br/nfe/wsdl/NFeAutorizacao4\"><enviNFe "
    )
    const content = Result.getOrThrow(soapContent(request.body))
    expect(content).toBe(message)
    expect(validateNfe("enviNFe", content)).toEqual(Result.void)
  })

  it("reads the result of a response, and says what came instead of one", () => {
    const result =
      "<retConsStatServ xmlns=\"http://www.portalfiscal.inf.br/nfe\" versao=\"4.00\"><cStat>107</cStat></retConsStatServ>"
    expect(Result.getOrThrow(soapContent(soapResponse("NfeStatusServico", result)))).toBe(result)
    const fault =
      "<?xml version=\"1.0\"?><soap:Envelope xmlns:soap=\"http://www.w3.org/2003/05/soap-envelope\"><soap:Body>" +
      "<soap:Fault><soap:Reason><soap:Text>Server was unable to process request</soap:Text></soap:Reason></soap:Fault>" +
      "</soap:Body></soap:Envelope>"
    expect(soapContent(fault)).toEqual(Result.fail("a SOAP fault: Server was unable to process request"))
    expect(soapContent("<html><body>Bad gateway</body></html>")).toEqual(Result.fail("not a SOAP 1.2 envelope"))
    expect(Result.isFailure(soapContent("not xml at all"))).toBe(true)
  })
})
