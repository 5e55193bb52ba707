/**
 * The events and requests of an authorized series at a state authority, over the client's SOAP
 * exchange (SefazClient.ts): the cancellation (110111) and the correction letter (110110) of a note,
 * sent as one batch of one signed event, and the voiding of a range of unused numbers. Each is
 * signed with the tenant's key and checked against its official schema before it leaves.
 */
import { Effect, Redacted, Result } from "effect"
import type { GoodsCancellation, GoodsCorrection, GoodsVoiding, GoodsVoidingRequest } from "../GoodsAuthority.js"
import type { ClientIdentity } from "../sefin/SefinTransport.js"
import { AuthorityRejected, type AuthorityTimeout, AuthorityUnavailable } from "../TaxAuthority.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import {
  cancellationEvent,
  EVENT_DUPLICATE,
  EVENT_REGISTERED,
  eventBatch,
  validateCancellation
} from "./NfeCancellation.js"
import { correctionEvent, validateEvent } from "./NfeCorrection.js"
import { validateVoiding, VOIDING_DUPLICATE, VOIDING_REGISTERED, voidingInputOf, voidingRequest } from "./NfeVoiding.js"
import type { NfeInput } from "./NfeXml.js"
import type { SefazService } from "./SefazAddresses.js"
import { type Addressee, type AnswerReader, batchIdOf, PAUSED } from "./SefazExchange.js"
import { modelOf, NoteNotValid } from "./SignedNote.js"

/** One SOAP exchange of the client: its answer, or why there is none. */
export type SefazCall = (
  identity: ClientIdentity,
  to: Addressee,
  service: SefazService,
  message: string
) => Effect.Effect<AnswerReader, AuthorityUnavailable | AuthorityTimeout>

type GoodsSubmission = NfeInput

export const makeSefazEvents = (call: SefazCall) => {
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

  return { cancel, correct, voidNumbers }
}
