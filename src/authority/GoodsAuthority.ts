/**
 * The port of the goods invoices' authorities (SPEC §7), beside the service invoices' TaxAuthority
 * and in its shape: what the documents module knows of the state authority (SEFAZ) that authorizes
 * an NF-e or an NFC-e, one per environment. Its errors are the same typed ones: `AuthorityRejected`
 * final, `AuthorityUnavailable` and `AuthorityTimeout` transient, `RequestNotSent` for a note that
 * never left (no usable certificate, or a note our own schema check refused).
 *
 * A note already authorized is never an error here: the adapters adopt it (a SEFAZ's duplicity 204
 * is answered with the note's protocol through a lookup), so `submit` returns its authorization.
 */
import { Context, type Effect, type Option } from "effect"
import type { CredentialRequired, InvalidRequest } from "../domain/Errors.js"
import type { GoodsInvoiceRequest, GoodsIssuer } from "../domain/GoodsInvoice.js"
import type { TenantId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import type {
  AuthorityRejected,
  IssuerStanding,
  RequestNotSent,
  SubmissionIdPattern,
  SubmissionRef,
  TransientAuthorityError
} from "./TaxAuthority.js"

/** What a goods note is built from: the same at every attempt, so every attempt builds the same note. */
export interface GoodsNote {
  readonly environment: Environment
  /** The document's id: the seed of the note's numeric code (cNF). */
  readonly documentId: string
  readonly request: GoodsInvoiceRequest
  /** The emitter as the document was accepted. */
  readonly issuer: GoodsIssuer
  readonly series: number
  readonly number: number
  /** When the service accepted the document: the note's dhEmi. */
  readonly issuedAt: Date
  /** An NFC-e issued in offline contingency (tpEmis 9): since when and why. */
  readonly contingency?: { readonly since: Date; readonly reason: string } | undefined
}

export interface GoodsSubmission extends SubmissionRef {
  readonly note: GoodsNote
  /**
   * An NFC-e issued offline: its signed note as the consumer holds it, sent as it is (a note rebuilt
   * after a deploy or with a renewed certificate would not be the one printed).
   */
  readonly offlineXml?: string | undefined
}

export interface GoodsAuthorization {
  /** The 44-character access key. */
  readonly accessKey: string
  readonly protocol: string
  readonly authorizedAt: Date
  /** The `nfeProc` (the note with the authority's protocol): the document's XML file. */
  readonly xml: string
}

/** An NFC-e issued offline (contingency, tpEmis 9): signed, not sent. */
export interface GoodsOfflineNote {
  /** Its 44-character access key (tpEmis 9 inside). */
  readonly accessKey: string
  /** The signed `NFe`, its offline QR code inside: the document's XML file until it is authorized. */
  readonly xml: string
}

/** The cancellation of an authorized note (event 110111). */
export interface GoodsCancellationRequest extends GoodsSubmission {
  readonly accessKey: string
  /** The note's authorization protocol. */
  readonly protocol: string
  /** Why (xJust), 15 to 255 characters. */
  readonly reason: string
  /** When the tenant asked: the event's time, the same at every attempt. */
  readonly requestedAt: Date
}

export interface GoodsCancellation {
  /** The event's protocol; null when the event was registered before (found, not made, by this call). */
  readonly protocol: string | null
  readonly cancelledAt: Date
}

/** A correction letter (CC-e, event 110110) of an authorized NF-e. */
export interface GoodsCorrectionRequest extends GoodsSubmission {
  readonly accessKey: string
  /** The letter's number, 1 to 20: the same at every attempt. */
  readonly sequence: number
  /** What it corrects (xCorrecao), 15 to 1 000 characters. */
  readonly text: string
  /** When the tenant asked: the event's time, the same at every attempt. */
  readonly requestedAt: Date
}

export interface GoodsCorrection {
  /** The event's protocol; null when the letter was registered before (found, not made, by this call). */
  readonly protocol: string | null
  readonly registeredAt: Date
}

/** A range of numbers of an emitter's series that no note used, voided (inutilização). */
export interface GoodsVoidingRequest {
  readonly tenantId: TenantId
  /** The voiding's id (`vnr_…`): the same at every attempt. */
  readonly voidingId: string
  readonly environment: Environment
  /** The emitter as it is now: its state's authority voids its numbers. */
  readonly issuer: GoodsIssuer
  readonly type: GoodsInvoiceRequest["type"]
  readonly series: number
  readonly from: number
  readonly to: number
  /** Why (xJust), 15 to 255 characters. */
  readonly reason: string
  /** When the tenant asked: the request's year, the same at every attempt. */
  readonly requestedAt: Date
}

export interface GoodsVoiding {
  /** The voiding's protocol; null when the range was voided before (found, not made, by this call). */
  readonly protocol: string | null
  readonly registeredAt: Date
}

/** A state authorizer's status, asked of the emitter's state for a model of note. */
export interface AuthorizerProbe {
  /** An emitter of the state: the authorizers take no call without a client certificate, so its own is used. */
  readonly tenantId: TenantId
  /** The state (UF) and its IBGE code (cUF). */
  readonly state: string
  readonly stateCode: string
  readonly type: GoodsInvoiceRequest["type"]
}

/** The status service's answer (107 in operation; 108, 109 paused). */
export interface AuthorizerAnswer {
  readonly inOperation: boolean
  readonly code: string
  readonly reason: string
}

export interface GoodsAuthority {
  /** `production` or `homologation`, for spans and logs. */
  readonly system: "production" | "homologation"
  /**
   * The submission id of a note of this emitter, model, series and month: the access key's first
   * 34 characters, the number's 9 digits last (deterministic: a retry carries it again).
   */
  readonly submissionIdOf: (
    note: Pick<GoodsNote, "issuer" | "series" | "issuedAt"> & { readonly type: GoodsInvoiceRequest["type"] }
  ) => SubmissionIdPattern
  /** What this authority needs before it takes the document (a usable certificate), checked at acceptance. */
  readonly requirementsFor: (
    issuer: IssuerStanding,
    note: GoodsNote
  ) => Effect.Effect<void, CredentialRequired | InvalidRequest>
  readonly submit: (
    submission: GoodsSubmission
  ) => Effect.Effect<GoodsAuthorization, AuthorityRejected | RequestNotSent | TransientAuthorityError>
  /**
   * Issues an NFC-e offline (its `note.contingency` set): built and signed as `submit` would send it,
   * without asking the authority. `submit` with the same note transmits it later.
   */
  readonly issueOffline: (submission: GoodsSubmission) => Effect.Effect<GoodsOfflineNote, RequestNotSent>
  /** What the authority knows of the submission's note: its authorization, or None. */
  readonly lookup: (
    submission: GoodsSubmission
  ) => Effect.Effect<Option.Option<GoodsAuthorization>, RequestNotSent | TransientAuthorityError>
  /**
   * Registers the note's cancellation. A cancellation registered before (a retry after a lost
   * answer) is done, not refused; a refusal (past the deadline, say) is `AuthorityRejected`.
   */
  readonly cancel: (
    request: GoodsCancellationRequest
  ) => Effect.Effect<GoodsCancellation, AuthorityRejected | RequestNotSent | TransientAuthorityError>
  /**
   * Registers a correction letter. The same letter registered before (a retry after a lost answer)
   * is registered, not refused; a refusal (a cancelled note, say) is `AuthorityRejected`.
   */
  readonly correct: (
    request: GoodsCorrectionRequest
  ) => Effect.Effect<GoodsCorrection, AuthorityRejected | RequestNotSent | TransientAuthorityError>
  /**
   * Voids a range of numbers no note used. The same range voided before (a retry after a lost
   * answer) is registered, not refused; a refusal (a number already used, say) is `AuthorityRejected`.
   */
  readonly voidNumbers: (
    request: GoodsVoidingRequest
  ) => Effect.Effect<GoodsVoiding, AuthorityRejected | RequestNotSent | TransientAuthorityError>
  /**
   * Asks the state's authorizer whether it is in operation (NfeStatusServico). None when there is
   * nothing to ask: the simulator is always in operation.
   */
  readonly status: (
    probe: AuthorizerProbe
  ) => Effect.Effect<Option.Option<AuthorizerAnswer>, RequestNotSent | TransientAuthorityError>
  /**
   * The DANFE of an authorized note, from its `nfeProc`: A4 for an NF-e, the 80 mm receipt for an
   * NFC-e. No state authority publishes one: the service draws it, whichever authority signed.
   */
  readonly danfe: (note: { readonly xml: string; readonly cancelled: boolean }) => Effect.Effect<Uint8Array>
}

/** The goods authorities, one per environment: production for live keys' documents, homologation for test keys'. */
export class GoodsAuthorities extends Context.Service<GoodsAuthorities, {
  readonly for: (environment: Environment) => GoodsAuthority
}>()("etd/GoodsAuthorities") {
  static readonly fromEach = (authorities: { readonly live: GoodsAuthority; readonly test: GoodsAuthority }) =>
    GoodsAuthorities.of({ for: (environment) => authorities[environment] })
}
