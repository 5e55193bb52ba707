/**
 * The tax authority port (SPEC §7): what the documents module knows of an authority. Which
 * protocol a target speaks (the national system's DPS, the simulator), its ids and its XML stay
 * behind it. `TaxAuthorities.for(environment)` gives the one of a document's environment.
 * Failures are typed: `AuthorityRejected` is final (a business refusal, never
 * retried); `AuthorityUnavailable` and `AuthorityTimeout` are transient; `AlreadyAuthorized` means
 * the submission id was authorized before (duplicate detection) and carries that authorization.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { SubstitutionInfo } from "../domain/Document.js"
import type { CredentialRequired, InvalidRequest } from "../domain/Errors.js"
import type { TenantId } from "../domain/Ids.js"
import type { Amounts, IbsCbsFigures } from "../domain/Money.js"
import type { NoteAmounts } from "../domain/NoteAmounts.js"
import type { Environment } from "../domain/Principal.js"
import type { Registration } from "../domain/Registration.js"
import type { Party, TaxDetails } from "../domain/TaxContent.js"
import type { SimplesNacional } from "../domain/Tenant.js"

/**
 * What the authority needs to authorize a service invoice (a DPS, in the national system): a stored
 * document's own fields, under their names, and its issuer as it is when the document is checked
 * or sent.
 */
export interface SubmissionDocument {
  readonly environment: Environment
  readonly issuer: {
    readonly taxId: string
    readonly name: string
    /** The tenant's option for the Simples Nacional (opSimpNac); absent: not opted. */
    readonly simplesNacional?: SimplesNacional | undefined
    /**
     * Where the note is issued (cLocEmi): the provider's municipality when the document was accepted,
     * kept with it because it is part of the DPS id the document is reconciled by.
     */
    readonly municipalityCode: string
    /** The provider's registration as the tenant declares it now (SPEC §5); absent: none declared. */
    readonly registration?: Registration | undefined
  }
  readonly series: string
  readonly number: number
  readonly issueDate: string
  /**
   * When the service accepted the document: the moment the note is emitted (the DPS's dhEmi), the
   * same at acceptance's check and at every attempt, so the request the worker sends is the one
   * that was checked.
   */
  readonly createdAt: Date
  /** Absent for a note to an unidentified consumer. */
  readonly taker: Party | null
  readonly intermediary: Party | null
  readonly service: {
    readonly code: string
    readonly nbs_code?: string | undefined
    readonly municipal_code?: string | undefined
    readonly description: string
    readonly municipality_code: string
    readonly country_code?: string | undefined
  }
  readonly amounts: Amounts
  /** The declared tax content (ISS details, federal group, approximate taxes, export data, deductions). */
  readonly tax: TaxDetails
  readonly notes: string | null
  /**
   * A substitute: the authorized note it replaces and why (the DPS's `subst` group). The national
   * system cancels the original itself (event e105102) when it authorizes this one.
   */
  readonly substitution?: typeof SubstitutionInfo.Type | null | undefined
}

/** The tenant asking to issue, as far as the authority's requirements go. */
export interface IssuerStanding {
  readonly tenantId: TenantId
  /** Whether the tenant has proven its tax id (with an A1 certificate). */
  readonly verified: boolean
}

/**
 * Which submission a call is about, and on whose behalf. The national system knows the caller by
 * the certificate of the mutual-TLS connection (the tenant's); the simulator keeps its records per
 * tenant, so two tenants that share a tax id (neither has proven it yet), and with it the
 * submission ids of their documents, never see or adopt each other's submissions.
 */
export interface SubmissionRef {
  readonly tenantId: TenantId
  /** Deterministic: the same document always has the same id, so a retry can be reconciled. */
  readonly submissionId: string
}

/**
 * A document's submission id before it has a number: `prefix`, then the number zero-padded to
 * `width` digits. The database completes it when it numbers the document, in the same statement.
 */
export interface SubmissionIdPattern {
  readonly prefix: string
  readonly width: number
}

export interface Submission extends SubmissionRef {
  readonly document: SubmissionDocument
}

