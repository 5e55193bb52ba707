/**
 * The national system's side of the local authority (LocalAuthority.ts is its transport): an
 * in-memory SEFIN Nacional for ONE environment that receives DPS and cancellation requests,
 * checks them as the real one does, issues signed NFS-e and events, and answers queries and
 * DANFSe requests. No TLS, no sockets: every operation takes the request's body or path parameter
 * and the caller's certificate tax id and returns the answer, so the rules read top to bottom.
 *
 * `POST /nfse` checks, in order (the first failure answers):
 *  1. the body is JSON with a string `dpsXmlGZipB64` (else ASP.NET's model-binding 400);
 *  2. base64 + gzip + UTF-8 decode (E1226);
 *  3. the DPS XSD (E1235, libxml2's messages in `Complemento`);
 *  4. the enveloped signature over infDPS (E0714; none at all: E0717);
 *  5. the signing certificate's CNPJ/CPF is the DPS issuer's (400 E0718), and so is the TLS client
 *     certificate's (403 E0718: the transmission certificate is not the issuer's);
 *  6. tpAmb is this system's environment (E0006);
 *  7. the DPS id was not authorized before (E0014, with `idDPS`); a substitute's `subst` names a
 *     note of this system (E0044), of the same issuer (E0042), neither cancelled nor replaced (E0046);
 *  8. the magic values of SPEC §7 in the DPS's notes (xInfComp): `simulate:reject` → E0310,
 *     `simulate:unavailable` → 503 for the first `unavailableTimes` submits of that DPS id,
 *     `simulate:timeout` → authorized, but the answer is held back (the transport's `timeoutAfter`);
 *  9. authorize: NFS-e number, access key, the NFS-e built around the signed DPS and signed with the
 *     authority's own certificate (exclusive C14N with comments, RSA-SHA256), 201.
 *
 * Authorizing a substitute registers e105102 on the original, as the national system does.
 *
 * `POST /nfse/{chave}/eventos` (cancellation e101101, analysis request e101103): JSON, decode
 * (E1226), the request's form (`eventForm`, the other is E1235 naming `nPedRegEvento`), the
 * pedRegEvento XSD (E1235), signature over infPedReg (E1980; none at all: E1989), one of those two
 * events (E0801), the request's chNFSe is the path's (E0829), the NFS-e exists (E2401), signer is
 * its issuer (E1991) and so is the client (401 E2403), tpAmb (E0006), not cancelled or replaced yet
 * (E0840, E0848 for an analysis request); a cancellation past the deadline
 * (`cancellationDeadlineMs`, or `simulate:cancel-reject` in the note's notes) → E0822; an analysis
 * request only past it (E0905) and while none awaits the municipality (E0848). Then the event
 * is built, signed by the authority and recorded. `GET /nfse/{chave}/eventos/{tipo}/{seq}` answers
 * the note's events, and decides a pending analysis when its decision is asked for.
 *
 * Queries answer only the taxpayer whose document it is (403 E2403 otherwise), as the real
 * system lets a certificate see its own documents only.
 */
