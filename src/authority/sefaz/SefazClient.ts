/**
 * The client of a state authority (SEFAZ) for one goods invoice: the note built from the document,
 * its consumer QR code (NFC-e), signed with the tenant's certificate and validated against the
 * official schema before it leaves (a failure is our bug: `NoteNotValid`, never sent); then the
 * SOAP exchanges over mutual TLS with the authorizer of the emitter's state: authorization
 * (synchronous), the protocol lookup by access key, and the status service.
 *
 * A note is rebuilt identically at every attempt (NfeXml.ts: its key from the document's id, RSA
 * signatures deterministic), so after a timeout the lookup asks about the very key that may have
 * been authorized, and a note sent again is the same note: the authority's "duplicity" (204) is
 * answered by adopting the authorization it already has, never by a second note.
 */
import { Duration, Effect, Option, Redacted, Result, Schema } from "effect"
import type { GoodsInvoiceRequest, GoodsIssuer } from "../../domain/GoodsInvoice.js"
import type { Environment } from "../../domain/Principal.js"
import type { ClientIdentity, Exchange } from "../sefin/SefinTransport.js"
import { AuthorityRejected, AuthorityTimeout, AuthorityUnavailable } from "../TaxAuthority.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import { parseXml } from "../xml/XmlText.js"
import { consumerSupplement, withConsumerSupplement } from "./ConsumerQrCode.js"
import type { NfeModel } from "./NfeAccessKey.js"
import {
  authorizationRequest,
  AUTHORIZED,
  IN_OPERATION,
  lookupRequest,
  NOT_FOUND,
  processedNote,
  statusRequest
} from "./NfeProtocol.js"
import { buildNfe, type Contingency, NFE_NAMESPACE } from "./NfeXml.js"
import { validateNfe } from "./NfeXsd.js"
import { sefazAddress, type SefazService } from "./SefazAddresses.js"
import { soapContent, soapRequest } from "./SefazSoap.js"

/** What the authority needs of a goods document to authorize it. */
export interface GoodsSubmission {
  readonly environment: Environment
  readonly documentId: string
  readonly request: GoodsInvoiceRequest
  readonly issuer: GoodsIssuer
  readonly series: number
  readonly number: number
  /** When the service accepted the document: the note's dhEmi at every attempt. */
  readonly issuedAt: Date
  readonly contingency?: Contingency | undefined
}

export interface GoodsAuthorization {
  readonly accessKey: string
  readonly protocol: string
  readonly authorizedAt: Date
  /** The `nfeProc`: the note as sent with the authority's protocol (the document's XML file). */
  readonly xml: string
}

/** The note we built does not pass the official schema: our bug, the document fails without being sent. */
export class NoteNotValid extends Schema.TaggedError<NoteNotValid>()("NoteNotValid", {
  message: Schema.String
}) {}

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

// The authorities' "paused" answers (108 short term, 109 without forecast): try again later.
const PAUSED: ReadonlySet<string> = new Set(["108", "109"])
const DUPLICATE = "204"

const texts = (xml: string, name: string): Array<string> => {
  const parsed = parseXml(xml)
  if (Result.isFailure(parsed)) return []
  return Array.from(parsed.success.getElementsByTagNameNS(NFE_NAMESPACE, name)).map((e) => e.textContent ?? "")
}

const elementOf = (xml: string, name: string): string | undefined => {
  const parsed = parseXml(xml)
  return Result.isFailure(parsed)
    ? undefined
    : parsed.success.getElementsByTagNameNS(NFE_NAMESPACE, name).item(0)?.toString()
}

