/**
 * A protocol-faithful local SEFAZ for the goods invoices (NF-e and NFC-e, layout 4.00): an HTTPS
 * server on loopback with its own throw-away CA, requiring a client certificate, answering the
 * SOAP 1.2 web services a state authority has, deciding as the real one does (src/authority/sefaz/
 * NoteReview.ts: the official rejection codes) and keeping what it authorized in memory. Like the
 * local SEFIN Nacional beside it, it is what tests and customers' CI run instead of a state.
 *
 * Services (POST, SOAP 1.2; anything else is a 404 page):
 * - `/ws/NFeAutorizacao4.asmx`: enviNFe, synchronous (one note): the batch refused (225) when its
 *   schema fails, else processed (104) with the note's protocol: authorized (100) or its rejection;
 * - `/ws/NFeConsultaProtocolo4.asmx`: consSitNFe: the protocol of an authorized key (100), or 217;
 * - `/ws/NFeStatusServico4.asmx`: consStatServ: 107, in operation (or 108, 109: `setServiceStatus`);
 * - `/ws/NFeRetAutorizacao4.asmx`: consReciNFe, the outcome of a `simulate:async` note's batch, which
 *   the authorization took to process apart (103): 105 at the first ask, then 104 with its protocol;
 * - `/ws/NFeInutilizacao4.asmx`: inutNFe, number voiding (SefazVoiding.ts);
 * - `/ws/NFeRecepcaoEvento4.asmx`: envEvento with a correction letter (110110): schema and the fixed
 *   conditions of use (215), signature (297), the note known (217), not cancelled (218), an NF-e
 *   (490), its sequence number new (573), then registered (135); or with the cancellation (110111): schema (215), signature
 *   (297), the note known (217) and not cancelled yet (573), its protocol (222), the deadline (501,
 *   `cancellationDeadlineMs`, or `simulate:cancel-reject` in the note), then registered (135). A
 *   lookup of a cancelled note answers 101 with its protocol.
 *
 * Test mode's magic values travel in the note's `infCpl`: `simulate:reject` is rejected (999),
 * `simulate:unavailable` answers 503 a few times before it is processed, `simulate:timeout` is
 * authorized but its answer is held back (a lookup then finds it: the reconciliation path),
 * `simulate:offline` is answered 108 (service paused) unless issued offline (tpEmis 9).
 *
 * One instance stands for one environment (tpAmb), as each real one is a separate system.
 */
