/**
 * The cancellation of an NFS-e in the national system: the taxpayer's request (`pedRegEvento` with
 * the `e101101` event, v1.01), signed over `infPedReg` and sent to `POST /nfse/{chave}/eventos`, the
 * request for the municipality's analysis of a late cancellation (`e101103`), the cancellation by
 * substitution the system itself registers (`e105102`), and the authority's registered event
 * (`evento`) the local authority answers with.
 *
 * Production's form, as the v1.01 schemas of 27/07/2026 have it: the request's Id is "PRE" + access
 * key (50) + event type (6), 59 characters, with no nPedRegEvento (the element the earlier package
 * had, which the authority now refuses with E1235). Both forms are EventRequest.ts's; the
 * registered event's Id is "EVT" + access key + event type + nSeqEvento (3).
 */
import type { Element } from "@xmldom/xmldom"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import {
  brasiliaDateTime,
  escapeAttribute,
  leaf,
  NFSE_NAMESPACE,
  nfseChildElements,
  nfseElement,
  nfseText,
  parseXml,
  singleLine,
  withoutXmlDeclaration,
  XML_DECLARATION
} from "../xml/XmlText.js"
import { buildEventRequest, type EventForm, PRODUCTION_EVENT_FORM } from "./EventRequest.js"

/** cMotivo of e101101 and e101103: the API's reason codes. The schema allows only these three. */
export const cancellationReasonCode = { issue_error: 1, service_not_provided: 2, other: 9 } as const
export type CancellationReasonCode = (typeof cancellationReasonCode)[keyof typeof cancellationReasonCode]

/** The event type of a cancellation by the issuer. */
export const CANCELLATION_EVENT_TYPE = "101101"
/** The issuer's request for the municipality's analysis of a cancellation past its deadline. */
export const ANALYSIS_REQUEST_EVENT_TYPE = "101103"
/** Registered by the system on the original when it authorizes a substitute. */
export const SUBSTITUTION_EVENT_TYPE = "105102"
/** The municipality's decisions on an analysis request: granted, refused. */
export const ANALYSIS_GRANTED_EVENT_TYPE = "105104"
export const ANALYSIS_REFUSED_EVENT_TYPE = "105105"

/** The fixed xDesc of each event (an enumeration of one value in the schema). */
const descriptions = {
  [CANCELLATION_EVENT_TYPE]: "Cancelamento de NFS-e",
  [ANALYSIS_REQUEST_EVENT_TYPE]: "Solicitação de Análise Fiscal para Cancelamento de NFS-e",
  [SUBSTITUTION_EVENT_TYPE]: "Cancelamento de NFS-e por Substituição"
} as const

const threeDigits = (n: number) => String(n).padStart(3, "0")

export interface CancellationRequestInput {
  readonly tpAmb: 1 | 2
  /** dhEvento, written as Brasília local time. */
  readonly requestedAt: Date
  /** The author: the issuer's CNPJ (14) or CPF (11), normalized or not. */
  readonly issuerTaxId: string
  readonly accessKey: string
  /** nPedRegEvento (in the `with_sequence` form), 1 for the first request on this note and event type. */
  readonly sequence?: number | undefined
  readonly reasonCode: CancellationReasonCode
  /** xMotivo: 15 to 255 characters in the schema (the API enforces the same bounds). */
  readonly reason: string
  /** Default: the form production takes. */
  readonly form?: EventForm | undefined
  /** true: the analysis request (e101103) rather than the cancellation (e101101). */
  readonly analysis?: boolean | undefined
}

/**
 * The unsigned cancellation (or analysis) request: `<pedRegEvento versao="1.01" xmlns=…><infPedReg
 * Id="PRE…">…`; its signature is optional in the schema.
 */
export const buildCancellationRequest = (
  input: CancellationRequestInput
): { readonly id: string; readonly xml: string } => {
  const eventType = input.analysis === true ? ANALYSIS_REQUEST_EVENT_TYPE : CANCELLATION_EVENT_TYPE
  return buildEventRequest({
    tpAmb: input.tpAmb,
    requestedAt: input.requestedAt,
    authorTaxId: input.issuerTaxId,
    accessKey: input.accessKey,
    form: input.form ?? PRODUCTION_EVENT_FORM,
    sequence: input.sequence,
    eventType,
    detail: leaf("xDesc", descriptions[eventType]) +
      leaf("cMotivo", String(input.reasonCode)) +
      leaf("xMotivo", singleLine(input.reason))
  })
}

/** The e105102 the system registers on a substituted note (the local authority's side). */
export const buildSubstitutionEventRequest = (input: {
  readonly tpAmb: 1 | 2
  readonly requestedAt: Date
  readonly issuerTaxId: string
  readonly accessKey: string
  readonly reasonCode: string
  readonly reason?: string | undefined
  readonly substituteAccessKey: string
  readonly form: EventForm
}) =>
  buildEventRequest({
    tpAmb: input.tpAmb,
    requestedAt: input.requestedAt,
    authorTaxId: input.issuerTaxId,
    accessKey: input.accessKey,
    form: input.form,
    eventType: SUBSTITUTION_EVENT_TYPE,
    detail: leaf("xDesc", descriptions[SUBSTITUTION_EVENT_TYPE]) +
      leaf("cMotivo", input.reasonCode) +
      (input.reason === undefined ? "" : leaf("xMotivo", singleLine(input.reason))) +
      leaf("chSubstituta", input.substituteAccessKey)
  })