import { Result } from "effect"
import { randomInt } from "node:crypto"
import { gunzipSync, gzipSync } from "node:zlib"
import { renderNfseXml } from "../../src/authority/danfse/Danfse.js"
import { buildAccessKey, yearMonthOf } from "../../src/authority/sefin/AccessKey.js"
import {
  ANALYSIS_GRANTED_EVENT_TYPE,
  ANALYSIS_REFUSED_EVENT_TYPE,
  ANALYSIS_REQUEST_EVENT_TYPE,
  buildAnalysisDecisionRequest,
  buildEvento,
  buildSubstitutionEventRequest,
  CANCELLATION_EVENT_TYPE,
  readCancellationRequest
} from "../../src/authority/sefin/CancellationEvent.js"
import { type ParsedDps, readDps } from "../../src/authority/sefin/DpsRead.js"
import { type EventForm, PRODUCTION_EVENT_FORM, validateEventRequest } from "../../src/authority/sefin/EventRequest.js"
import { buildNfse, type NfseIssuerAddress } from "../../src/authority/sefin/Nfse.js"
import { MagicValues } from "../../src/authority/TaxAuthority.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { validateXml } from "../../src/authority/xml/Xsd.js"
import type { IssuedCertificate } from "./LocalAuthorityKeys.js"
import { reformRefusals } from "./ReformRules.js"
import {
  APPLICATION_VERSION,
  dpsFound,
  dpsNotFound,
  type EnvironmentCode,
  eventRefused,
  eventRegistered,
  LocalAuthorityCodes,
  modelBindingProblem,
  nfseCreated,
  nfseFound,
  queryRefused,
  type Refusal,
  refusal,
  submitRefused,
  UNAVAILABLE_PAGE
} from "./SefinAnswers.js"
import { valueRefusals } from "./ValueRules.js"

export interface Cancellation {
  /** The signed pedRegEvento as received. */
  readonly requestXml: string
  /** The registered event (evento), signed by the authority. */
  readonly eventXml: string
  readonly processedAt: string
}

/** An event registered on a note, as `GET /nfse/{chave}/eventos/{tipo}/{seq}` answers it. */
export interface RegisteredEvent {
  readonly eventType: string
  readonly sequence: number
  /** The event (evento), signed by the authority. */
  readonly eventXml: string
  readonly processedAt: string
}

export interface AuthorizedNfse {
  readonly dpsId: string
  readonly accessKey: string
  readonly nfseNumber: number
  /** Normalized CNPJ/CPF of the DPS issuer. */
  readonly issuerTaxId: string
  /** The DPS as received (signed). */
  readonly signedDpsXml: string
  /** The NFS-e as answered (signed by the authority). */
  readonly nfseXml: string
  readonly processedAt: string
  /** The DPS's notes (xInfComp), "" when it has none. */
  readonly notes: string
  readonly cancellation: Cancellation | null
  /** When it was authorized: the cancellation deadline runs from here. */
  readonly authorizedAt: Date
  /** The access key of the note that replaced it (its e105102 is in `events`). */
  readonly substitutedBy: string | null
  /** An analysis request (e101103) awaiting the municipality's decision. */
  readonly analysisPending: boolean
  /** Every event registered on it, in order. */
  readonly events: ReadonlyArray<RegisteredEvent>
}

export type Answer =
  | { readonly kind: "json"; readonly status: number; readonly body: unknown }
  | { readonly kind: "page"; readonly status: number; readonly page: string }
  | { readonly kind: "pdf"; readonly status: number; readonly bytes: Uint8Array }

export interface Outcome {
  readonly answer: Answer
  /** The XML document the request carried, once decoded. */
  readonly xml?: string | undefined
  /** Authorized, but the answer is held back (`simulate:timeout`). */
  readonly heldBack?: boolean | undefined
}

export interface SefinCall {
  readonly at: Date
  /** dataHoraProcessamento of this call's answer. */
  readonly processedAt: string
  /** Normalized CNPJ/CPF of the TLS client certificate; null when it carries none. */
  readonly clientTaxId: string | null
}

/** What the real system knows of a taxpayer from its register (CNC) and prints on the NFS-e. */
export interface RegisteredTaxpayer {
  readonly name: string
  readonly tradeName?: string | undefined
  readonly address?: NfseIssuerAddress | undefined
  readonly email?: string | undefined
  readonly phone?: string | undefined
}