import * as Result from "effect/Result"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer, type Server } from "node:https"
import type { Socket } from "node:net"
import type { TLSSocket } from "node:tls"
import {
  eventAnswer,
  eventBatchRefusal,
  loadCancellationSchemas,
  validateCancellation
} from "../../src/authority/sefaz/NfeCancellation.js"
import {
  CORRECTION_CONDITIONS,
  CORRECTION_EVENT,
  loadEventSchemas,
  validateEvent
} from "../../src/authority/sefaz/NfeCorrection.js"
import {
  authorizationAnswer,
  AUTHORIZED,
  AUTHORIZED_LATE,
  AUTHORIZED_LATE_REASON,
  AUTHORIZED_REASON,
  batchRefusal,
  IN_OPERATION,
  lookupAnswer,
  type NoteProtocol,
  protocolElement,
  receiptAnswer,
  receivedAnswer,
  statusAnswer
} from "../../src/authority/sefaz/NfeProtocol.js"
import { loadVoidingSchemas } from "../../src/authority/sefaz/NfeVoiding.js"
import { loadNfeSchemas, validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { duplicityOf, type ReviewedNote, reviewNote } from "../../src/authority/sefaz/NoteReview.js"
import { type SefazService, SERVICE_FILES } from "../../src/authority/sefaz/SefazAddresses.js"
import { soapContent, soapResponse } from "../../src/authority/sefaz/SefazSoap.js"
import { MagicValues } from "../../src/authority/TaxAuthority.js"
import { verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { parseXml } from "../../src/authority/xml/XmlText.js"
import type { Environment } from "../../src/domain/Principal.js"
import { listenOn, mutualTlsOptions } from "./Listening.js"
import { localAuthorityKeys } from "./LocalAuthorityKeys.js"
import { makeLocalVoiding, type VoidedRange } from "./SefazVoiding.js"

const NFE_NAMESPACE = "http://www.portalfiscal.inf.br/nfe"
const APPLICATION = "ETD-LOCAL-SEFAZ_4.00"

const ANSWERED: ReadonlyArray<SefazService> = [
  "NfeAutorizacao",
  "NfeRetAutorizacao",
  "NfeConsultaProtocolo",
  "NfeStatusServico",
  "RecepcaoEvento",
  "NfeInutilizacao"
]
const PATHS: Readonly<Record<string, SefazService>> = Object.fromEntries(
  ANSWERED.map((service) => [`/ws/${SERVICE_FILES[service]}`, service])
)

export interface AuthorizedNote extends ReviewedNote {
  readonly protocol: string
  readonly authorizedAt: Date
  /** The signed note as received. */
  readonly nfeXml: string
  /** Its `protNFe`. */
  readonly protocolXml: string
  /** Its cancellation (event 110111), once registered: the event's protocol, when, and the signed event. */
  cancellation?: { readonly protocol: string; readonly at: Date; readonly eventXml: string }
  /** Its correction letters (event 110110), in the order registered. */
  readonly corrections: Array<{
    readonly sequence: number
    readonly protocol: string
    readonly at: Date
    readonly eventXml: string
  }>
}

export interface LocalSefazOptions {
  readonly port?: number | undefined
  readonly host?: string | undefined
  /** The environment this instance stands for. Default `test` (homologation). */
  readonly environment?: Environment | undefined
  /** How many calls of a `simulate:unavailable` note answer 503 before it is processed. Default 2. */
  readonly unavailableTimes?: number | undefined
  /** How long a `simulate:timeout` note's answer is held back. Default 30 s. */
  readonly timeoutAfterMs?: number | undefined
  /** How long after its authorization a note may be cancelled (then 501); default: no deadline. */
  readonly cancellationDeadlineMs?: number | undefined
  /** Certificates a client certificate must chain to; default: any client certificate is taken. */
  readonly clientRoots?: ReadonlyArray<string> | undefined
}

export interface LocalSefaz {
  /** https://127.0.0.1:PORT */
  readonly origin: string
  readonly environment: Environment
  /** The CA of its server certificate: what a client must trust. */
  readonly caPem: string
  /** The address of one of its services. */
  readonly addressOf: (service: SefazService) => string
  /** Every note authorized so far, in order. */
  readonly notes: () => ReadonlyArray<AuthorizedNote>
  /** Every range voided so far, in order. */
  readonly voided: () => ReadonlyArray<VoidedRange>
  /** Calls per service, 503s included. */
  readonly counts: () => Readonly<Partial<Record<SefazService, number>>>
  /** What the status service answers from now on: 107 in operation (the start), 108 or 109 paused. */
  readonly setServiceStatus: (code: "107" | "108" | "109") => void
  readonly close: () => Promise<void>
}

/** How long after its emission an offline NFC-e may arrive before its authorization is late (150). */
const OFFLINE_DEADLINE_MS = 24 * 60 * 60 * 1000

const NOT_FOUND_PAGE = "<html><body><h1>404 - File or directory not found.</h1></body></html>"
const UNAVAILABLE_PAGE = "<html><body><h1>503 Service Unavailable</h1></body></html>"
const FORBIDDEN_PAGE = "<html><body><h1>403.7 - Client certificate required.</h1></body></html>"

/** The first element of a name in a document, as its own XML (the note keeps its bytes for the signature). */
const elementXml = (xml: string, name: string): string | null => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return null
  return parsed.success.getElementsByTagNameNS(NFE_NAMESPACE, name).item(0)?.toString() ?? null
}

const textOf = (xml: string, name: string): string | null => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return null
  return parsed.success.getElementsByTagNameNS(NFE_NAMESPACE, name).item(0)?.textContent ?? null
}