/**
 * The municipality's decision on an analysis request, e105104 (granted) or e105105 (refused), as
 * its tax agent registers it (the local authority's side): the agent's CPF is the author and `CPFAgTrib`.
 */
export const buildAnalysisDecisionRequest = (input: {
  readonly tpAmb: 1 | 2
  readonly decidedAt: Date
  readonly agentCpf: string
  readonly accessKey: string
  readonly granted: boolean
  readonly reason: string
  readonly form: EventForm
}) =>
  buildEventRequest({
    tpAmb: input.tpAmb,
    requestedAt: input.decidedAt,
    authorTaxId: input.agentCpf,
    accessKey: input.accessKey,
    form: input.form,
    eventType: input.granted ? ANALYSIS_GRANTED_EVENT_TYPE : ANALYSIS_REFUSED_EVENT_TYPE,
    detail: leaf(
      "xDesc",
      input.granted
        ? "Cancelamento de NFS-e Deferido por Análise Fiscal"
        : "Cancelamento de NFS-e Indeferido por Análise Fiscal"
    ) +
      leaf("CPFAgTrib", input.agentCpf) +
      leaf("cMotivo", "1") +
      leaf("xMotivo", singleLine(input.reason))
  })

export class CancellationRequestUnreadable extends Schema.TaggedError<CancellationRequestUnreadable>()(
  "CancellationRequestUnreadable",
  { message: Schema.String }
) {}

export interface ParsedEventRequest {
  readonly id: string
  readonly tpAmb: 1 | 2
  readonly applicationVersion: string
  /** dhEvento as written. */
  readonly requestedAt: string
  readonly authorTaxId: string
  readonly accessKey: string
  /** nPedRegEvento; 1 in the form without it. */
  readonly sequence: number
  /** With or without nPedRegEvento. */
  readonly form: EventForm
  /** The event's type, from its element name: "101101" for a cancellation. */
  readonly eventType: string
  /** Present for a cancellation (e101101), an analysis request (e101103) and its decision (e105104/e105105): cMotivo and xMotivo as written. */
  readonly cancellation?: { readonly reasonCode: string; readonly reason: string }
  /** Present for a cancellation by substitution (e105102): the substitute's key. */
  readonly substituteAccessKey?: string
}

const unreadable = (message: string) => Result.fail(new CancellationRequestUnreadable({ message }))

/**
 * Reads an event request (signed or not). Any event type is read so the authority can refuse the
 * ones it does not handle by name; only e101101 has its details read.
 */
export const readCancellationRequest = (
  xml: string
): Result.Result<ParsedEventRequest, CancellationRequestUnreadable> => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return unreadable(`The event request is not well-formed XML (${parsed.failure})`)
  return readPedRegEvento(parsed.success.documentElement!)
}

/** Reads a `pedRegEvento` element, on its own or embedded in an `evento`. */
const readPedRegEvento = (root: Element): Result.Result<ParsedEventRequest, CancellationRequestUnreadable> => {
  if (root.localName !== "pedRegEvento" || root.namespaceURI !== NFSE_NAMESPACE) {
    return unreadable(`The root element is ${root.localName}, not pedRegEvento in ${NFSE_NAMESPACE}`)
  }
  const inf = nfseElement(root, "infPedReg")
  if (inf === undefined) return unreadable("The event request has no infPedReg")
  const id = inf.getAttribute("Id") ?? ""
  const tpAmb = nfseText(inf, "tpAmb")
  const author = nfseText(inf, "CNPJAutor") ?? nfseText(inf, "CPFAutor")
  const accessKey = nfseText(inf, "chNFSe")
  const sequenceText = nfseText(inf, "nPedRegEvento")
  const sequence = sequenceText === undefined ? 1 : Number(sequenceText)
  const event = nfseChildElements(inf).find((child) => /^e[0-9]{6}$/.test(child.localName ?? ""))
  const problems = [
    ...(id === "" ? ["Id"] : []),
    ...(tpAmb === "1" || tpAmb === "2" ? [] : ["tpAmb"]),
    ...(author === undefined ? ["CNPJAutor/CPFAutor"] : []),
    ...(accessKey === undefined ? ["chNFSe"] : []),
    ...(Number.isSafeInteger(sequence) ? [] : ["nPedRegEvento"]),
    ...(event === undefined ? ["event (e101101, …)"] : [])
  ]
  if (problems.length > 0) return unreadable(`The event request lacks or has unreadable: ${problems.join(", ")}`)
  const eventType = event!.localName!.slice(1)
  return Result.succeed({
    id,
    tpAmb: tpAmb === "1" ? 1 : 2,
    applicationVersion: nfseText(inf, "verAplic") ?? "",
    requestedAt: nfseText(inf, "dhEvento") ?? "",
    authorTaxId: author!,
    accessKey: accessKey!,
    sequence,
    form: sequenceText === undefined ? "without_sequence" : "with_sequence",
    eventType,
    ...([CANCELLATION_EVENT_TYPE, ANALYSIS_REQUEST_EVENT_TYPE, ANALYSIS_GRANTED_EVENT_TYPE, ANALYSIS_REFUSED_EVENT_TYPE]
        .includes(eventType)
      ? { cancellation: { reasonCode: nfseText(event, "cMotivo") ?? "", reason: nfseText(event, "xMotivo") ?? "" } }
      : {}),
    ...(eventType === SUBSTITUTION_EVENT_TYPE ? { substituteAccessKey: nfseText(event, "chSubstituta") ?? "" } : {})
  })
}

