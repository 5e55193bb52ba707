/**
 * The authorization exchange of the NF-e 4.00 around a signed note: the request (`enviNFe`, one
 * note, synchronous), the authority's protocol (`protNFe`) and answer (`retEnviNFe`), and the
 * distributed document (`nfeProc`: the note with its protocol), which is what a note's XML file is.
 * Element order is the official schema's (schemas/nfe-v4.00/).
 */
import type { Environment } from "../../domain/Principal.js"
import { environmentCode } from "../TaxAuthority.js"
import { brasiliaDateTime, escapeText, leaf, withoutXmlDeclaration, XML_DECLARATION } from "../xml/XmlText.js"
import { NFE_NAMESPACE, NFE_VERSION } from "./NfeXml.js"

/** What the authority says about one note (infProt). */
export interface NoteProtocol {
  readonly environment: Environment
  /** The authority's application (verAplic). */
  readonly application: string
  readonly accessKey: string
  readonly receivedAt: Date
  /** The authorization protocol (15 digits); absent on a rejection. */
  readonly protocol?: string | undefined
  /** The DigestValue of the note's signature, as the authority computed it; absent on a rejection. */
  readonly digestValue?: string | undefined
  /** 100: authorized; anything else is a refusal or a denial. */
  readonly status: string
  readonly reason: string
}

export const AUTHORIZED = "100"
export const AUTHORIZED_REASON = "Autorizado o uso da NF-e"
/** An authorization all the same: a note (an NFC-e issued offline, say) received past its deadline. */
export const AUTHORIZED_LATE = "150"
export const AUTHORIZED_LATE_REASON = "Autorizado o uso da NF-e, autorização concedida fora de prazo"

/** Whether a note's cStat authorizes it (100, or 150 when late). */
export const isAuthorization = (code: string | undefined): boolean => code === AUTHORIZED || code === AUTHORIZED_LATE

/** `enviNFe` with one note, synchronous (indSinc 1): the authority answers with its protocol at once. */
export const authorizationRequest = (batchId: string, signedNfe: string): string =>
  `<enviNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("idLote", batchId) +
  leaf("indSinc", "1") +
  withoutXmlDeclaration(signedNfe) +
  "</enviNFe>"

export const protocolElement = (protocol: NoteProtocol): string =>
  `<protNFe versao="${NFE_VERSION}"><infProt>` +
  leaf("tpAmb", String(environmentCode(protocol.environment))) +
  leaf("verAplic", protocol.application) +
  leaf("chNFe", protocol.accessKey) +
  leaf("dhRecbto", brasiliaDateTime(protocol.receivedAt)) +
  (protocol.protocol === undefined ? "" : leaf("nProt", protocol.protocol)) +
  (protocol.digestValue === undefined ? "" : leaf("digVal", protocol.digestValue)) +
  leaf("cStat", protocol.status) +
  leaf("xMotivo", protocol.reason) +
  "</infProt></protNFe>"

/** `retEnviNFe` of a synchronous batch that was processed (104), carrying the note's protocol. */
export const authorizationAnswer = (protocol: NoteProtocol, stateCode: string): string =>
  `${XML_DECLARATION}<retEnviNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(protocol.environment))) +
  leaf("verAplic", protocol.application) +
  leaf("cStat", "104") +
  leaf("xMotivo", "Lote processado") +
  leaf("cUF", stateCode) +
  leaf("dhRecbto", brasiliaDateTime(protocol.receivedAt)) +
  protocolElement(protocol) +
  "</retEnviNFe>"

/** 103: the batch was received and is processed apart; its receipt (`nRec`) is asked for the outcome. */
export const RECEIVED = "103"
/** 104: the batch is processed; its protocols follow. */
export const PROCESSED = "104"
/** 105: the batch is still being processed. */
export const PROCESSING = "105"

/** `retEnviNFe` of a batch taken to be processed apart (103), with its receipt number. */
export const receivedAnswer = (
  environment: Environment,
  application: string,
  stateCode: string,
  at: Date,
  receipt: string
): string =>
  `${XML_DECLARATION}<retEnviNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("verAplic", application) +
  leaf("cStat", RECEIVED) +
  leaf("xMotivo", "Lote recebido com sucesso") +
  leaf("cUF", stateCode) +
  leaf("dhRecbto", brasiliaDateTime(at)) +
  `<infRec>${leaf("nRec", receipt)}${leaf("tMed", "1")}</infRec>` +
  "</retEnviNFe>"

/** `consReciNFe`: the outcome of a batch received apart, by its receipt. */
export const receiptRequest = (environment: Environment, receipt: string): string =>
  `<consReciNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("nRec", receipt) +
  "</consReciNFe>"

