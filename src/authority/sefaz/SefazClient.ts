/**
 * The client of a state authority (SEFAZ) for one goods invoice: the note built, signed with the
 * tenant's certificate and validated before it leaves (SignedNote.ts: a failure is our bug,
 * `NoteNotValid`, never sent); then the
 * SOAP exchanges over mutual TLS with the authorizer of the emitter's state: authorization
 * (synchronous, or by receipt when the authority takes the batch to process apart), the protocol lookup by access key, the events (cancellation, correction letter),
 * number voiding and the status service.
 *
 * A note is rebuilt identically at every attempt (NfeXml.ts: its key from the document's id, RSA
 * signatures deterministic), so after a timeout the lookup asks about the very key that may have
 * been authorized, and a note sent again is the same note: the authority's "duplicity" (204) is
 * answered by adopting the authorization it already has, never by a second note.
 */
import { Duration, Effect, Option, Redacted, Result } from "effect"
import type { Environment } from "../../domain/Principal.js"
import type {
  GoodsAuthorization,
  GoodsCancellation,
  GoodsCorrection,
  GoodsVoiding,
  GoodsVoidingRequest
} from "../GoodsAuthority.js"
import type { ClientIdentity, Exchange } from "../sefin/SefinTransport.js"
import { AuthorityRejected, AuthorityTimeout, AuthorityUnavailable } from "../TaxAuthority.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import { parseXml } from "../xml/XmlText.js"
import type { NfeModel } from "./NfeAccessKey.js"
import {
  cancellationEvent,
  EVENT_DUPLICATE,
  EVENT_REGISTERED,
  eventBatch,
  validateCancellation
} from "./NfeCancellation.js"
import { correctionEvent, validateEvent } from "./NfeCorrection.js"
import {
  authorizationRequest,
  AUTHORIZED,
  CANCELLED,
  IN_OPERATION,
  lookupRequest,
  NOT_FOUND,
  PROCESSED,
  processedNote,
  PROCESSING,
  receiptRequest,
  RECEIVED,
  statusRequest
} from "./NfeProtocol.js"
import { validateVoiding, VOIDING_DUPLICATE, VOIDING_REGISTERED, voidingInputOf, voidingRequest } from "./NfeVoiding.js"
import { NFE_NAMESPACE, type NfeInput } from "./NfeXml.js"
import { sefazAddress, type SefazService } from "./SefazAddresses.js"
import { soapContent, soapRequest } from "./SefazSoap.js"
import { modelOf, NoteNotValid, signedNote } from "./SignedNote.js"

/** What the authority needs of a goods document to authorize it: what its note is built from. */
export type GoodsSubmission = NfeInput

export interface ServiceStatus {
  readonly inOperation: boolean
  readonly code: string
  readonly reason: string
}

export interface SefazClientOptions {
  readonly exchange: Exchange
  /** How long an exchange may take before its outcome is unknown (AuthorityTimeout). */
  readonly timeout: Duration.Input
  /** Where a service of a state's authorizer answers; default the published addresses (SefazAddresses.ts). */
  readonly addressOf?: (model: NfeModel, state: string, environment: Environment, service: SefazService) => string
}

/** A batch's id (idLote, up to 15 digits), drawn from the document's id: the same at every attempt. */
const batchIdOf = (documentId: string): string => documentId.replace(/[^0-9]/g, "").slice(-15) || "1"

// The authorities' "paused" answers (108 short term, 109 without forecast): try again later.
const PAUSED: ReadonlySet<string> = new Set(["108", "109"])
const DUPLICATE = "204"
/** How long to wait before each ask of a batch's receipt; the manual suggests the answer's `tMed`, about a second. */
const RECEIPT_PAUSES = [Duration.millis(500), Duration.seconds(1), Duration.seconds(2)]

/** An answer's document, parsed once: the texts and elements of a name, in document order. */
interface AnswerReader {
  readonly texts: (name: string) => Array<string>
  readonly element: (name: string) => string | undefined
}

const readerOf = (xml: string): AnswerReader => {
  const parsed = parseXml(xml)
  const all = (name: string) =>
    Result.isFailure(parsed) ? [] : Array.from(parsed.success.getElementsByTagNameNS(NFE_NAMESPACE, name))
  return {
    texts: (name) => all(name).map((element) => element.textContent ?? ""),
    element: (name) => all(name)[0]?.toString()
  }
}

/** Where a call goes: the authorizer of a state's notes of a model, in an environment. */
interface Addressee {
  readonly model: NfeModel
  readonly state: string
  readonly environment: Environment
}

