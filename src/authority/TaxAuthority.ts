/**
 * The tax authority port (SPEC §7). Two layers exist, one per environment: `TaxAuthorityLive`
 * (production) and `TaxAuthoritySandbox` (homologation). A document goes to the one of its
 * environment. Failures are typed: `AuthorityRejected` is final (a business refusal, never
 * retried); `AuthorityUnavailable` and `AuthorityTimeout` are transient; `AlreadyAuthorized` means
 * the submission id was authorized before (duplicate detection) and carries that authorization.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Environment } from "../domain/Principal.js"
import type { Amounts } from "../domain/Money.js"
import type { Address } from "../domain/Document.js"
import type { SimplesNacional } from "../domain/Tenant.js"


/** Something the authority would refuse, on the request field it comes from (path [] when none). */
export interface Refusal {
  readonly path: ReadonlyArray<string>
  readonly message: string
}

/** What the authority needs to authorize a service invoice (a DPS, in the national system). */
export interface SubmissionDocument {
  readonly environment: Environment
  readonly issuer: {
    readonly taxId: string
    readonly name: string
    /** The tenant's option for the Simples Nacional (opSimpNac); absent: not opted. */
    readonly simplesNacional?: SimplesNacional | undefined
  }
  readonly series: string
  readonly number: number
  readonly issueDate: string
  readonly taker: {
    readonly tax_id: string
    readonly name: string
    readonly email?: string | undefined
    readonly address?: Address | undefined
  }
  readonly service: {
    readonly code: string
    readonly nbs_code?: string | undefined
    readonly description: string
    readonly municipality_code: string
  }
  readonly amounts: Amounts
  readonly notes: string | null
}

/**
 * Which submission a call is about, and on whose behalf. The national system knows the caller by
 * the certificate of the mutual-TLS connection (the tenant's); the simulator keeps its records per
 * tenant, so two tenants that share a tax id (neither has proven it yet, SPEC §5), and with it the
 * DPS ids of their documents, never see or adopt each other's submissions.
 */
export interface SubmissionRef {
  readonly tenantId: string
  /** Deterministic: the same document always has the same id, so a retry can be reconciled. */
  readonly submissionId: string
}

export interface Submission extends SubmissionRef {
  readonly document: SubmissionDocument
}

export interface Authorization {
  /** The 50-digit access key (chave de acesso). */
  readonly accessKey: string
  readonly protocol: string
  readonly authorizedAt: Date
  /** The NFS-e number (nNFSe) the authority gave the note. */
  readonly nfseNumber: string
  /** The NFS-e XML exactly as the authority returned it (unpacked), kept for the document's files. */
  readonly nfseXml: string
}

export interface CancellationRequest extends SubmissionRef {
  readonly environment: Environment
  /** The issuer's tax id: the author of the cancellation event. */
  readonly issuerTaxId: string
  readonly accessKey: string
  readonly reasonCode: "issue_error" | "service_not_provided" | "other"
  readonly reason: string
}

export interface Cancellation {
  /** The authority's protocol for the registered event; null when it was registered before (found, not made, by this call). */
  readonly protocol: string | null
  readonly cancelledAt: Date
}

/** The DANFSe (the note's PDF) of an authorized note. */
export interface DanfseRequest {
  readonly tenantId: string
  readonly accessKey: string
  /** The stored NFS-e XML: what a DANFSe rendered by the service shows. */
  readonly nfseXml: string
  readonly cancelled: boolean
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
  status: Schema.optional(Schema.Number)
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
 * The request never left: what we would send is wrong (a DPS that fails the official schema is our
 * bug) or cannot be signed (no usable credential). Final, like a rejection, but not the authority's
 * word: the document goes to `failed` with this code and message.
 */
export class RequestNotSent extends Schema.TaggedError<RequestNotSent>()("RequestNotSent", {
  code: Schema.Literals(["dps_schema_violation", "event_schema_violation", "credential_required", "credential_unusable"]),
  message: Schema.String
}) {}

export type TransientAuthorityError = AuthorityUnavailable | AuthorityTimeout

/** What a layer talks to: the built-in simulator, or the national system (SEFIN Nacional). */
export type AuthorityTarget = "simulator" | "sefin"

export interface TaxAuthority {
  /** `production` or `homologation`, for spans and logs. */
  readonly system: "production" | "homologation"
  readonly target: AuthorityTarget
  /**
   * Whether the tenant can send to this authority now. The national system takes only documents
   * signed with the tenant's own certificate: an active one, not past its validity.
   */
  readonly canSubmitFor: (tenantId: string) => Effect.Effect<boolean>
  /**
   * What this authority would refuse in the document before anything is sent, in words a caller
   * can act on (none: acceptable). Checked at acceptance, so such a document is a 400, not a
   * `failed` note later. The national system's are its schema's rules; the simulator has none.
   */
  readonly refusalsOf: (document: SubmissionDocument, at: Date) => ReadonlyArray<Refusal>
  /** The same for a cancellation request: what the authority would refuse in it (its reason, say). */
  readonly cancellationRefusalsOf: (request: CancellationRequest, at: Date) => ReadonlyArray<Refusal>
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
}

/** The production system; live keys' documents go here. */
export class TaxAuthorityLive extends Context.Service<TaxAuthorityLive, TaxAuthority>()("etd/TaxAuthorityLive") {}

/** The homologation system; test keys' documents go here. */
export class TaxAuthoritySandbox extends Context.Service<TaxAuthoritySandbox, TaxAuthority>()("etd/TaxAuthoritySandbox") {}

/**
 * The magic values of test mode (SPEC §7), like test card numbers: matched as substrings of a
 * document's `notes`, by the built-in simulator and by the local authority (in the DPS's xInfComp).
 */
export const MagicValues = {
  reject: "simulate:reject",
  unavailable: "simulate:unavailable",
  timeout: "simulate:timeout",
  cancelReject: "simulate:cancel-reject"
} as const

/** Environment code of the national system (tpAmb): 1 production, 2 homologation. */
export const environmentCode = (environment: Environment): 1 | 2 => (environment === "live" ? 1 : 2)
