/**
 * The issuance pipeline (SPEC §6–7): handles one claimed job of the IssuanceQueue (a document's
 * submission or cancellation) and records its outcome. The queue (src/queue/) claims, leases, fences
 * and wakes; this module talks to the authority and writes what it said, as IssuanceDecision says.
 *
 * The authority is called outside any transaction; the outcome is written with the job's completion
 * and the event it causes, only while this worker holds the job's lease (a worker that lost it
 * writes nothing: the job's new owner reconciles).
 *
 * Never issue twice: a job's attempts are counted when it is claimed, so any attempt after the
 * first (a retry, or a retake after a crash mid-call) first asks the authority, by the document's
 * deterministic submission id, whether it already authorized it, and adopts that authorization.
 * Transient failures are retried within a bounded window; rejections are final (goods: GoodsIssuance.ts).
 */
import { Array as Arr, Effect, Layer, Metric, Option } from "effect"
import {
  AuthorityUnavailable,
  type Authorization,
  type RequestNotSent,
  type SubmissionDocument,
  type SubmissionRef,
  TaxAuthorities,
  type TaxAuthority
} from "../authority/TaxAuthority.js"
import { AppConfig } from "../Config.js"
import { ibsCbsDifferences } from "../domain/IbsCbsFigures.js"
import { amountDifferences } from "../domain/NoteAmounts.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { Outbox } from "../mail/Outbox.js"
import { delayAfter, exponentialBackoff } from "../queue/Backoff.js"
import { LeaseLost } from "../queue/LeasedQueue.js"
import { makeWorker, runWorker } from "../queue/Worker.js"
import { documents as documentsMetric } from "../telemetry/Metrics.js"
import { TenantService } from "../tenants/TenantService.js"
import { type DocumentChange, DocumentRepo, type StoredDocument, type StoredServiceDocument } from "./DocumentRepo.js"
import { isServiceDocument, toDocument } from "./DocumentView.js"
import { makeGoodsIssuance } from "./GoodsIssuance.js"
import {
  decideIssuance,
  isRetried,
  type IssuanceDecision,
  type IssuanceFacts,
  IssuanceOutcome,
  notSentOutcome,
  transientOutcome
} from "./IssuanceDecision.js"
import { type IssuanceJob, IssuanceQueue } from "./IssuanceQueue.js"
import { NoteFileRepo } from "./NoteFileRepo.js"

/** The events that mean a document reached a status of its own (a failed cancellation leaves it authorized). */
const FINAL_STATUSES = new Map<string, string>([
  ["document.authorized", "authorized"],
  ["document.contingency", "contingency"],
  ["document.rejected", "rejected"],
  ["document.failed", "failed"],
  ["document.cancelled", "cancelled"],
  ["document.cancellation_in_analysis", "cancellation_in_analysis"]
])

/** The document a job acts on, as the job's attempt left it, what the authority said, and its tenant's switch. */
interface IssuanceAttempt {
  readonly document: StoredDocument
  readonly outcome: IssuanceOutcome
  readonly noteMailEnabled: boolean
  /** A test note whose taker is no verified member of the tenant (its mail is withheld). */
  readonly testRecipient?: boolean
}