/** "EVT" + access key + event type + nSeqEvento (3 digits): 62 characters. */
export const eventId = (accessKey: string, eventType: string, sequence = 1): string =>
  `EVT${accessKey}${eventType}${threeDigits(sequence)}`

export interface EventoInput {
  /** The request as received, signed; embedded unchanged so its signature still verifies. */
  readonly signedRequestXml: string
  readonly request: ParsedEventRequest
  /** dhProc. */
  readonly processedAt: Date
  /** nDFSe: the authority's number for this event document; default 1. */
  readonly eventNumber?: number | undefined
  /** nSeqEvento; default the request's sequence. */
  readonly sequence?: number | undefined
  /** verAplic of the authority. */
  readonly applicationVersion?: string | undefined
}

/** The authority's own software version in the documents it issues (1–20 characters). */
export const LOCAL_AUTHORITY_VERSION = "LocalSefin_1.0"

/**
 * The registered event, unsigned: `<evento versao="1.01"><infEvento Id="EVT…">…<pedRegEvento>…`
 * (its Id is `eventId(…)`). The `evento` schema requires a Signature over infEvento, so it
 * validates once the authority signs it. ambGer 2: generated by the national system.
 */
export const buildEvento = (input: EventoInput): string => {
  const sequence = input.sequence ?? input.request.sequence
  const id = eventId(input.request.accessKey, input.request.eventType, sequence)
  const infEvento = `<infEvento Id="${escapeAttribute(id)}">` +
    leaf("verAplic", input.applicationVersion ?? LOCAL_AUTHORITY_VERSION) +
    leaf("ambGer", "2") +
    leaf("nSeqEvento", String(sequence)) +
    leaf("dhProc", brasiliaDateTime(input.processedAt)) +
    leaf("nDFSe", String(input.eventNumber ?? 1)) +
    withoutXmlDeclaration(input.signedRequestXml) +
    "</infEvento>"
  return `${XML_DECLARATION}<evento versao="1.01" xmlns="${NFSE_NAMESPACE}">${infEvento}</evento>`
}

export class EventoUnreadable extends Schema.TaggedError<EventoUnreadable>()("EventoUnreadable", {
  message: Schema.String
}) {}

export interface ParsedEvento {
  /** infEvento Id, "EVT…": the registration's identifier, kept as the cancellation's protocol. */
  readonly id: string
  /** dhProc as written. */
  readonly processedAt: string
  readonly sequence: number
  /** nDFSe (nDFe in the earlier package). */
  readonly eventNumber: string
  readonly applicationVersion?: string
  /** The request the event registered. */
  readonly request: ParsedEventRequest
}

/** Reads the authority's answer to an event request (the sefin adapter's side). */
export const readEvento = (xml: string): Result.Result<ParsedEvento, EventoUnreadable> => {
  const fail = (message: string) => Result.fail(new EventoUnreadable({ message }))
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return fail(`The event is not well-formed XML (${parsed.failure})`)
  const root = parsed.success.documentElement!
  if (root.localName !== "evento" || root.namespaceURI !== NFSE_NAMESPACE) {
    return fail(`The root element is ${root.localName}, not evento in ${NFSE_NAMESPACE}`)
  }
  const inf = nfseElement(root, "infEvento")
  const id = inf?.getAttribute("Id") ?? ""
  const processedAt = nfseText(inf, "dhProc")
  const sequence = Number(nfseText(inf, "nSeqEvento"))
  const eventNumber = nfseText(inf, "nDFSe") ?? nfseText(inf, "nDFe")
  const embedded = nfseElement(inf, "pedRegEvento")
  if (
    inf === undefined || id === "" || processedAt === undefined || !Number.isSafeInteger(sequence) ||
    eventNumber === undefined || embedded === undefined
  ) {
    return fail("The event lacks infEvento, its Id, dhProc, nSeqEvento, nDFSe or the pedRegEvento")
  }
  const request = readPedRegEvento(embedded)
  if (Result.isFailure(request)) return fail(request.failure.message)
  const applicationVersion = nfseText(inf, "verAplic")
  return Result.succeed({
    id,
    processedAt,
    sequence,
    eventNumber,
    ...(applicationVersion === undefined ? {} : { applicationVersion }),
    request: request.success
  })
}