export const makeSefazClient = (options: SefazClientOptions) => {
  const addressOf = options.addressOf ?? sefazAddress
  const timeoutMs = Duration.toMillis(options.timeout)

  /** The signed note of a submission, signed with the tenant's certificate: the same bytes at every call. */
  const prepare = (submission: GoodsSubmission, identity: ClientIdentity) =>
    signedNote(submission, {
      privateKeyPem: Redacted.value(identity.privateKeyPem),
      certificatePem: identity.certificatePem
    })

  /** One SOAP exchange; its document, or why there is none (transient: the outcome is unknown or nothing happened). */
  const call = (
    identity: ClientIdentity,
    to: Addressee,
    service: SefazService,
    message: string
  ): Effect.Effect<AnswerReader, AuthorityUnavailable | AuthorityTimeout> =>
    options.exchange(identity, {
      method: "POST",
      url: addressOf(to.model, to.state, to.environment, service),
      text: soapRequest(service, message),
      accept: "application/soap+xml",
      traceparent: null
    }).pipe(
      Effect.mapError((failure) => new AuthorityUnavailable({ message: failure.message, status: failure.status })),
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () => Effect.fail(new AuthorityTimeout({ message: `the SEFAZ did not answer within ${timeoutMs} ms` }))
      }),
      Effect.flatMap((answer) => {
        if (answer.status !== 200) {
          return Effect.fail(
            new AuthorityUnavailable({ message: `the SEFAZ answered HTTP ${answer.status}`, status: answer.status })
          )
        }
        const content = soapContent(answer.body.toString("utf8"))
        return Result.isFailure(content)
          ? Effect.fail(new AuthorityUnavailable({ message: `the SEFAZ's answer is not usable: ${content.failure}` }))
          : Effect.succeed(readerOf(content.success))
      })
    )

  const authorizationOf = (note: string, accessKey: string, answer: AnswerReader): GoodsAuthorization | undefined => {
    const protocolXml = answer.element("protNFe")
    const [protocol] = answer.texts("nProt")
    if (protocolXml === undefined || protocol === undefined) return undefined
    const [receivedAt] = readerOf(protocolXml).texts("dhRecbto")
    return {
      accessKey,
      protocol,
      authorizedAt: new Date(receivedAt ?? Date.now()),
      xml: processedNote(note, protocolXml)
    }
  }

  type Prepared = Effect.Success<ReturnType<typeof prepare>>

  /** The lookup of a prepared note by its key: its authorization, or None (217). */
  const lookupPrepared = (prepared: Prepared, environment: Environment, identity: ClientIdentity) =>
    Effect.flatMap(
      call(
        identity,
        { ...prepared, environment },
        "NfeConsultaProtocolo",
        lookupRequest(environment, prepared.accessKey)
      ),
      (answer): Effect.Effect<Option.Option<GoodsAuthorization>, AuthorityUnavailable> => {
        const code = answer.texts("cStat")[0] ?? ""
        if (code === NOT_FOUND) return Effect.succeedNone
        // A cancelled note (101) was authorized all the same: its protocol is in the answer.
        const authorization = code === AUTHORIZED || code === CANCELLED
          ? authorizationOf(prepared.note, prepared.accessKey, answer)
          : undefined
        return authorization === undefined
          ? Effect.fail(
            new AuthorityUnavailable({
              message: `the SEFAZ's lookup answered ${code} ${answer.texts("xMotivo")[0] ?? ""}`.trim()
            })
          )
          : Effect.succeedSome(authorization)
      }
    )

  /** What the authority knows of the submission's note: its authorization, or None (217). */
  const lookup = (submission: GoodsSubmission, identity: ClientIdentity) =>
    Effect.flatMap(
      prepare(submission, identity),
      (prepared) => lookupPrepared(prepared, submission.environment, identity)
    )

  /**
   * Sends the note for authorization. A note the authority already authorized (204, a retry after a
   * lost answer) is adopted from its lookup; its other refusals are final.
   */
  /**
   * The note's outcome in an answer that carries its protocol (the synchronous `retEnviNFe`, or the
   * receipt's `retConsReciNFe`): authorized, the duplicity of a note the authority has (adopted
   * through the lookup), or refused with the authority's code.
   */
  const noteOutcome = (
    prepared: Prepared,
    environment: Environment,
    identity: ClientIdentity,
    answer: AnswerReader
  ): Effect.Effect<GoodsAuthorization, AuthorityRejected | AuthorityUnavailable | AuthorityTimeout> => {
    const reasons = answer.texts("xMotivo")
    const [batch = "", noteCode] = answer.texts("cStat")
    if (PAUSED.has(batch)) {
      return Effect.fail(new AuthorityUnavailable({ message: `${batch} ${reasons[0] ?? ""}`.trim() }))
    }
    if (noteCode === undefined) {
      return Effect.fail(new AuthorityRejected({ code: batch, message: reasons[0] ?? "the batch was refused" }))
    }
    if (noteCode === AUTHORIZED) {
      const authorization = authorizationOf(prepared.note, prepared.accessKey, answer)
      return authorization === undefined
        ? Effect.fail(new AuthorityUnavailable({ message: "the SEFAZ authorized the note without a protocol" }))
        : Effect.succeed(authorization)
    }
    if (noteCode === DUPLICATE) {
      return Effect.flatMap(lookupPrepared(prepared, environment, identity), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value)
          : Effect.fail(new AuthorityUnavailable({ message: "204 for a note the lookup does not find" })))
    }
    return Effect.fail(new AuthorityRejected({ code: noteCode, message: reasons[1] ?? "" }))
  }

  /**
   * A batch the authority took to process apart (103): its receipt is asked until processed (104);
   * a receipt that says nothing final is followed by the lookup of the note's key, and a note not
   * found yet is a transient failure (the next attempt asks the key first: never a second note).
   */
  const awaitReceipt = (
    prepared: Prepared,
    environment: Environment,
    identity: ClientIdentity,
    receipt: string
  ): Effect.Effect<GoodsAuthorization, AuthorityRejected | AuthorityUnavailable | AuthorityTimeout> =>
    Effect.gen(function*() {
      for (const pause of RECEIPT_PAUSES) {
        yield* Effect.sleep(pause)
        const answer = yield* call(
          identity,
          { ...prepared, environment },
          "NfeRetAutorizacao",
          receiptRequest(environment, receipt)
        )
        const [batch] = answer.texts("cStat")
        if (batch === PROCESSING) continue
        if (batch === PROCESSED) return yield* noteOutcome(prepared, environment, identity, answer)
        break
      }
      const found = yield* lookupPrepared(prepared, environment, identity)
      if (Option.isSome(found)) return found.value
      return yield* new AuthorityUnavailable({
        message: `receipt ${receipt}: the SEFAZ has not processed the note yet`
      })
    })

  const submit = (submission: GoodsSubmission, identity: ClientIdentity) =>
    Effect.flatMap(prepare(submission, identity), (prepared) =>
      Effect.flatMap(
        call(
          identity,
          { ...prepared, environment: submission.environment },
          "NfeAutorizacao",
          authorizationRequest(batchIdOf(submission.documentId), prepared.note)
        ),
        (answer): Effect.Effect<GoodsAuthorization, AuthorityRejected | AuthorityUnavailable | AuthorityTimeout> => {
          const [batch] = answer.texts("cStat")
          const [receipt] = answer.texts("nRec")
          return batch === RECEIVED && receipt !== undefined
            ? awaitReceipt(prepared, submission.environment, identity, receipt)
            : noteOutcome(prepared, submission.environment, identity, answer)
        }
      ))

  /**
   * Sends one event of a note (built unsigned by `build`), signed with the tenant's key and checked
   * by `valid` first. Registered, it answers the event's protocol and time; the same event
   * registered before (573, its first answer lost) counts as registered, without a protocol.
   */
  const registerEvent = (
    note: GoodsSubmission,
    unsigned: string,
    valid: (batch: string) => Result.Result<void, { readonly messages: ReadonlyArray<string> }>,
    what: string,
    identity: ClientIdentity
  ): Effect.Effect<
    { readonly protocol: string | null; readonly at: Date },
    NoteNotValid | AuthorityRejected | AuthorityUnavailable | AuthorityTimeout
  > =>
    Effect.suspend((): Effect.Effect<
      { readonly protocol: string | null; readonly at: Date },
      NoteNotValid | AuthorityRejected | AuthorityUnavailable | AuthorityTimeout
    > => {
      const event = signEnveloped(unsigned, {
        element: "nfeEvent",
        privateKeyPem: Redacted.value(identity.privateKeyPem),
        certificatePem: identity.certificatePem
      })
      const batch = eventBatch(batchIdOf(note.documentId), event)
      const checked = valid(batch)
      if (Result.isFailure(checked)) {
        return Effect.fail(
          new NoteNotValid({
            message: `the ${what} does not pass the event's schema: ${checked.failure.messages.join("; ")}`
          })
        )
      }
      const to = { model: modelOf(note.request.type), state: note.issuer.address.state, environment: note.environment }
      return Effect.flatMap(
        call(identity, to, "RecepcaoEvento", batch),
        (answer): Effect.Effect<{ protocol: string | null; at: Date }, AuthorityRejected | AuthorityUnavailable> => {
          const [batchCode = "", eventCode] = answer.texts("cStat")
          const reasons = answer.texts("xMotivo")
          if (PAUSED.has(batchCode)) {
            return Effect.fail(new AuthorityUnavailable({ message: `${batchCode} ${reasons[0] ?? ""}`.trim() }))
          }
          if (eventCode === undefined) {
            return Effect.fail(
              new AuthorityRejected({ code: batchCode, message: reasons[0] ?? "the batch was refused" })
            )
          }
          if (EVENT_REGISTERED.has(eventCode)) {
            const [registeredAt] = answer.texts("dhRegEvento")
            return Effect.succeed({
              protocol: answer.texts("nProt")[0] ?? null,
              at: new Date(registeredAt ?? Date.now())
            })
          }
          if (eventCode === EVENT_DUPLICATE) return Effect.succeed({ protocol: null, at: new Date() })
          return Effect.fail(new AuthorityRejected({ code: eventCode, message: reasons[1] ?? "" }))
        }
      )
    })

  /** Registers the cancellation (event 110111) of an authorized note. */
  const cancel = (
    note: GoodsSubmission,
    request: {
      readonly accessKey: string
      readonly protocol: string
      readonly reason: string
      readonly requestedAt: Date
    },
    identity: ClientIdentity
  ): Effect.Effect<GoodsCancellation, NoteNotValid | AuthorityRejected | AuthorityUnavailable | AuthorityTimeout> =>
    Effect.map(
      registerEvent(
        note,
        cancellationEvent({ ...request, environment: note.environment, issuerTaxId: note.issuer.taxId }),
        (batch) => validateCancellation("envEvento", batch),
        "cancellation",
        identity
      ),
      ({ at, protocol }) => ({ protocol, cancelledAt: at })
    )

  /** Registers a correction letter (CC-e, event 110110) of an authorized NF-e. */
  const correct = (
    note: GoodsSubmission,
    request: {
      readonly accessKey: string
      readonly sequence: number
      readonly text: string
      readonly requestedAt: Date
    },
    identity: ClientIdentity
  ): Effect.Effect<GoodsCorrection, NoteNotValid | AuthorityRejected | AuthorityUnavailable | AuthorityTimeout> =>
    Effect.map(
      registerEvent(
        note,
        correctionEvent({ ...request, environment: note.environment, issuerTaxId: note.issuer.taxId }),
        (batch) => validateEvent("envEvento", batch),
        "correction letter",
        identity
      ),
      ({ at, protocol }) => ({ protocol, registeredAt: at })
    )

  /**
   * Voids a range of numbers (inutilização), signed with the tenant's key. The same range voided
   * before (563, its first answer lost) counts as registered.
   */
  const voidNumbers = (
    request: GoodsVoidingRequest,
    identity: ClientIdentity
  ): Effect.Effect<GoodsVoiding, NoteNotValid | AuthorityRejected | AuthorityUnavailable | AuthorityTimeout> =>
    Effect.suspend((): Effect.Effect<
      GoodsVoiding,
      NoteNotValid | AuthorityRejected | AuthorityUnavailable | AuthorityTimeout
    > => {
      const message = signEnveloped(voidingRequest(voidingInputOf(request)), {
        element: "infInut",
        privateKeyPem: Redacted.value(identity.privateKeyPem),
        certificatePem: identity.certificatePem
      })
      const valid = validateVoiding("inutNFe", message)
      if (Result.isFailure(valid)) {
        return Effect.fail(
          new NoteNotValid({ message: `the voiding does not pass its schema: ${valid.failure.messages.join("; ")}` })
        )
      }
      const to = { model: modelOf(request.type), state: request.issuer.address.state, environment: request.environment }
      return Effect.flatMap(
        call(identity, to, "NfeInutilizacao", message),
        (answer): Effect.Effect<GoodsVoiding, AuthorityRejected | AuthorityUnavailable> => {
          const [code = ""] = answer.texts("cStat")
          const [reason = ""] = answer.texts("xMotivo")
          if (PAUSED.has(code)) return Effect.fail(new AuthorityUnavailable({ message: `${code} ${reason}`.trim() }))
          if (code === VOIDING_REGISTERED) {
            const [at] = answer.texts("dhRecbto")
            return Effect.succeed({
              protocol: answer.texts("nProt")[0] ?? null,
              registeredAt: new Date(at ?? Date.now())
            })
          }
          if (code === VOIDING_DUPLICATE) return Effect.succeed({ protocol: null, registeredAt: new Date() })
          return Effect.fail(new AuthorityRejected({ code, message: reason }))
        }
      )
    })

  /** Whether the authorizer of a state's notes of a model is in operation (107). */
  const status = (
    model: NfeModel,
    state: string,
    environment: Environment,
    identity: ClientIdentity,
    stateCode: string
  ) =>
    Effect.map(
      call(identity, { model, state, environment }, "NfeStatusServico", statusRequest(environment, stateCode)),
      (answer): ServiceStatus => {
        const code = answer.texts("cStat")[0] ?? ""
        return { inOperation: code === IN_OPERATION, code, reason: answer.texts("xMotivo")[0] ?? "" }
      }
    )

  return { prepare, submit, lookup, cancel, correct, voidNumbers, status }
}