/** `retConsReciNFe`: processed (104) with the note's protocol, still processing (105), or unknown (106). */
export const receiptAnswer = (
  environment: Environment,
  application: string,
  stateCode: string,
  at: Date,
  receipt: string,
  protocol: NoteProtocol | "processing" | "unknown"
): string =>
  `${XML_DECLARATION}<retConsReciNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("verAplic", application) +
  leaf("nRec", receipt) +
  (protocol === "processing"
    ? leaf("cStat", PROCESSING) + leaf("xMotivo", "Lote em processamento")
    : protocol === "unknown"
    ? leaf("cStat", "106") + leaf("xMotivo", "Lote não localizado")
    : leaf("cStat", PROCESSED) + leaf("xMotivo", "Lote processado")) +
  leaf("cUF", stateCode) +
  leaf("dhRecbto", brasiliaDateTime(at)) +
  (typeof protocol === "string" ? "" : protocolElement(protocol)) +
  "</retConsReciNFe>"

/** The refusal of a whole batch, before any note is looked at (a schema failure, a paused service). */
export const batchRefusal = (
  environment: Environment,
  application: string,
  stateCode: string,
  receivedAt: Date,
  status: string,
  reason: string
): string =>
  `${XML_DECLARATION}<retEnviNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("verAplic", application) +
  leaf("cStat", status) +
  `<xMotivo>${escapeText(reason)}</xMotivo>` +
  leaf("cUF", stateCode) +
  leaf("dhRecbto", brasiliaDateTime(receivedAt)) +
  "</retEnviNFe>"

/** The `nfeProc`: the signed note as sent, then its authorization protocol. */
export const processedNote = (signedNfe: string, protocol: string): string =>
  `${XML_DECLARATION}<nfeProc xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  withoutXmlDeclaration(signedNfe) +
  protocol +
  "</nfeProc>"

/** `consStatServ`: is the authorizer of a state answering? */
export const statusRequest = (environment: Environment, stateCode: string): string =>
  `<consStatServ xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("cUF", stateCode) +
  leaf("xServ", "STATUS") +
  "</consStatServ>"

export const IN_OPERATION = "107"

/** `retConsStatServ`: 107 in operation, 108/109 paused (short / no forecast). */
export const statusAnswer = (
  environment: Environment,
  application: string,
  stateCode: string,
  at: Date,
  status: string,
  reason: string
): string =>
  `${XML_DECLARATION}<retConsStatServ xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("verAplic", application) +
  leaf("cStat", status) +
  leaf("xMotivo", reason) +
  leaf("cUF", stateCode) +
  leaf("dhRecbto", brasiliaDateTime(at)) +
  "</retConsStatServ>"

/** `consSitNFe`: what does the authority know of this key (the reconciliation after a timeout)? */
export const lookupRequest = (environment: Environment, accessKey: string): string =>
  `<consSitNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("xServ", "CONSULTAR") +
  leaf("chNFe", accessKey) +
  "</consSitNFe>"

export const NOT_FOUND = "217"
/** A lookup's answer for a note authorized, then cancelled (its protocol still in the answer). */
export const CANCELLED = "101"

/**
 * `retConsSitNFe`: 100 with the note's protocol when it is authorized (101 once cancelled), 217
 * ("NF-e não consta na base de dados da SEFAZ") when the authority never authorized it.
 */
export const lookupAnswer = (
  environment: Environment,
  application: string,
  stateCode: string,
  at: Date,
  accessKey: string,
  protocol: string | null,
  cancelled = false,
  late = false
): string =>
  `${XML_DECLARATION}<retConsSitNFe xmlns="${NFE_NAMESPACE}" versao="${NFE_VERSION}">` +
  leaf("tpAmb", String(environmentCode(environment))) +
  leaf("verAplic", application) +
  (protocol === null
    ? leaf("cStat", NOT_FOUND) + leaf("xMotivo", "Rejeição: NF-e não consta na base de dados da SEFAZ")
    : cancelled
    ? leaf("cStat", CANCELLED) + leaf("xMotivo", "Cancelamento de NF-e homologado")
    : late
    ? leaf("cStat", AUTHORIZED_LATE) + leaf("xMotivo", AUTHORIZED_LATE_REASON)
    : leaf("cStat", AUTHORIZED) + leaf("xMotivo", AUTHORIZED_REASON)) +
  leaf("cUF", stateCode) +
  leaf("dhRecbto", brasiliaDateTime(at)) +
  leaf("chNFe", accessKey) +
  (protocol ?? "") +
  "</retConsSitNFe>"