/** The amounts an authorized note states (its `valores`), for the document to show. */
export { noteIbsCbsOf } from "./NoteIbsCbs.js"
export { noteAmountsOf } from "./NoteValues.js"

export interface Authorization {
  /** The 50-digit access key (chave de acesso). */
  readonly accessKey: string
  readonly protocol: string
  readonly authorizedAt: Date
  /** The NFS-e number (nNFSe) the authority gave the note. */
  readonly nfseNumber: string
  /** The NFS-e XML exactly as the authority returned it (unpacked), kept for the document's files. */
  readonly nfseXml: string
  /**
   * The note's own figures (its `valores`), when the adapter has them at hand: read from the XML
   * it already parsed, or known to the simulator that wrote it. Absent, they are read from `nfseXml`.
   */
  readonly amounts?: NoteAmounts | undefined
  /**
   * The note's IBS/CBS figures, likewise, when the adapter has them at hand: null for a note without
   * the group. Absent (undefined), they are read from `nfseXml`.
   */
  readonly ibsCbs?: IbsCbsFigures | null | undefined
}

export interface CancellationRequest extends SubmissionRef {
  readonly environment: Environment
  /** The issuer's tax id: the author of the cancellation event. */
  readonly issuerTaxId: string
  readonly accessKey: string
  readonly reasonCode: "issue_error" | "service_not_provided" | "other"
  readonly reason: string
  /** When the tenant asked: the event's time, the same at the request's check and at every attempt. */
  readonly requestedAt: Date
  /**
   * true: the request for the municipality's analysis (e101103) of a cancellation the issuer can no
   * longer make itself (its deadline passed, E0822), rather than the cancellation (e101101).
   */
  readonly analysis?: boolean | undefined
}

export interface Cancellation {
  /** The authority's protocol for the registered event; null when it was registered before (found, not made, by this call). */
  readonly protocol: string | null
  /** `in_analysis` for a registered analysis request: the note stands until the municipality decides. */
  readonly status: "cancelled" | "in_analysis"
  readonly cancelledAt: Date
}

/** The municipality's decision on an analysis request (e105104 granted, e105105 refused). */
export interface AnalysisDecision {
  readonly granted: boolean
  readonly decidedAt: Date
  /** The decision's code (its event type) and text (xMotivo). */
  readonly code: string
  readonly message: string
}

/** The DANFSe (the note's PDF) of an authorized note. */
export interface DanfseRequest {
  readonly tenantId: TenantId
  readonly accessKey: string
  /** The stored NFS-e XML: what a DANFSe rendered by the service shows. */
  readonly nfseXml: string
  readonly cancelled: boolean
  /** Replaced by another note (substitution): the DANFSe is marked SUBSTITUÍDA. */
  readonly substituted: boolean
}

/** What the authority knows about a submission id. */
export interface AuthorityRecord {
  readonly status: "authorized" | "cancelled"
  readonly authorization: Authorization
  readonly cancelledAt: Date | null
}

export class AuthorityRejected extends Schema.TaggedError<AuthorityRejected>()("AuthorityRejected", {
  code: Schema.String,
  message: Schema.String
}) {}

export class AuthorityUnavailable extends Schema.TaggedError<AuthorityUnavailable>()("AuthorityUnavailable", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  /**
   * The authority certainly did not take the request (no connection could be made, or it said its
   * service is paused): nothing of it can have been authorized. Otherwise the outcome is unknown.
   */
  unreached: Schema.optional(Schema.Boolean)
}) {}

export class AuthorityTimeout extends Schema.TaggedError<AuthorityTimeout>()("AuthorityTimeout", {
  message: Schema.String
}) {}

export class AlreadyAuthorized extends Schema.TaggedError<AlreadyAuthorized>()("AlreadyAuthorized", {
  accessKey: Schema.String,
  protocol: Schema.String,
  authorizedAt: Schema.Date,
  nfseNumber: Schema.String,
  nfseXml: Schema.String
}) {}

