/**
 * What an issuance job's outcome means for its document (SPEC §6–7), as data: the authority's
 * answer (an `IssuanceOutcome`) goes in, what to write (an `IssuanceDecision`) comes out, and
 * `IssuanceWorker` writes it. Pure, so every rule here is tested without a database or an authority.
 */
import { Data, Duration, Option } from "effect"
import type { GoodsAuthorization } from "../authority/GoodsAuthority.js"
import { type Authorization, noteAmountsOf, noteIbsCbsOf } from "../authority/TaxAuthority.js"
import type { TakerNotificationKind } from "../domain/Document.js"
import type { EventType } from "../domain/Events.js"
import type { ContingencyInfo } from "../domain/GoodsDocument.js"
import type { DocumentId } from "../domain/Ids.js"
import type { DocumentChange, StoredDocument } from "./DocumentRepo.js"
import type { IssuanceJob } from "./IssuanceQueue.js"

/** What the job's call to the authority came to. */
export type IssuanceOutcome = Data.TaggedEnum<{
  /** The authority authorized the note (now, or on an earlier attempt it was asked about). */
  Authorized: { readonly authorization: Authorization }
  /** The state authority authorized the goods note (now, or on an earlier attempt), its `nfeProc` with it. */
  GoodsAuthorized: { readonly authorization: GoodsAuthorization }
  /** The NFC-e was issued offline (the authority could not be reached): its signed note, to transmit later. */
  GoodsOffline: { readonly contingency: ContingencyInfo; readonly xml: string }
  /** The authority refused the submission: final. */
  Rejected: { readonly code: string; readonly message: string }
  /** The note is cancelled; `protocol` is null when an earlier attempt's cancellation was found. */
  Cancelled: { readonly protocol: string | null; readonly cancelledAt: Date }
  /** The authority registered the request for the municipality's analysis (e101103): it decides later. */
  AnalysisRequested: { readonly protocol: string | null }
  /** The municipality has not decided the analysis request yet (or could not be asked): ask again later. */
  AnalysisPending: {}
  /** The authority refused the cancellation (or the municipality the analysis): the note stays authorized. */
  CancellationRefused: { readonly code: string; readonly message: string }
  /** No answer, or the authority was unavailable: worth asking again. */
  Transient: { readonly code: string; readonly message: string }
  /** The request never left (it could not be signed): asking again would fail the same way. */
  NotSent: { readonly code: string; readonly message: string }
  /** The document is no longer in a state this job acts on: an earlier owner of the job settled it. */
  AlreadySettled: {}
}>
export const IssuanceOutcome = Data.taggedEnum<IssuanceOutcome>()

/** A request that never left (no usable certificate, a note our schema check refused). */
export const notSentOutcome = (error: { readonly code: string; readonly message: string }) =>
  IssuanceOutcome.NotSent({ code: error.code, message: error.message })

/** No answer, or the authority unavailable: worth asking again. */
export const transientOutcome = (error: { readonly _tag: string; readonly message: string }) =>
  IssuanceOutcome.Transient({
    code: error._tag === "AuthorityTimeout" ? "authority_timeout" : "authority_unavailable",
    message: error.message
  })

/** The outcomes after which the job is due again by the retry schedule. */
export const isRetried = (outcome: IssuanceOutcome): boolean =>
  outcome._tag === "Transient" || outcome._tag === "GoodsOffline"

/** What to write for an outcome. */
export type IssuanceDecision = Data.TaggedEnum<{
  /**
   * The job is done: the document changes by `change` (and keeps the note's XML, when authorized),
   * and `event` is recorded carrying `document`, the document as it then stands.
   */
  Settle: {
    readonly at: Date
    readonly change: DocumentChange
    readonly nfseXml: string | undefined
    readonly event: EventType
    readonly document: StoredDocument
    /** The job goes on at this time rather than ending (an analysis request, then its decision, is awaited). */
    readonly continueAt?: Date | undefined
  }
  /** The job is due again at `runAt`, nothing else changes (an analysis still undecided). */
  Poll: { readonly runAt: Date }
  /** The job is due again at `runAt`; the document keeps the error meanwhile. */
  Retry: { readonly at: Date; readonly runAt: Date; readonly documentId: DocumentId; readonly change: DocumentChange }
  /** The job ends and the document is left as it is. */
  Complete: {}
}>
export const IssuanceDecision = Data.taggedEnum<IssuanceDecision>()

