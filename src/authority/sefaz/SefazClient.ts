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
import type { GoodsAuthorization } from "../GoodsAuthority.js"
import type { ClientIdentity, Exchange } from "../sefin/SefinTransport.js"
import { AuthorityRejected, AuthorityTimeout, AuthorityUnavailable } from "../TaxAuthority.js"
import type { NfeModel } from "./NfeAccessKey.js"
import {
  authorizationRequest,
  CANCELLED,
  IN_OPERATION,
  isAuthorization,
  lookupRequest,
  NOT_FOUND,
  PROCESSED,
  processedNote,
  PROCESSING,
  receiptRequest,
  RECEIVED,
  statusRequest
} from "./NfeProtocol.js"
import type { NfeInput } from "./NfeXml.js"
import { sefazAddress, type SefazService } from "./SefazAddresses.js"
import { makeSefazEvents } from "./SefazEvents.js"
import { type Addressee, type AnswerReader, batchIdOf, PAUSED, readerOf } from "./SefazExchange.js"
import { soapContent, soapRequest } from "./SefazSoap.js"
import { issuedNote, signedNote } from "./SignedNote.js"

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

const DUPLICATE = "204"
/** How long to wait before each ask of a batch's receipt; the manual suggests the answer's `tMed`, about a second. */
const RECEIPT_PAUSES = [Duration.millis(500), Duration.seconds(1), Duration.seconds(2)]

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
      Effect.mapError((failure) =>
        new AuthorityUnavailable({ message: failure.message, status: failure.status, unreached: failure.unreached })
      ),
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () => Effect.fail(new AuthorityTimeout({ message: `the SEFAZ did not answer within ${timeoutMs} ms` }))
      }),
      Effect.flatMap((answer) => {
        if (answer.status !== 200) {
          return Effect.fail(
            // Even a 503 may come from a proxy after the SEFAZ took the batch: not proof it never arrived.
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
        const authorization = isAuthorization(code) || code === CANCELLED
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
      return Effect.fail(new AuthorityUnavailable({ message: `${batch} ${reasons[0] ?? ""}`.trim(), unreached: true }))
    }
    if (noteCode === undefined) {
      return Effect.fail(new AuthorityRejected({ code: batch, message: reasons[0] ?? "the batch was refused" }))
    }
    if (isAuthorization(noteCode)) {
      const authorization = authorizationOf(prepared.note, prepared.accessKey, answer)
      return authorization === undefined
        ? Effect.fail(new AuthorityUnavailable({ message: "the SEFAZ authorized the note without a protocol" }))
        : Effect.succeed(authorization)
    }
    if (noteCode === DUPLICATE) {
      return Effect.flatMap(
        lookupPrepared(prepared, environment, identity).pipe(Effect.mapError(reached)),
        (found) =>
          Option.isSome(found)
            ? Effect.succeed(found.value)
            : Effect.fail(new AuthorityUnavailable({ message: "204 for a note the lookup does not find" }))
      )
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

  /** The note to send: the one issued offline, as its consumer holds it, or the note built and signed now. */
  const toSend = (submission: GoodsSubmission, identity: ClientIdentity, offlineXml: string | undefined) =>
    offlineXml === undefined ? prepare(submission, identity) : Effect.succeed(issuedNote(submission, offlineXml))

  const submit = (submission: GoodsSubmission, identity: ClientIdentity, offlineXml?: string) =>
    Effect.flatMap(toSend(submission, identity, offlineXml), (prepared) =>
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
            ? awaitReceipt(prepared, submission.environment, identity, receipt).pipe(Effect.mapError(reached))
            : noteOutcome(prepared, submission.environment, identity, answer)
        }
      ))

  /** Once the authority took the batch, a later call's failure (the receipt's, the lookup's) leaves the outcome unknown. */
  const reached = <E>(error: E): E =>
    error instanceof AuthorityUnavailable && error.unreached === true
      ? new AuthorityUnavailable({ message: error.message, status: error.status }) as E
      : error

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

  return { prepare, submit, lookup, ...makeSefazEvents(call), status }
}
