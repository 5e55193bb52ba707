/**
 * The SOAP 1.2 envelope of the NF-e 4.00 web services: the message goes in `nfeDadosMsg` of the
 * service's WSDL namespace, the answer comes back in `nfeResultMsg`, and the action is named in the
 * content type (SOAP 1.2 has no SOAPAction header). What is inside is the layout's own documents
 * (NfeProtocol.ts).
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import { parseXml, withoutXmlDeclaration, XML_DECLARATION } from "../xml/XmlText.js"
import type { SefazService } from "./SefazAddresses.js"

const SOAP_NAMESPACE = "http://www.w3.org/2003/05/soap-envelope"
const WSDL_BASE = "http://www.portalfiscal.inf.br/nfe/wsdl/"

/** Each service's WSDL name and operation. */
const OPERATIONS: Readonly<Record<SefazService, { readonly wsdl: string; readonly operation: string }>> = {
  NfeAutorizacao: { wsdl: "NFeAutorizacao4", operation: "nfeAutorizacaoLote" },
  NfeRetAutorizacao: { wsdl: "NFeRetAutorizacao4", operation: "nfeRetAutorizacaoLote" },
  NfeConsultaProtocolo: { wsdl: "NFeConsultaProtocolo4", operation: "nfeConsultaNF" },
  NfeStatusServico: { wsdl: "NFeStatusServico4", operation: "nfeStatusServicoNF" },
  RecepcaoEvento: { wsdl: "NFeRecepcaoEvento4", operation: "nfeRecepcaoEvento" },
  NfeInutilizacao: { wsdl: "NFeInutilizacao4", operation: "nfeInutilizacaoNF" }
}

export interface SoapRequest {
  readonly contentType: string
  readonly body: string
}

export const soapRequest = (service: SefazService, message: string): SoapRequest => {
  const { operation, wsdl } = OPERATIONS[service]
  return {
    contentType: `application/soap+xml; charset=utf-8; action="${WSDL_BASE}${wsdl}/${operation}"`,
    body: `${XML_DECLARATION}<soap12:Envelope xmlns:soap12="${SOAP_NAMESPACE}"><soap12:Body>` +
      `<nfeDadosMsg xmlns="${WSDL_BASE}${wsdl}">${withoutXmlDeclaration(message)}</nfeDadosMsg>` +
      "</soap12:Body></soap12:Envelope>"
  }
}

/** The envelope a service answers with, around its result document. */
export const soapResponse = (service: SefazService, result: string): string =>
  `${XML_DECLARATION}<soap12:Envelope xmlns:soap12="${SOAP_NAMESPACE}"><soap12:Body>` +
  `<nfeResultMsg xmlns="${WSDL_BASE}${OPERATIONS[service].wsdl}">${withoutXmlDeclaration(result)}</nfeResultMsg>` +
  "</soap12:Body></soap12:Envelope>"

const firstElement = (parent: Element | null): Element | null => {
  for (let node = parent?.firstChild ?? null; node !== null; node = node.nextSibling) {
    if (node.nodeType === 1) return node as Element
  }
  return null
}

/**
 * The document inside an envelope's `nfeResultMsg` (or `nfeDadosMsg`, on the authority's side), as
 * its own XML; a fault, or anything else, is a failure saying what came instead.
 */
export const soapContent = (envelope: string): Result.Result<string, string> => {
  const parsed = parseXml(envelope)
  if (Result.isFailure(parsed)) return Result.fail(`not XML: ${parsed.failure}`)
  const root = parsed.success.documentElement
  if (root === null || root.namespaceURI !== SOAP_NAMESPACE || root.localName !== "Envelope") {
    return Result.fail("not a SOAP 1.2 envelope")
  }
  const body = Array.from(root.getElementsByTagNameNS(SOAP_NAMESPACE, "Body"))[0] ?? null
  const message = firstElement(body)
  if (message === null) return Result.fail("an empty SOAP body")
  if (message.namespaceURI === SOAP_NAMESPACE && message.localName === "Fault") {
    return Result.fail(`a SOAP fault: ${(message.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 300)}`)
  }
  const content = firstElement(message)
  if (!message.namespaceURI?.startsWith(WSDL_BASE) || content === null) {
    return Result.fail(`an unexpected SOAP body element ${message.localName}`)
  }
  return Result.succeed(content.toString())
}