export const startLocalSefaz = async (options: LocalSefazOptions = {}): Promise<LocalSefaz> => {
  await Promise.all([loadNfeSchemas(), loadCancellationSchemas(), loadEventSchemas(), loadVoidingSchemas()])
  const keys = localAuthorityKeys()
  const environment = options.environment ?? "test"
  const unavailableTimes = Math.max(0, options.unavailableTimes ?? 2)
  const timeoutAfterMs = options.timeoutAfterMs ?? 30_000
  const authorized: Array<AuthorizedNote> = []
  const byNumber = new Map<string, AuthorizedNote>()
  const unavailableSeen = new Map<string, number>()
  const counts: Partial<Record<SefazService, number>> = {}
  const held = new Set<NodeJS.Timeout>()
  const sockets = new Set<Socket>()
  let sequence = 0

  const numberKey = (note: ReviewedNote) =>
    `${note.model}:${note.stateCode}:${note.issuerTaxId}:${note.series}:${note.number}`

  const protocolFor = (stateCode: string, at: Date) =>
    `1${stateCode}${String(at.getUTCFullYear()).slice(2)}${String(++sequence).padStart(10, "0")}`
  const protocolOf = (note: ReviewedNote, at: Date) => protocolFor(note.stateCode, at)

  const voiding = makeLocalVoiding({
    environment,
    application: APPLICATION,
    usedKeys: () => authorized.map((note) => note.accessKey),
    protocolFor
  })

  /** Batches of `simulate:async` notes, by receipt: taken to process apart (103). */
  const receipts = new Map<string, { readonly protocol: NoteProtocol; readonly stateCode: string; asked: number }>()

  type Decision =
    | { readonly kind: "answer"; readonly xml: string; readonly holdMs?: number }
    | { readonly kind: "unavailable" }

  const authorize = (message: string, at: Date): Decision => {
    if (Result.isFailure(validateNfe("enviNFe", message))) {
      const state = textOf(message, "cUF") ?? "35"
      return {
        kind: "answer",
        xml: batchRefusal(environment, APPLICATION, state, at, "225", "Rejeição: Falha no Schema XML do lote de NFe")
      }
    }
    const nfe = elementXml(message, "NFe")!
    const review = reviewNote(nfe, environment)
    const answer = (protocol: NoteProtocol, stateCode: string, holdMs?: number): Decision => ({
      kind: "answer",
      xml: authorizationAnswer(protocol, stateCode),
      ...(holdMs === undefined ? {} : { holdMs })
    })
    const stateCode = textOf(nfe, "cUF") ?? "35"
    // The schema has checked the Id's form: its 44 characters are a key, if not this note's.
    const accessKey = /Id="NFe([0-9A-Z]{44})"/.exec(nfe)?.[1] ?? ""
    const base = { environment, application: APPLICATION, accessKey, receivedAt: at }
    if (Result.isFailure(review)) return answer({ ...base, ...review.failure }, stateCode)
    const note = review.success
    if (note.notes.includes(MagicValues.offline) && note.emissionType === "1") {
      // Its online note meets a paused service; the same sale issued offline (tpEmis 9) gets through.
      const paused = "Serviço Paralisado Momentaneamente (curto prazo) (simulate:offline)"
      return { kind: "answer", xml: batchRefusal(environment, APPLICATION, stateCode, at, "108", paused) }
    }
    if (note.notes.includes(MagicValues.unavailable)) {
      const seen = unavailableSeen.get(note.accessKey) ?? 0
      if (seen < unavailableTimes) {
        unavailableSeen.set(note.accessKey, seen + 1)
        return { kind: "unavailable" }
      }
    }
    const existing = byNumber.get(numberKey(note))
    if (existing !== undefined) return answer({ ...base, ...duplicityOf(existing, note) }, stateCode)
    if (note.notes.includes(MagicValues.reject)) {
      return answer({ ...base, status: "999", reason: "Rejeição: Erro não catalogado (simulate:reject)" }, stateCode)
    }
    // An NFC-e issued offline and received more than a day after its emission is authorized late (150).
    const late = note.emissionType === "9" &&
      at.getTime() - Date.parse(textOf(nfe, "dhEmi") ?? "") > OFFLINE_DEADLINE_MS
    const protocol: NoteProtocol = {
      ...base,
      protocol: protocolOf(note, at),
      digestValue: note.digestValue,
      status: late ? AUTHORIZED_LATE : AUTHORIZED,
      reason: late ? AUTHORIZED_LATE_REASON : AUTHORIZED_REASON
    }
    const record: AuthorizedNote = {
      ...note,
      protocol: protocol.protocol!,
      authorizedAt: at,
      nfeXml: nfe,
      protocolXml: protocolElement(protocol),
      corrections: []
    }
    authorized.push(record)
    byNumber.set(numberKey(note), record)
    if (note.notes.includes(MagicValues.async)) {
      const receipt = `${stateCode}${String(++sequence).padStart(13, "0")}`
      receipts.set(receipt, { protocol, stateCode, asked: 0 })
      return { kind: "answer", xml: receivedAnswer(environment, APPLICATION, stateCode, at, receipt) }
    }
    return answer(protocol, stateCode, note.notes.includes(MagicValues.timeout) ? timeoutAfterMs : undefined)
  }

  /** A receipt's batch: processing at the first ask, processed with the note's protocol after. */
  const receiptOf = (message: string, at: Date): Decision => {
    const receipt = textOf(message, "nRec") ?? ""
    const batch = receipts.get(receipt)
    if (batch === undefined) {
      return { kind: "answer", xml: receiptAnswer(environment, APPLICATION, "35", at, receipt, "unknown") }
    }
    batch.asked += 1
    const outcome = batch.asked === 1 ? "processing" as const : batch.protocol
    return { kind: "answer", xml: receiptAnswer(environment, APPLICATION, batch.stateCode, at, receipt, outcome) }
  }

  const lookup = (message: string, at: Date): Decision => {
    if (Result.isFailure(validateNfe("consSitNFe", message))) {
      return { kind: "answer", xml: lookupAnswer(environment, APPLICATION, "35", at, "0".repeat(44), null) }
    }
    const accessKey = textOf(message, "chNFe")!
    const found = authorized.find((note) => note.accessKey === accessKey)
    return {
      kind: "answer",
      xml: lookupAnswer(
        environment,
        APPLICATION,
        accessKey.slice(0, 2),
        at,
        accessKey,
        found?.protocolXml ?? null,
        found?.cancellation !== undefined,
        found?.protocolXml.includes(`<cStat>${AUTHORIZED_LATE}</cStat>`) ?? false
      )
    }
  }

  /** A correction letter (110110) of a note found: numbered, not of a cancelled note, then registered. */
  const registerCorrection = (
    note: AuthorizedNote,
    event: string,
    at: Date,
    outcome: (status: string, reason: string, protocol?: string) => Decision
  ): Decision => {
    if (note.cancellation !== undefined) {
      return outcome("218", "Rejeição: NF-e já está cancelada na base de dados da SEFAZ")
    }
    if (note.accessKey.slice(20, 22) !== "55") {
      return outcome("490", "Rejeição: Evento não permitido para NFC-e")
    }
    const sequence = Number(textOf(event, "nSeqEvento"))
    if (note.corrections.some((correction) => correction.sequence === sequence)) {
      return outcome("573", "Rejeição: Duplicidade de Evento")
    }
    const protocol = protocolOf(note, at)
    note.corrections.push({ sequence, protocol, at, eventXml: event })
    return outcome("135", "Evento registrado e vinculado a NF-e", protocol)
  }

  /** Events: the cancellation (110111) and the correction letter (110110), checked as a SEFAZ checks them. */
  const registerEvent = (message: string, at: Date): Decision => {
    const refuseBatch = (status: string, reason: string): Decision => ({
      kind: "answer",
      xml: eventBatchRefusal(environment, APPLICATION, textOf(message, "cOrgao") ?? "35", status, reason)
    })
    const type = textOf(message, "tpEvento")
    const valid = type === CORRECTION_EVENT
      ? validateEvent("envEvento", message)
      : validateCancellation("envEvento", message)
    if (Result.isFailure(valid)) return refuseBatch("215", "Rejeição: Falha no schema XML")
    if (type === CORRECTION_EVENT && textOf(message, "xCondUso") !== CORRECTION_CONDITIONS) {
      return refuseBatch("215", "Rejeição: Falha no schema XML (xCondUso)")
    }
    const event = elementXml(message, "evento")!
    if (Result.isFailure(verifyEnveloped(event, "nfeEvent"))) {
      return refuseBatch("297", "Rejeição: Assinatura difere do calculado")
    }
    const accessKey = textOf(event, "chNFe")!
    const batchId = textOf(message, "idLote") ?? "0"
    const answeredEvent = type === CORRECTION_EVENT
      ? { type, sequence: Number(textOf(event, "nSeqEvento")), registered: "Carta de Correcao registrada" }
      : undefined
    const outcome = (status: string, reason: string, protocol?: string): Decision => ({
      kind: "answer",
      xml: eventAnswer(batchId, {
        environment,
        application: APPLICATION,
        accessKey,
        at,
        status,
        reason,
        protocol,
        event: answeredEvent
      })
    })
    const note = authorized.find((candidate) => candidate.accessKey === accessKey)
    if (note === undefined) return outcome("217", "Rejeição: NF-e não consta na base de dados da SEFAZ")
    if (type === CORRECTION_EVENT) return registerCorrection(note, event, at, outcome)
    if (note.cancellation !== undefined) return outcome("573", "Rejeição: Duplicidade de Evento")
    if (textOf(event, "nProt") !== note.protocol) {
      return outcome("222", "Rejeição: Protocolo de Autorização de Uso difere do cadastrado")
    }
    const late = options.cancellationDeadlineMs !== undefined &&
      at.getTime() - note.authorizedAt.getTime() > options.cancellationDeadlineMs
    if (late || note.notes.includes(MagicValues.cancelReject)) {
      return outcome("501", "Rejeição: Prazo de cancelamento superior ao previsto na Legislação")
    }
    const protocol = protocolOf(note, at)
    note.cancellation = { protocol, at, eventXml: event }
    return outcome("135", "Evento registrado e vinculado a NF-e", protocol)
  }

  let serviceStatus: "107" | "108" | "109" = IN_OPERATION
  const STATUS_REASONS = {
    "107": "Serviço em Operação",
    "108": "Serviço Paralisado Momentaneamente (curto prazo)",
    "109": "Serviço Paralisado sem Previsão"
  } as const
  const status = (message: string, at: Date): Decision => ({
    kind: "answer",
    xml: statusAnswer(
      environment,
      APPLICATION,
      textOf(message, "cUF") ?? "35",
      at,
      serviceStatus,
      STATUS_REASONS[serviceStatus]
    )
  })

  const send = (response: ServerResponse, statusCode: number, contentType: string, body: string) => {
    response.writeHead(statusCode, { "content-type": contentType, "content-length": Buffer.byteLength(body) })
    response.end(body)
  }

  const readBody = (request: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      request.on("error", reject)
    })

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const service = request.method === "POST" ? PATHS[new URL(request.url ?? "/", "https://x").pathname] : undefined
    if (service === undefined) return send(response, 404, "text/html", NOT_FOUND_PAGE)
    counts[service] = (counts[service] ?? 0) + 1
    const socket = request.socket as TLSSocket
    const peer = socket.getPeerCertificate(false)
    if (peer?.raw === undefined || (options.clientRoots !== undefined && !socket.authorized)) {
      return send(response, 403, "text/html", FORBIDDEN_PAGE)
    }
    const body = await readBody(request)
    const at = new Date()
    const content = soapContent(body)
    if (Result.isFailure(content)) return send(response, 400, "text/html", NOT_FOUND_PAGE)
    const decision = service === "NfeAutorizacao"
      ? authorize(content.success, at)
      : service === "NfeRetAutorizacao"
      ? receiptOf(content.success, at)
      : service === "NfeConsultaProtocolo"
      ? lookup(content.success, at)
      : service === "RecepcaoEvento"
      ? registerEvent(content.success, at)
      : service === "NfeInutilizacao"
      ? { kind: "answer" as const, xml: voiding.answer(content.success, at) }
      : status(content.success, at)
    if (decision.kind === "unavailable") return send(response, 503, "text/html", UNAVAILABLE_PAGE)
    const envelope = soapResponse(service, decision.xml)
    if (decision.holdMs === undefined) return send(response, 200, "application/soap+xml; charset=utf-8", envelope)
    const timer = setTimeout(() => {
      held.delete(timer)
      if (!response.destroyed) send(response, 200, "application/soap+xml; charset=utf-8", envelope)
    }, decision.holdMs)
    held.add(timer)
  }

  const server: Server = createServer(
    mutualTlsOptions(keys.server, options.clientRoots),
    (request, response) => {
      handle(request, response).catch(() => {
        if (!response.headersSent) send(response, 500, "text/html", UNAVAILABLE_PAGE)
        else response.destroy()
      })
    }
  )
  server.on("secureConnection", (socket: TLSSocket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("tlsClientError", () => undefined)
  const { origin } = await listenOn(server, options.port, options.host)
  let closing: Promise<void> | undefined
  return {
    origin,
    environment,
    caPem: keys.caCertificatePem,
    addressOf: (service) => {
      const path = Object.entries(PATHS).find(([, named]) => named === service)?.[0]
      if (path === undefined) throw new Error(`the local SEFAZ has no ${service} yet`)
      return `${origin}${path}`
    },
    notes: () => [...authorized],
    voided: voiding.voided,
    counts: () => ({ ...counts }),
    setServiceStatus: (code) => void (serviceStatus = code),
    close: () =>
      closing ??= new Promise<void>((resolve) => {
        for (const timer of held) clearTimeout(timer)
        held.clear()
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
        server.closeAllConnections()
      })
  }
}