interface Problem {
  readonly code: string
  readonly message: string
}

/** What the decision needs besides the outcome, the job and its document. */
export interface IssuanceFacts {
  readonly at: Date
  /** The retry schedule's delay after this job's attempts, for a transient outcome; none otherwise, or when it has none to give. */
  readonly retryDelay: Option.Option<Duration.Duration>
  /** How long after its first attempt a job is still retried (AppConfig `retry.window`). */
  readonly retryWindow: Duration.Duration
  /** How often an undecided analysis request is asked about (AppConfig `retry.maxDelay`); default 5 minutes. */
  readonly analysisPoll?: Duration.Duration | undefined
  /** The tenant's `note_mail.enabled` (its default, true, when not given). */
  readonly noteMailEnabled?: boolean | undefined
  /** A test note whose taker's address is no verified member's of the tenant: its mail is not sent. */
  readonly takerIsTestRecipient?: boolean | undefined
}

/** The events after which the taker is e-mailed the note, and which mail each is. */
const takerMails: Partial<Record<EventType, TakerNotificationKind>> = {
  "document.authorized": "authorized",
  "document.cancelled": "cancelled"
}

/**
 * The document's mail to its taker as `event` leaves it: queued (`pending`), or why none is sent
 * (a test note to an address that is no verified member's of the tenant is decided here, so no
 * mail is queued only to be withheld). Nothing for the other events, which keep the mail as it was.
 */
export const takerNotificationOn = (
  event: EventType,
  document: Pick<StoredDocument, "taker">,
  noteMailEnabled: boolean,
  at: Date,
  testRecipient = false
): DocumentChange => {
  const kind = takerMails[event]
  if (kind === undefined) return {}
  const status = document.taker?.email === undefined
    ? "no_address"
    : !noteMailEnabled
    ? "disabled"
    : testRecipient
    ? "test_recipient"
    : "pending"
  return { takerNotification: { kind, status, attempts: 0, sent_at: null, last_error: null, updated_at: at } }
}

/**
 * `document` is the document as the job's attempt left it (a submission's attempt counted). A
 * transient failure is retried while the next attempt would still fall within the retry window
 * from the first; past it, a submission fails and a cancellation is given up (the note stays
 * authorized, with the error on its cancellation).
 */
