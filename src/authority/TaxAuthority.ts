/**
 * The tax authority port (SPEC §7). Two layers exist, one per environment: `TaxAuthorityLive`
 * (production) and `TaxAuthoritySandbox` (homologation). A document goes to the one of its
 * environment. Failures are typed: `AuthorityRejected` is final (a business refusal, never
 * retried); `AuthorityUnavailable` and `AuthorityTimeout` are transient; `AlreadyAuthorized` means
 * the submission id was authorized before (duplicate detection) and carries that authorization.
 */
import { Context, type Effect, type Option, Schema } from "effect"
import type { Environment } from "../domain/Principal.js"

/** What the authority needs to authorize a service invoice (a DPS, in the national system). */
export interface SubmissionDocument {
  readonly environment: Environment
  readonly issuer: { readonly taxId: string; readonly name: string }
  readonly series: string
  readonly number: number
  readonly issueDate: string
  readonly taker: {
    readonly tax_id: string
    readonly name: string
    readonly email?: string | undefined
  }
  readonly service: { readonly code: string; readonly description: string; readonly municipality_code: string }
  readonly amounts: {
    readonly services: number
    readonly deductions: number
    readonly base: number
    readonly iss_rate: string
    readonly iss_amount: number
    readonly total: number
  }
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
}

export interface CancellationRequest extends SubmissionRef {
  readonly accessKey: string
  readonly reasonCode: "issue_error" | "service_not_provided" | "other"
  readonly reason: string
}

export interface Cancellation {
  readonly protocol: string
  readonly cancelledAt: Date
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
  authorizedAt: Schema.Date
}) {}

export type TransientAuthorityError = AuthorityUnavailable | AuthorityTimeout

export interface TaxAuthority {
  /** `production` or `homologation`, for spans and logs. */
  readonly system: "production" | "homologation"
  readonly submit: (
    submission: Submission
  ) => Effect.Effect<Authorization, AuthorityRejected | AlreadyAuthorized | TransientAuthorityError>
  readonly lookup: (ref: SubmissionRef) => Effect.Effect<Option.Option<AuthorityRecord>, TransientAuthorityError>
  readonly cancel: (request: CancellationRequest) => Effect.Effect<Cancellation, AuthorityRejected | TransientAuthorityError>
}

/** The production system; live keys' documents go here. */
export class TaxAuthorityLive extends Context.Service<TaxAuthorityLive, TaxAuthority>()("etd/TaxAuthorityLive") {}

/** The homologation system; test keys' documents go here. */
export class TaxAuthoritySandbox extends Context.Service<TaxAuthoritySandbox, TaxAuthority>()("etd/TaxAuthoritySandbox") {}

/** Environment code of the national system (tpAmb): 1 production, 2 homologation. */
export const environmentCode = (environment: Environment): 1 | 2 => (environment === "live" ? 1 : 2)