export interface LocalSefinOptions {
  readonly environment: EnvironmentCode
  readonly unavailableTimes: number
  /** The municipalities' ISS rate, applied when a DPS informs none ("2.00"). */
  readonly issRate: string
  /** Issuers' register entries by normalized CNPJ/CPF; without one the NFS-e says "Não informado". */
  readonly taxpayers?: Readonly<Record<string, RegisteredTaxpayer>> | undefined
  /** Municipality names by IBGE code; default the IBGE table's. */
  readonly municipalityNames?: Readonly<Record<string, string>> | undefined
  /** The authority's own certificate and key, for the NFS-e and events it signs. */
  readonly signer: IssuedCertificate
  /**
   * The event request form it takes (EventRequest.ts); the other is refused with E1235 naming
   * `nPedRegEvento`. Default: the form production takes.
   */
  readonly eventForm?: EventForm | undefined
  /**
   * How long after authorization the issuer may cancel a note itself; later, E0822 (then only the
   * analysis request, e101103). The municipality sets it (E0822's text says so); default: no deadline.
   */
  readonly cancellationDeadlineMs?: number | undefined
}

export interface LocalSefin {
  readonly submitDps: (body: string, call: SefinCall) => Outcome
  readonly findDps: (dpsId: string, call: SefinCall) => Outcome
  readonly getNfse: (accessKey: string, call: SefinCall) => Outcome
  readonly registerEvent: (accessKey: string, body: string, call: SefinCall) => Outcome
  /** Adds or replaces a taxpayer's register entry (the CNC), by normalized CNPJ/CPF. */
  readonly registerTaxpayer: (taxId: string, taxpayer: RegisteredTaxpayer) => void
  readonly findEvent: (accessKey: string, eventType: string, sequence: string, call: SefinCall) => Outcome
  readonly getDanfse: (accessKey: string, call: SefinCall) => Promise<Outcome>
  readonly submissions: () => ReadonlyArray<AuthorizedNfse>
}

/** Decompressed documents larger than this are refused as malformed (a gzip bomb is not a DPS). */
const MAX_XML_BYTES = 2 * 1024 * 1024

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** The municipal tax agent who decides analysis requests here (a valid CPF, of nobody). */
const MUNICIPAL_AGENT_CPF = "52998224725"

/** The E1235 complement when a request comes in the form this authority does not take, naming the element as libxml2 would. */
const formComplaint = (taken: EventForm): string =>
  taken === "without_sequence"
    ? "Element 'nPedRegEvento': This element is not expected. The 'Id' attribute does not match TSIdPedRegEvt " +
      "(\"PRE\" + chave de acesso + tipo de evento, 59 caracteres)."
    : "Missing child element(s): expected is ( nPedRegEvento ). The 'Id' attribute does not match TSIdPedRefEvt " +
      "(\"PRE\" + chave de acesso + tipo de evento + nPedRegEvento, 62 caracteres)."
const ACCESS_KEY = /^[0-9]{50}$/
// DPS + cLocEmi (7) + tpInsc (1 CPF, 2 CNPJ) + tax id (14) + série (5) + nDPS (15).
const DPS_ID = /^DPS[0-9]{7}[12][0-9A-Z]{14}[0-9]{5}[0-9]{15}$/
/** An XML-DSig Signature element, prefixed or not: without one the national system answers "obrigatória". */
const SIGNATURE = /<(?:[\w-]+:)?Signature[\s>]/

const json = (status: number, body: unknown): Answer => ({ kind: "json", status, body })

/** The string field of a JSON object body, or why the body is not what the endpoint binds. */
const bindField = (body: string, field: string): Result.Result<string, Answer> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return Result.fail(json(400, modelBindingProblem("$", "The JSON value could not be converted.")))
  }
  const value = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)[field] : undefined
  if (typeof value !== "string" || value === "") {
    return Result.fail(json(400, modelBindingProblem(field, `The ${field} field is required.`)))
  }
  return Result.succeed(value)
}