/**
 * The request never left: it cannot be signed (no usable credential), or the note we built does not
 * pass the official schema (`note_not_valid`, our bug). Final, like a rejection, but not the
 * authority's word: the document goes to `failed` with this code and message.
 */
export class RequestNotSent extends Schema.TaggedError<RequestNotSent>()("RequestNotSent", {
  code: Schema.Literals(["credential_required", "credential_unusable", "note_not_valid"]),
  message: Schema.String
}) {}

export type TransientAuthorityError = AuthorityUnavailable | AuthorityTimeout

export interface TaxAuthority {
  /** `production` or `homologation`, for spans and logs. */
  readonly system: "production" | "homologation"
  /** The submission id of a document of this series (deterministic: a retry carries it again). */
  readonly submissionIdOf: (
    document: Pick<SubmissionDocument, "issuer" | "series" | "service">
  ) => SubmissionIdPattern
  /**
   * What this authority needs before it takes the document, checked at acceptance so that a
   * document it would refuse is an answer now, not a `failed` note later: the tenant's credential
   * (`CredentialRequired`), and the fields it requires or refuses (`InvalidRequest`, naming each
   * field). The number is not drawn yet; every number is alike to these rules.
   */
  readonly requirementsFor: (
    issuer: IssuerStanding,
    document: SubmissionDocument
  ) => Effect.Effect<void, CredentialRequired | InvalidRequest>
  /** The same for a cancellation request: what the authority would refuse in it (its reason, say). */
  readonly cancellationRequirementsFor: (request: CancellationRequest) => Effect.Effect<void, InvalidRequest>
  readonly submit: (
    submission: Submission
  ) => Effect.Effect<Authorization, AuthorityRejected | AlreadyAuthorized | RequestNotSent | TransientAuthorityError>
  readonly lookup: (
    ref: SubmissionRef
  ) => Effect.Effect<Option.Option<AuthorityRecord>, RequestNotSent | TransientAuthorityError>
  readonly cancel: (
    request: CancellationRequest
  ) => Effect.Effect<Cancellation, AuthorityRejected | RequestNotSent | TransientAuthorityError>
  readonly danfse: (request: DanfseRequest) => Effect.Effect<Uint8Array, RequestNotSent | TransientAuthorityError>
  /**
   * Whether the municipality decided an analysis request on the note (the reconciliation path: the
   * note's events are asked for); None while it has not.
   */
  readonly analysisDecision: (
    request: SubmissionRef & { readonly accessKey: string }
  ) => Effect.Effect<Option.Option<AnalysisDecision>, RequestNotSent | TransientAuthorityError>
}

/**
 * The tax authorities, one per environment: production for live keys' documents, homologation for
 * test keys'. `for` is the only place that chooses.
 */
export class TaxAuthorities extends Context.Service<TaxAuthorities, {
  readonly for: (environment: Environment) => TaxAuthority
}>()("etd/TaxAuthorities") {
  /** Both environments' authorities, as given (tests give scripted ones). */
  static readonly fromEach = (authorities: { readonly live: TaxAuthority; readonly test: TaxAuthority }) =>
    TaxAuthorities.of({ for: (environment) => authorities[environment] })
}

/**
 * The magic values of test mode (SPEC §7), like test card numbers: matched as substrings of a
 * document's `notes`, by the built-in simulator and by the local authority (in the DPS's xInfComp).
 */
export const MagicValues = {
  reject: "simulate:reject",
  unavailable: "simulate:unavailable",
  timeout: "simulate:timeout",
  cancelReject: "simulate:cancel-reject",
  /** The goods authority's service is paused for the note online: an NFC-e allowing it is issued offline. */
  offline: "simulate:offline",
  /** The local SEFAZ takes the note's batch to process apart (103): its receipt answers 105 once, then 104. */
  async: "simulate:async",
  /** With `cancelReject`: the municipality refuses the analysis request (e105105); without it, it grants it (e105104). */
  analysisRefuse: "simulate:analysis-refuse"
} as const

/** Environment code of the national system (tpAmb): 1 production, 2 homologation. */
export const environmentCode = (environment: Environment): 1 | 2 => (environment === "live" ? 1 : 2)