export const decideIssuance = (
  outcome: IssuanceOutcome,
  job: Pick<IssuanceJob, "kind" | "firstAttemptAt">,
  document: StoredDocument,
  facts: IssuanceFacts
): IssuanceDecision => {
  const { at } = facts
  const lastError = (code: string, message: string) => ({ code, message, at })
  const settle = (outcomeChange: DocumentChange, event: EventType, nfseXml?: string, continueAt?: Date) => {
    const change = {
      ...outcomeChange,
      // Only a service invoice's taker is mailed its note.
      ...(document.type === "service_invoice"
        ? takerNotificationOn(event, document, facts.noteMailEnabled ?? true, at, facts.takerIsTestRecipient)
        : {})
    }
    return IssuanceDecision.Settle({
      at,
      change,
      nfseXml,
      event,
      // The change's authority is of the document's own type: its outcome came from its own authority.
      document: { ...document, ...change, updatedAt: at } as StoredDocument,
      ...(continueAt === undefined ? {} : { continueAt })
    })
  }
  const nextPoll = () => new Date(at.getTime() + Duration.toMillis(facts.analysisPoll ?? Duration.minutes(5)))
  /** When the schedule says to try again, or at the next poll when it has no step left to give. */
  const nextTry = () =>
    Option.match(facts.retryDelay, {
      onNone: nextPoll,
      onSome: (delay) => new Date(at.getTime() + Duration.toMillis(delay))
    })
  /**
   * An NFC-e issued offline exists for its consumer: it is transmitted until the authority answers,
   * however long that takes (past its deadline too), never given up as failed.
   */
  const transmitLater = (problem: Problem) =>
    IssuanceDecision.Retry({
      at,
      runAt: nextTry(),
      documentId: document.id,
      change: { lastError: lastError(problem.code, problem.message) }
    })
  /** The note stays authorized; its cancellation carries `error`. */
  const cancellationFailed = (error: Problem, change: DocumentChange = {}) =>
    settle(
      { status: "authorized", cancellation: { ...document.cancellation!, error }, ...change },
      "document.cancellation_failed"
    )
  /**
   * Ends the job on `problem` without the authority's word: a submission fails, a cancellation
   * fails with `cancellationError`.
   */
  const giveUp = (problem: Problem, cancellationError: Problem) => {
    const error = lastError(problem.code, problem.message)
    return job.kind === "submit"
      ? settle({ status: "failed", lastError: error }, "document.failed")
      : cancellationFailed(cancellationError, { lastError: error })
  }
  switch (outcome._tag) {
    case "AlreadySettled":
      return IssuanceDecision.Complete()
    case "Authorized": {
      const { accessKey, authorizedAt, nfseNumber, nfseXml, protocol } = outcome.authorization
      const amounts = outcome.authorization.amounts ?? noteAmountsOf(nfseXml)
      const handed = outcome.authorization.ibsCbs
      const ibsCbs = handed === undefined ? noteIbsCbsOf(nfseXml) : handed ?? undefined
      return settle(
        {
          status: "authorized",
          authority: {
            access_key: accessKey,
            nfse_number: nfseNumber,
            protocol,
            authorized_at: authorizedAt,
            ...(amounts === undefined ? {} : { amounts }),
            ...(ibsCbs === undefined ? {} : { ibs_cbs: ibsCbs })
          }
        },
        "document.authorized",
        nfseXml
      )
    }
    case "GoodsAuthorized": {
      const { accessKey, authorizedAt, protocol, xml } = outcome.authorization
      return settle(
        { status: "authorized", authority: { access_key: accessKey, protocol, authorized_at: authorizedAt } },
        "document.authorized",
        xml
      )
    }
    case "GoodsOffline":
      return settle(
        { status: "contingency", contingency: outcome.contingency },
        "document.contingency",
        outcome.xml,
        nextTry()
      )
    case "Rejected":
      return settle(
        { status: "rejected", rejection: { code: outcome.code, message: outcome.message } },
        "document.rejected"
      )
    case "Cancelled":
      return settle({
        status: "cancelled",
        cancellation: {
          ...document.cancellation!,
          cancelled_at: outcome.cancelledAt,
          protocol: outcome.protocol,
          error: null
        }
      }, "document.cancelled")
    case "CancellationRefused":
      return cancellationFailed({ code: outcome.code, message: outcome.message })
    case "AnalysisRequested":
      return settle(
        {
          status: "cancellation_in_analysis",
          cancellation: { ...document.cancellation!, protocol: outcome.protocol, error: null }
        },
        "document.cancellation_in_analysis",
        undefined,
        nextPoll()
      )
    case "AnalysisPending":
      return IssuanceDecision.Poll({ runAt: nextPoll() })
    case "NotSent":
      // Nothing reached the authority: retrying would build and refuse the same request again, but
      // for a note issued offline, which waits for what is missing (a certificate, say).
      return document.status === "contingency"
        ? transmitLater(outcome)
        : giveUp(outcome, { code: outcome.code, message: outcome.message })
    case "Transient": {
      if (document.status === "contingency") return transmitLater(outcome)
      const delay = Duration.toMillis(Option.getOrElse(facts.retryDelay, () => facts.retryWindow))
      const started = job.firstAttemptAt ?? at
      if (at.getTime() + delay <= started.getTime() + Duration.toMillis(facts.retryWindow)) {
        return IssuanceDecision.Retry({
          at,
          runAt: new Date(at.getTime() + delay),
          documentId: document.id,
          change: { lastError: lastError(outcome.code, outcome.message) }
        })
      }
      return giveUp(outcome, {
        code: "authority_unavailable",
        message: `The authority did not answer: ${outcome.message}`
      })
    }
  }
}