export const makeSefazClient = (options: SefazClientOptions) => {
  const addressOf = options.addressOf ?? sefazAddress
  const timeoutMs = Duration.toMillis(options.timeout)

  /** The signed note of a submission, with what addresses it: the same bytes at every call. */
  const prepare = (submission: GoodsSubmission, identity: ClientIdentity) =>
    Effect.suspend(() => {
      const built = buildNfe(submission)
      const state = submission.issuer.address.state
      const privateKeyPem = Redacted.value(identity.privateKeyPem)
      const withSupplement = built.model === "65"
        ? withConsumerSupplement(
          built.xml,
          consumerSupplement({
            accessKey: built.accessKey,
            environment: submission.environment,
            state,
            offline: submission.contingency === undefined ? undefined : {
              issuedAt: submission.issuedAt,
              total: built.figures.totals.total,
              recipient: submission.request.recipient?.tax_id !== undefined
                ? { taxId: submission.request.recipient.tax_id }
                : submission.request.recipient?.foreign_id !== undefined
                ? { foreignId: submission.request.recipient.foreign_id }
                : null,
              privateKeyPem
            }
          })
        )
        : built.xml
      const note = signEnveloped(withSupplement, {
        element: "infNFe",
        privateKeyPem,
        certificatePem: identity.certificatePem
      })
      const valid = validateNfe("NFe", note)
      return Result.isFailure(valid)
        ? Effect.fail(
          new NoteNotValid({ message: `the note does not pass the NF-e schema: ${valid.failure.messages.join("; ")}` })
        )
        : Effect.succeed({ accessKey: built.accessKey, model: built.model, state, note })
    })

  /** One SOAP exchange; its document, or why there is none (transient: the outcome is unknown or nothing happened). */
  const call = (
    identity: ClientIdentity,
    url: string,
    service: SefazService,
    message: string
  ): Effect.Effect<string, AuthorityUnavailable | AuthorityTimeout> =>
    options.exchange(identity, {
      method: "POST",
      url,
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
          : Effect.succeed(content.success)
      })
    )

  const authorizationOf = (note: string, accessKey: string, answer: string): GoodsAuthorization | undefined => {
    const protocolXml = elementOf(answer, "protNFe")
    const [protocol] = texts(answer, "nProt")
    const [receivedAt] = texts(elementOf(answer, "protNFe") ?? "", "dhRecbto")
    if (protocolXml === undefined || protocol === undefined) return undefined
    return {
      accessKey,
      protocol,
      authorizedAt: new Date(receivedAt ?? Date.now()),
      xml: processedNote(note, protocolXml)
    }
  }

  /** What the authority knows of the submission's note: its authorization, or None (217). */
  const lookup = (submission: GoodsSubmission, identity: ClientIdentity) =>
    Effect.flatMap(prepare(submission, identity), ({ accessKey, model, note, state }) =>
      Effect.flatMap(
        call(
          identity,
          addressOf(model, state, submission.environment, "NfeConsultaProtocolo"),
          "NfeConsultaProtocolo",
          lookupRequest(submission.environment, accessKey)
        ),
        (answer): Effect.Effect<Option.Option<GoodsAuthorization>, AuthorityUnavailable> => {
          const [code = "", reason = ""] = [texts(answer, "cStat")[0], texts(answer, "xMotivo")[0]]
          if (code === NOT_FOUND) return Effect.succeedNone
          const authorization = code === AUTHORIZED ? authorizationOf(note, accessKey, answer) : undefined
          return authorization === undefined
            ? Effect.fail(new AuthorityUnavailable({ message: `the SEFAZ's lookup answered ${code} ${reason}`.trim() }))
            : Effect.succeedSome(authorization)
        }
      ))

  /**
   * Sends the note for authorization. A note the authority already authorized (204, a retry after a
   * lost answer) is adopted from its lookup; its other refusals are final.
   */
  const submit = (submission: GoodsSubmission, identity: ClientIdentity) =>
    Effect.flatMap(prepare(submission, identity), ({ accessKey, model, note, state }) =>
      Effect.flatMap(
        call(
          identity,
          addressOf(model, state, submission.environment, "NfeAutorizacao"),
          "NfeAutorizacao",
          authorizationRequest(submission.documentId.replace(/[^0-9]/g, "").slice(-15) || "1", note)
        ),
        (
          answer
        ): Effect.Effect<
          GoodsAuthorization,
          AuthorityRejected | AuthorityUnavailable | AuthorityTimeout | NoteNotValid
        > => {
          const codes = texts(answer, "cStat")
          const reasons = texts(answer, "xMotivo")
          const [batch = "", noteCode] = codes
          if (PAUSED.has(batch)) {
            return Effect.fail(new AuthorityUnavailable({ message: `${batch} ${reasons[0] ?? ""}`.trim() }))
          }
          if (noteCode === undefined) {
            return Effect.fail(new AuthorityRejected({ code: batch, message: reasons[0] ?? "the batch was refused" }))
          }
          if (noteCode === AUTHORIZED) {
            const authorization = authorizationOf(note, accessKey, answer)
            return authorization === undefined
              ? Effect.fail(new AuthorityUnavailable({ message: "the SEFAZ authorized the note without a protocol" }))
              : Effect.succeed(authorization)
          }
          if (noteCode === DUPLICATE) {
            return Effect.flatMap(lookup(submission, identity), (found) =>
              Option.isSome(found)
                ? Effect.succeed(found.value)
                : Effect.fail(new AuthorityUnavailable({ message: "204 for a note the lookup does not find" })))
          }
          return Effect.fail(new AuthorityRejected({ code: noteCode, message: reasons[1] ?? "" }))
        }
      ))

  /** Whether the authorizer of a state's notes of a model is in operation (107). */
  const status = (
    model: NfeModel,
    state: string,
    environment: Environment,
    identity: ClientIdentity,
    stateCode: string
  ) =>
    Effect.map(
      call(
        identity,
        addressOf(model, state, environment, "NfeStatusServico"),
        "NfeStatusServico",
        statusRequest(environment, stateCode)
      ),
      (answer): ServiceStatus => {
        const code = texts(answer, "cStat")[0] ?? ""
        return { inOperation: code === IN_OPERATION, code, reason: texts(answer, "xMotivo")[0] ?? "" }
      }
    )

  return { prepare, submit, lookup, status }
}