export const makeIssuanceWorker = Effect.gen(function*() {
  const config = yield* AppConfig
  const repo = yield* DocumentRepo
  const queue = yield* IssuanceQueue
  const tenants = yield* TenantService
  const events = yield* EventLog
  const outbox = yield* Outbox
  const authorities = yield* TaxAuthorities
  const goods = yield* makeGoodsIssuance
  const schedule = exponentialBackoff(config.retry)

  /**
   * The note's own amounts are what the document shows; where they differ from the service's
   * computation (another municipal rate, another rounding) it is said, never hidden nor fatal.
   */
  const warnOnDifferences = (stored: StoredDocument) => {
    if (!isServiceDocument(stored)) return Effect.void
    const document = stored
    const note = document.authority?.amounts
    const authorized = document.status === "authorized"
    const differences = [
      ...(note === undefined || !authorized ? [] : amountDifferences(document.amounts, note)),
      ...(authorized ? ibsCbsDifferences(document.amounts.ibs_cbs, document.authority?.ibs_cbs) : [])
    ]
    return differences.length === 0 ? Effect.void : Effect.logWarning(
      "The authorized note's amounts differ from the service's computation; the document shows the note's"
    ).pipe(Effect.annotateLogs({ "document.id": document.id, differences: JSON.stringify(differences) }))
  }

  /**
   * Writes a decision: the job's end (or its retry), the document's change and the event it causes,
   * in one statement fenced by the job's lease; a lost lease writes nothing and is LeaseLost.
   */
  const apply = (decision: IssuanceDecision, job: IssuanceJob) =>
    Effect.gen(function*() {
      switch (decision._tag) {
        case "Complete":
          return yield* queue.complete(job, "done")
        case "Poll":
          return yield* queue.retryAt(job, decision.runAt)
        case "Retry": {
          const ending = queue.ending(job, { runAt: decision.runAt }, decision.at)
          if (!(yield* repo.settle(decision.documentId, decision.change, decision.at, undefined, ending))) {
            return yield* new LeaseLost()
          }
          return
        }
        case "Settle": {
          const { document } = decision
          const ending = queue.ending(
            job,
            decision.continueAt === undefined ? { final: "done" } : { runAt: decision.continueAt },
            decision.at
          )
          // The event carries the document as it now stands (built, not read back).
          const event = yield* events.recording({
            tenantId: document.tenantId,
            environment: document.environment,
            type: decision.event,
            object: toDocument(document)
          })
          // The taker's mail is queued by the statement that settles the outcome, fenced by the
          // job's lease like the event: a crash before it commits queues nothing (the job's retake
          // settles again), after it the mail is queued once, whoever retakes the job.
          const mail = yield* takerMail(document, decision.change)
          const alongside = mail === undefined ? [event] : [event, mail]
          if (!(yield* repo.settle(document.id, decision.change, decision.at, decision.nfseXml, ending, alongside))) {
            return yield* new LeaseLost()
          }
          yield* warnOnDifferences(document)
          if (decision.event === "document.authorized" && document.substitutes !== null) {
            yield* settleOriginal(document, decision.at)
          }
        }
      }
    })

  /** The taker's mail the change queues, if any (IssuanceDecision.takerNotificationOn). */
  const takerMail = (document: StoredDocument, change: DocumentChange) => {
    const notification = change.takerNotification
    const to = document.taker?.email
    if (notification?.status !== "pending" || to === undefined) return Effect.succeed(undefined)
    return outbox.queueing({
      to,
      locale: "pt-BR",
      message: { template: "taker_note", documentId: document.id, kind: notification.kind }
    })
  }

  /**
   * A substitute is authorized: the national system cancelled its original by substitution
   * (e105102), so the original ends `substituted`, linked to it, in the same transaction.
   */
  const settleOriginal = (substitute: StoredDocument, at: Date) =>
    Effect.gen(function*() {
      const original = yield* repo.markSubstituted(substitute.substitutes!, substitute.id, at)
      if (Option.isNone(original)) {
        // Cancelled (or replaced) here meanwhile, though the authority took the substitution.
        return yield* Effect.logWarning("the original of an authorized substitute was no longer standing", {
          "document.id": substitute.id,
          "document.substitutes": substitute.substitutes
        })
      }
      yield* events.record({
        tenantId: original.value.tenantId,
        environment: original.value.environment,
        type: "document.substituted",
        object: toDocument(original.value)
      })
    })

  const submissionOf = (row: StoredDocument): SubmissionRef => ({
    tenantId: row.tenantId,
    submissionId: row.submissionId
  })

  const authorized = (authorization: Authorization) => IssuanceOutcome.Authorized({ authorization })

  const notSent = (error: RequestNotSent) => Effect.succeed(notSentOutcome(error))
  const transient = (error: { readonly _tag: string; readonly message: string }) =>
    Effect.succeed(transientOutcome(error))

  const submit = (
    job: IssuanceJob,
    row: StoredServiceDocument,
    authority: TaxAuthority,
    issuer: SubmissionDocument["issuer"]
  ) =>
    Effect.gen(function*() {
      if (job.attempts > 1) {
        // A previous attempt may have been authorized. If the authority cannot even be asked (the
        // certificate was removed or expired meanwhile), that is no proof of the contrary: keep
        // asking within the retry window rather than fail a document that may exist.
        const found = yield* authority.lookup(submissionOf(row)).pipe(
          Effect.catchTag("RequestNotSent", (error) =>
            Effect.fail(
              new AuthorityUnavailable({
                message: `Whether the previous attempt was authorized cannot be checked: ${error.message}`
              })
            ))
        )
        if (Option.isSome(found)) return authorized(found.value.authorization)
      }
      const authorization = yield* authority.submit({ ...submissionOf(row), document: { ...row, issuer } })
      return authorized(authorization)
    }).pipe(
      Effect.catchTags({
        AlreadyAuthorized: (existing) =>
          Effect.succeed(authorized({
            accessKey: existing.accessKey,
            protocol: existing.protocol,
            authorizedAt: existing.authorizedAt,
            nfseNumber: existing.nfseNumber,
            nfseXml: existing.nfseXml
          })),
        RequestNotSent: notSent,
        AuthorityRejected: (rejected) =>
          Effect.succeed(IssuanceOutcome.Rejected({ code: rejected.code, message: rejected.message })),
        AuthorityUnavailable: transient,
        AuthorityTimeout: transient
      })
    )

  /** Whether the municipality decided the note's analysis request; any failure to ask is asked again later. */
  const awaitAnalysis = (row: StoredDocument, authority: TaxAuthority) =>
    authority.analysisDecision({ ...submissionOf(row), accessKey: row.authority!.access_key }).pipe(
      Effect.map(Option.match({
        onNone: () => IssuanceOutcome.AnalysisPending(),
        onSome: (decision) =>
          decision.granted
            ? IssuanceOutcome.Cancelled({
              protocol: row.cancellation?.protocol ?? null,
              cancelledAt: decision.decidedAt
            })
            : IssuanceOutcome.CancellationRefused({ code: decision.code, message: decision.message })
      })),
      Effect.catch(() => Effect.succeed(IssuanceOutcome.AnalysisPending()))
    )

  const cancel = (job: IssuanceJob, row: StoredDocument, authority: TaxAuthority, issuerTaxId: string) =>
    Effect.gen(function*() {
      const cancellation = row.cancellation!
      if (job.attempts > 1 && cancellation.analysis !== true) {
        const found = yield* authority.lookup(submissionOf(row))
        if (Option.isSome(found) && found.value.status === "cancelled") {
          return IssuanceOutcome.Cancelled({ protocol: null, cancelledAt: found.value.cancelledAt ?? (yield* now) })
        }
      }
      const result = yield* authority.cancel({
        ...submissionOf(row),
        environment: row.environment,
        issuerTaxId,
        accessKey: row.authority!.access_key,
        reasonCode: cancellation.reason_code,
        reason: cancellation.reason,
        requestedAt: cancellation.requested_at,
        analysis: cancellation.analysis
      })
      return result.status === "in_analysis"
        ? IssuanceOutcome.AnalysisRequested({ protocol: result.protocol })
        : IssuanceOutcome.Cancelled({ protocol: result.protocol, cancelledAt: result.cancelledAt })
    }).pipe(
      Effect.catchTags({
        AuthorityRejected: (refused) =>
          Effect.succeed(IssuanceOutcome.CancellationRefused({ code: refused.code, message: refused.message })),
        RequestNotSent: notSent,
        AuthorityUnavailable: transient,
        AuthorityTimeout: transient
      })
    )

  /**
   * The documents and tenants of a claim's jobs, read together (two statements per claim, not per
   * job), and which of its test notes' takers may be mailed (a third, when there are any).
   */
  const prefetch = (jobs: Arr.NonEmptyReadonlyArray<IssuanceJob>) =>
    Effect.gen(function*() {
      const [documents, issuers] = yield* Effect.all([
        repo.findByIds(Arr.map(jobs, (job) => job.documentId)),
        tenants.issuers(Arr.dedupe(Arr.map(jobs, (job) => job.tenantId)))
      ], { concurrency: 2 })
      const mailedInTest = documents.flatMap((row) =>
        row.environment === "test" && row.taker?.email !== undefined && issuers.get(row.tenantId)?.noteMailEnabled
          ? [{ tenantId: row.tenantId, email: row.taker.email }]
          : []
      )
      const isMember = Arr.isReadonlyArrayNonEmpty(mailedInTest)
        ? yield* tenants.verifiedRecipients(mailedInTest)
        : () => false
      return { documents: new Map(documents.map((row) => [row.id, row])), issuers, isMember }
    })

  /**
   * Calls the authority for one claimed job: a submission or a cancellation. Nothing to write when
   * the document is missing; nothing but the job's end when an earlier owner of the job settled it.
   */
  const attempt = (
    job: IssuanceJob,
    { documents, isMember, issuers }: Effect.Success<ReturnType<typeof prefetch>>
  ): Effect.Effect<Option.Option<IssuanceAttempt>> =>
    Effect.gen(function*() {
      const row = documents.get(job.documentId)
      if (row === undefined) return Option.none()
      const expected = job.kind === "submit"
        ? ["queued", "submitting", "contingency"]
        : ["cancel_requested", "cancellation_in_analysis"]
      if (!expected.includes(row.status)) {
        return Option.some({ document: row, outcome: IssuanceOutcome.AlreadySettled(), noteMailEnabled: true })
      }
      yield* Effect.annotateCurrentSpan({
        "document.id": row.id,
        "tenant.id": row.tenantId,
        "document.environment": row.environment,
        "job.attempt": job.attempts
      })
      const tenant = issuers.get(row.tenantId)
      if (tenant === undefined) return yield* Effect.die(`document ${row.id} has no tenant`)
      if (!isServiceDocument(row)) {
        const outcome = job.kind === "submit" ? yield* goods.submit(job, row) : yield* goods.cancel(row)
        return Option.some({ document: row, noteMailEnabled: false, outcome })
      }
      const authority = authorities.for(row.environment)
      const { noteMailEnabled } = tenant
      const email = row.taker?.email
      const testRecipient = row.environment === "test" && email !== undefined && !isMember(row.tenantId, email)
      if (job.kind === "cancel") {
        const outcome = row.status === "cancellation_in_analysis"
          ? yield* awaitAnalysis(row, authority)
          : yield* cancel(job, row, authority, tenant.taxId)
        return Option.some({ document: row, outcome, noteMailEnabled, testRecipient })
      }
      // The tenant as it is now: a Simples Nacional option or registration changed while the document
      // waited applies, but not the municipality of emission, part of the DPS id it was accepted with.
      const { name, registration, simplesNacional, taxId } = tenant
      const municipalityCode = row.issuerMunicipalityCode ?? row.service.municipality_code
      // The document as the job's claim left it (`submitting`, this attempt counted: IssuanceQueue):
      // the outcome is written over it (and sent with its event).
      return Option.some({
        document: row,
        noteMailEnabled,
        testRecipient,
        outcome: yield* submit(job, row, authority, {
          taxId,
          name,
          simplesNacional,
          municipalityCode,
          registration
        })
      })
    })

  return yield* makeWorker({
    queue,
    span: (job: IssuanceJob) => ({ name: `IssuanceWorker.${job.kind}`, kind: "consumer" }),
    leaseLost: "lost the lease on a job; its new owner will reconcile",
    prefetch,
    attempt,
    facts: (job, { noteMailEnabled, outcome, testRecipient }): Effect.Effect<IssuanceFacts> =>
      Effect.gen(function*() {
        return {
          at: yield* now,
          retryDelay: isRetried(outcome) ? yield* delayAfter(schedule, job.attempts) : Option.none(),
          retryWindow: config.retry.window,
          analysisPoll: config.retry.maxDelay,
          noteMailEnabled,
          takerIsTestRecipient: testRecipient
        }
      }),
    decide: ({ document, outcome }, job, facts) => decideIssuance(outcome, job, document, facts),
    apply,
    // Every decision is one statement, but for an authorized substitute: its original ends with it.
    singleWrite: ({ document, outcome }) => outcome._tag !== "Authorized" || document.substitutes === null,
    settled: (decision, { document }) => {
      const reached = decision._tag === "Settle" ? FINAL_STATUSES.get(decision.event) : undefined
      return reached === undefined
        ? Effect.void
        : Metric.update(
          Metric.withAttributes(documentsMetric, { status: reached, environment: document.environment }),
          1
        )
    }
  })
})

/** The issuance workers: `WORKER_CONCURRENCY` jobs at a time on this instance (src/queue/Worker.ts). */
export const IssuanceWorkersLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* runWorker(yield* makeIssuanceWorker, config.issuance)
  })
).pipe(Layer.provide(NoteFileRepo.layer))