/** base64 → gunzip → UTF-8, strictly: anything off is the national system's E1226. */
const decodeCompressed = (value: string): Result.Result<string, string> => {
  const compact = value.replace(/\s+/g, "")
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return Result.fail("o conteúdo não está em base64")
  let xml: Buffer
  try {
    xml = gunzipSync(Buffer.from(compact, "base64"), { maxOutputLength: MAX_XML_BYTES })
  } catch {
    return Result.fail("o conteúdo não está compactado em gzip")
  }
  try {
    return Result.succeed(new TextDecoder("utf-8", { fatal: true }).decode(xml))
  } catch {
    return Result.fail("o conteúdo descompactado não está em UTF-8")
  }
}

export const compressToBase64 = (xml: string): string => gzipSync(Buffer.from(xml, "utf8")).toString("base64")

/** The 14 characters of a tax id as ids and keys carry it (a CPF left-padded with zeros). */
const registration14 = (taxId: string): string => taxId.padStart(14, "0")

const randomDigits = (count: number): string => Array.from({ length: count }, () => String(randomInt(10))).join("")

export const makeLocalSefin = (options: LocalSefinOptions): LocalSefin => {
  const { environment } = options
  const eventForm = options.eventForm ?? PRODUCTION_EVENT_FORM
  const byDpsId = new Map<string, AuthorizedNfse>()
  const byAccessKey = new Map<string, AuthorizedNfse>()
  const authorizedInOrder: Array<AuthorizedNfse> = []
  // Submits seen per DPS id carrying `simulate:unavailable` (the first N answer 503).
  const unavailableAttempts = new Map<string, number>()
  let lastNfseNumber = 0
  let lastEventNumber = 0
  const taxpayers = new Map(Object.entries(options.taxpayers ?? {}))

  const envelope = (call: SefinCall) => ({ environment, processedAt: call.processedAt })
  const signAsAuthority = (xml: string, element: "infNFSe" | "infEvento") =>
    signEnveloped(xml, {
      element,
      privateKeyPem: options.signer.privateKeyPem,
      certificatePem: options.signer.certificatePem,
      withComments: true
    })

  const store = (record: AuthorizedNfse) => {
    byDpsId.set(record.dpsId, record)
    byAccessKey.set(record.accessKey, record)
    const index = authorizedInOrder.findIndex((r) => r.accessKey === record.accessKey)
    if (index < 0) authorizedInOrder.push(record)
    else authorizedInOrder[index] = record
  }

  const submitDps = (body: string, call: SefinCall): Outcome => {
    const field = bindField(body, "dpsXmlGZipB64")
    if (Result.isFailure(field)) return { answer: field.failure }
    const refuse = (
      status: number,
      errors: ReadonlyArray<Refusal>,
      extra: { dpsId?: string; xml?: string } = {}
    ): Outcome => ({
      answer: json(status, submitRefused({ ...envelope(call), dpsId: extra.dpsId, errors })),
      xml: extra.xml
    })

    const decoded = decodeCompressed(field.success)
    if (Result.isFailure(decoded)) {
      return refuse(400, [refusal(LocalAuthorityCodes.malformedCompressed, decoded.failure)])
    }
    const xml = decoded.success

    const valid = validateXml("DPS", xml)
    if (Result.isFailure(valid)) {
      return refuse(400, [refusal(LocalAuthorityCodes.schemaViolation, valid.failure.messages.join("; "))], { xml })
    }
    const read = readDps(xml)
    if (Result.isFailure(read)) {
      return refuse(400, [refusal(LocalAuthorityCodes.schemaViolation, read.failure.message)], { xml })
    }
    const dps = read.success
    const refuseDps = (status: number, errors: ReadonlyArray<Refusal>) => refuse(status, errors, { dpsId: dps.id, xml })

    if (!SIGNATURE.test(xml)) return refuseDps(400, [refusal(LocalAuthorityCodes.unsigned)])
    const signature = verifyEnveloped(xml, "infDPS")
    if (Result.isFailure(signature)) {
      return refuseDps(400, [refusal(LocalAuthorityCodes.signatureInvalid, signature.failure.message)])
    }
    const issuerTaxId = dps.issuer.taxId
    if (signature.success.taxId !== issuerTaxId) {
      return refuseDps(400, [refusal(
        LocalAuthorityCodes.signerIsNotIssuer,
        signature.success.taxId === null
          ? "O certificado da assinatura não contém CNPJ nem CPF."
          : "O CNPJ/CPF do certificado da assinatura difere do emitente da DPS."
      )])
    }
    if (call.clientTaxId !== issuerTaxId) {
      return refuseDps(403, [refusal(
        LocalAuthorityCodes.signerIsNotIssuer,
        "O CNPJ/CPF do certificado de transmissão difere do emitente da DPS."
      )])
    }
    if (dps.tpAmb !== environment) {
      return refuseDps(400, [refusal(LocalAuthorityCodes.environmentMismatch)])
    }
    if (byDpsId.has(dps.id)) return refuseDps(400, [refusal(LocalAuthorityCodes.duplicateDps)])
    const broken = [...valueRefusals(dps, options.issRate), ...reformRefusals(dps, options.issRate)]
    if (broken.length > 0) return refuseDps(400, broken)
    const substitutionRefused = substitutionRefusal(dps)
    if (substitutionRefused !== null) return refuseDps(400, [substitutionRefused])

    const notes = dps.notes ?? ""
    if (notes.includes(MagicValues.reject)) return refuseDps(400, [refusal(LocalAuthorityCodes.rejected)])
    if (notes.includes(MagicValues.unavailable)) {
      const attempts = (unavailableAttempts.get(dps.id) ?? 0) + 1
      unavailableAttempts.set(dps.id, attempts)
      if (attempts <= options.unavailableTimes) {
        return { answer: { kind: "page", status: 503, page: UNAVAILABLE_PAGE }, xml }
      }
    }

    const record = authorize(dps, xml, call)
    return {
      answer: json(
        201,
        nfseCreated({
          ...envelope(call),
          accessKey: record.accessKey,
          nfseXmlGZipB64: compressToBase64(record.nfseXml)
        })
      ),
      xml,
      heldBack: notes.includes(MagicValues.timeout)
    }
  }

  const authorize = (dps: ParsedDps, signedDpsXml: string, call: SefinCall): AuthorizedNfse => {
    const nfseNumber = ++lastNfseNumber
    const accessKey = buildAccessKey({
      municipalityCode: dps.municipalityCode,
      issuerTaxId: dps.issuer.taxId,
      nfseNumber,
      yearMonth: yearMonthOf(dps.competence, call.at),
      randomCode: randomDigits(9)
    })
    const registered = taxpayers.get(dps.issuer.taxId)
    const nfseXml = signAsAuthority(
      buildNfse({
        signedDpsXml,
        dps,
        accessKey,
        nfseNumber,
        processedAt: call.at,
        tpAmb: environment,
        issRate: options.issRate,
        applicationVersion: APPLICATION_VERSION,
        issuerName: registered?.name,
        issuerTradeName: registered?.tradeName,
        issuerAddress: registered?.address,
        issuerEmail: registered?.email,
        issuerPhone: registered?.phone,
        municipalityNames: options.municipalityNames
      }),
      "infNFSe"
    )
    const record: AuthorizedNfse = {
      dpsId: dps.id,
      accessKey,
      nfseNumber,
      issuerTaxId: dps.issuer.taxId,
      signedDpsXml,
      nfseXml,
      processedAt: call.processedAt,
      notes: dps.notes ?? "",
      cancellation: null,
      authorizedAt: call.at,
      substitutedBy: null,
      analysisPending: false,
      events: []
    }
    store(record)
    if (dps.substitution !== undefined) registerSubstitution(dps, record, call)
    return record
  }

  /** The authority's own event on a note, signed by it, recorded with the note. */
  const registerOn = (
    record: AuthorizedNfse,
    requestXml: string,
    call: SefinCall,
    change: Partial<AuthorizedNfse> = {}
  ): string => {
    const parsed = readCancellationRequest(requestXml)
    // Built here from our own builders: not reading it back is the authority's own bug.
    if (Result.isFailure(parsed)) {
      throw new Error(`the local authority cannot read its event: ${parsed.failure.message}`)
    }
    const eventXml = signAsAuthority(
      buildEvento({
        signedRequestXml: requestXml,
        request: parsed.success,
        processedAt: call.at,
        eventNumber: ++lastEventNumber,
        applicationVersion: APPLICATION_VERSION
      }),
      "infEvento"
    )
    const current = byAccessKey.get(record.accessKey) ?? record
    const event = {
      eventType: parsed.success.eventType,
      sequence: parsed.success.sequence,
      eventXml,
      processedAt: call.processedAt
    }
    store({ ...current, ...change, events: [...current.events, event] })
    return eventXml
  }

  /** e105102 on the original, as the national system registers it when it authorizes the substitute. */
  const registerSubstitution = (dps: ParsedDps, substitute: AuthorizedNfse, call: SefinCall) => {
    const substitution = dps.substitution!
    const original = byAccessKey.get(substitution.accessKey)!
    const request = buildSubstitutionEventRequest({
      tpAmb: environment,
      requestedAt: call.at,
      issuerTaxId: original.issuerTaxId,
      accessKey: original.accessKey,
      reasonCode: substitution.reasonCode,
      reason: substitution.reason,
      substituteAccessKey: substitute.accessKey,
      form: eventForm
    })
    registerOn(original, request.xml, call, { substitutedBy: substitute.accessKey, analysisPending: false })
  }

  /** What the national system refuses in a substitute's `subst` group, before it authorizes anything. */
  const substitutionRefusal = (dps: ParsedDps): Refusal | null => {
    const substitution = dps.substitution
    if (substitution === undefined) return null
    const original = byAccessKey.get(substitution.accessKey)
    if (original === undefined) return refusal(LocalAuthorityCodes.substitutedNotFound)
    if (original.issuerTaxId !== dps.issuer.taxId) return refusal(LocalAuthorityCodes.substitutedOtherIssuer)
    if (original.cancellation !== null || original.substitutedBy !== null) {
      return refusal(LocalAuthorityCodes.substitutedNotStanding)
    }
    return null
  }

  const findDps = (dpsId: string, call: SefinCall): Outcome => {
    if (!DPS_ID.test(dpsId)) {
      return {
        answer: json(400, queryRefused({ ...envelope(call), error: refusal(LocalAuthorityCodes.malformedDpsId) }))
      }
    }
    // The id names its issuer: a certificate may ask only about its own DPS.
    if (call.clientTaxId === null || dpsId.slice(11, 25) !== registration14(call.clientTaxId)) {
      return {
        answer: json(403, queryRefused({ ...envelope(call), error: refusal(LocalAuthorityCodes.notYourDocument) }))
      }
    }
    const record = byDpsId.get(dpsId)
    if (record === undefined) return { answer: json(404, dpsNotFound(call.processedAt)) }
    return { answer: json(200, dpsFound({ ...envelope(call), accessKey: record.accessKey })) }
  }

  /** The NFS-e behind a queried key, or the query refusal. */
  const ownNfse = (accessKey: string, call: SefinCall): Result.Result<AuthorizedNfse, Answer> => {
    const refused = (status: number, entry: Parameters<typeof refusal>[0]) =>
      Result.fail(json(status, queryRefused({ ...envelope(call), error: refusal(entry) })))
    if (!ACCESS_KEY.test(accessKey)) return refused(400, LocalAuthorityCodes.malformedAccessKey)
    const record = byAccessKey.get(accessKey)
    if (record === undefined) return refused(404, LocalAuthorityCodes.accessKeyNotFound)
    if (call.clientTaxId !== record.issuerTaxId) return refused(403, LocalAuthorityCodes.notYourDocument)
    return Result.succeed(record)
  }

  const getNfse = (accessKey: string, call: SefinCall): Outcome => {
    const found = ownNfse(accessKey, call)
    if (Result.isFailure(found)) return { answer: found.failure }
    return {
      answer: json(
        200,
        nfseFound({ ...envelope(call), accessKey, nfseXmlGZipB64: compressToBase64(found.success.nfseXml) })
      )
    }
  }

  const registerEvent = (accessKey: string, body: string, call: SefinCall): Outcome => {
    const field = bindField(body, "pedidoRegistroEventoXmlGZipB64")
    if (Result.isFailure(field)) return { answer: field.failure }
    const refuse = (status: number, errors: ReadonlyArray<Refusal>, xml?: string): Outcome => ({
      answer: json(status, eventRefused({ ...envelope(call), errors })),
      xml
    })
    if (!ACCESS_KEY.test(accessKey)) return refuse(400, [refusal(LocalAuthorityCodes.malformedAccessKey)])

    const decoded = decodeCompressed(field.success)
    if (Result.isFailure(decoded)) {
      return refuse(400, [refusal(LocalAuthorityCodes.malformedCompressed, decoded.failure)])
    }
    const xml = decoded.success
    const read = readCancellationRequest(xml)
    if (Result.isFailure(read)) {
      return refuse(400, [refusal(LocalAuthorityCodes.schemaViolation, read.failure.message)], xml)
    }
    const request = read.success
    if (request.form !== eventForm) {
      return refuse(400, [refusal(LocalAuthorityCodes.schemaViolation, formComplaint(eventForm))], xml)
    }
    const valid = validateEventRequest(xml)
    if (Result.isFailure(valid)) {
      return refuse(400, [refusal(LocalAuthorityCodes.schemaViolation, valid.failure.messages.join("; "))], xml)
    }

    if (!SIGNATURE.test(xml)) return refuse(400, [refusal(LocalAuthorityCodes.eventUnsigned)], xml)
    const signature = verifyEnveloped(xml, "infPedReg")
    if (Result.isFailure(signature)) {
      return refuse(400, [refusal(LocalAuthorityCodes.eventSignatureInvalid, signature.failure.message)], xml)
    }
    const analysis = request.eventType === ANALYSIS_REQUEST_EVENT_TYPE
    if (request.eventType !== CANCELLATION_EVENT_TYPE && !analysis) {
      return refuse(400, [refusal(LocalAuthorityCodes.eventTypeNotSupported)], xml)
    }
    if (request.accessKey !== accessKey) return refuse(400, [refusal(LocalAuthorityCodes.eventKeyMismatch)], xml)
    const record = byAccessKey.get(accessKey)
    if (record === undefined) return refuse(400, [refusal(LocalAuthorityCodes.accessKeyNotFound)], xml)
    if (signature.success.taxId !== record.issuerTaxId) {
      return refuse(400, [refusal(
        LocalAuthorityCodes.eventSignerIsNotIssuer,
        "O CNPJ/CPF do certificado da assinatura difere do emitente da NFS-e."
      )], xml)
    }
    if (call.clientTaxId !== record.issuerTaxId) return refuse(401, [refusal(LocalAuthorityCodes.notYourDocument)], xml)
    if (request.tpAmb !== environment) return refuse(400, [refusal(LocalAuthorityCodes.environmentMismatch)], xml)
    if (record.cancellation !== null || record.substitutedBy !== null) {
      const blocked = analysis ? LocalAuthorityCodes.analysisOnCancelled : LocalAuthorityCodes.alreadyCancelled
      return refuse(400, [refusal(blocked)], xml)
    }
    const pastDeadline = record.notes.includes(MagicValues.cancelReject) ||
      (options.cancellationDeadlineMs !== undefined &&
        call.at.getTime() - record.authorizedAt.getTime() > options.cancellationDeadlineMs)
    if (analysis) {
      if (record.analysisPending) return refuse(400, [refusal(LocalAuthorityCodes.analysisPending)], xml)
      if (!pastDeadline) return refuse(400, [refusal(LocalAuthorityCodes.analysisWithinDeadline)], xml)
      const eventXml = registerOn(record, xml, call, { analysisPending: true })
      return {
        answer: json(201, eventRegistered({ ...envelope(call), eventoXmlGZipB64: compressToBase64(eventXml) })),
        xml
      }
    }
    if (pastDeadline) return refuse(400, [refusal(LocalAuthorityCodes.cancellationRefused)], xml)

    const eventXml = registerOn(record, xml, call)
    store({
      ...byAccessKey.get(accessKey)!,
      cancellation: { requestXml: xml, eventXml, processedAt: call.processedAt }
    })
    return {
      answer: json(201, eventRegistered({ ...envelope(call), eventoXmlGZipB64: compressToBase64(eventXml) })),
      xml
    }
  }

  /**
   * The municipality decides a pending analysis request when its decision is first asked for:
   * granted (e105104, the note is cancelled), or refused (e105105) when the note's notes carry
   * `simulate:analysis-refuse`. Its agent's CPF authors the event.
   */
  const decideAnalysis = (record: AuthorizedNfse, call: SefinCall) => {
    const granted = !record.notes.includes(MagicValues.analysisRefuse)
    const request = buildAnalysisDecisionRequest({
      tpAmb: environment,
      decidedAt: call.at,
      agentCpf: MUNICIPAL_AGENT_CPF,
      accessKey: record.accessKey,
      granted,
      reason: granted
        ? "Cancelamento deferido apos analise fiscal do municipio."
        : "Cancelamento indeferido apos analise fiscal do municipio.",
      form: eventForm
    })
    const eventXml = registerOn(record, request.xml, call, { analysisPending: false })
    if (granted) {
      store({
        ...byAccessKey.get(record.accessKey)!,
        cancellation: { requestXml: request.xml, eventXml, processedAt: call.processedAt }
      })
    }
  }

  /** `GET /nfse/{chave}/eventos/{tipo}/{seq}`, answered as produção restrita does (a list; `{}` 404 when none). */
  const findEvent = (accessKey: string, eventType: string, sequence: string, call: SefinCall): Outcome => {
    const found = ownNfse(accessKey, call)
    if (Result.isFailure(found)) return { answer: found.failure }
    if (
      found.success.analysisPending &&
      (eventType === ANALYSIS_GRANTED_EVENT_TYPE || eventType === ANALYSIS_REFUSED_EVENT_TYPE)
    ) {
      decideAnalysis(found.success, call)
    }
    const record = byAccessKey.get(accessKey)!
    const events = record.events.filter((e) => e.eventType === eventType && String(e.sequence) === sequence)
    if (events.length === 0) return { answer: json(404, {}) }
    return {
      answer: json(200, {
        ...envelope(call),
        eventos: events.map((e) => ({
          chaveAcesso: accessKey,
          tipoEvento: Number(e.eventType),
          numeroPedidoRegistroEvento: e.sequence,
          dataHoraRecebimento: e.processedAt,
          arquivoXml: compressToBase64(e.eventXml)
        }))
      })
    }
  }

  const getDanfse = async (accessKey: string, call: SefinCall): Promise<Outcome> => {
    const found = ownNfse(accessKey, call)
    if (Result.isFailure(found)) return { answer: found.failure }
    const bytes = await renderNfseXml(found.success.nfseXml, {
      cancelled: found.success.cancellation !== null,
      substituted: found.success.substitutedBy !== null
    })
    return { answer: { kind: "pdf", status: 200, bytes } }
  }

  return {
    submitDps,
    findDps,
    getNfse,
    registerEvent,
    findEvent,
    getDanfse,
    registerTaxpayer: (taxId, taxpayer) => void taxpayers.set(taxId, taxpayer),
    submissions: () => [...authorizedInOrder]
  }
}
