/**
 * The issuance pipeline (SPEC §6–7): handles one claimed job of the IssuanceQueue — a document's
 * submission or cancellation — and records its outcome. The queue (src/queue/) does the claiming,
 * leasing, fencing and waking; this module only talks to the authority and writes what it said.
 *
 * The authority is called outside any transaction; the outcome is written in one transaction
 * together with the job's completion and the event it causes, only while this worker still holds
 * the job's lease (a worker that lost it writes nothing: the job's new owner reconciles).
 *
 * Never issue twice: a job's attempts are counted when it is claimed, so any attempt after the
 * first (a retry, or a retake after a crash mid-call) first asks the authority, by the document's
 * deterministic submission id, whether it already authorized it, and adopts that authorization.
 * Transient failures are retried on the retry Schedule within a bounded window; rejections are
 * final.
 */
import { Array as Arr, Duration, Effect, Layer, Metric, Option } from "effect"
import {
  type Authorization,
  AuthorityUnavailable,
  type RequestNotSent,
  type SubmissionDocument,
  type SubmissionRef,
  TaxAuthorities,
  type TaxAuthority
} from "../authority/TaxAuthority.js"
import { AppConfig } from "../Config.js"
import { makeTransaction } from "../db/Repository.js"
import type { EventType } from "../domain/Events.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { delayAfter, exponentialBackoff } from "../queue/Backoff.js"
import { LeaseLost } from "../queue/LeasedQueue.js"
import { runWorkerPool } from "../queue/WorkerPool.js"
import { linkedTrace } from "../telemetry/TraceContext.js"
import { TenantService } from "../tenants/TenantService.js"
import { type DocumentChange, DocumentRepo, type StoredDocument, toDocument } from "./DocumentRepo.js"
import { type IssuanceJob, IssuanceQueue } from "./IssuanceQueue.js"
import { documents as documentsMetric } from "../telemetry/Metrics.js"
import { metricsConfig } from "../telemetry/MetricsEndpoint.js"

/** The events that mean a document reached a status of its own (a failed cancellation leaves it authorized). */
const FINAL_STATUSES = new Map<string, string>([
  ["document.authorized", "authorized"],
  ["document.rejected", "rejected"],
  ["document.failed", "failed"],
  ["document.cancelled", "cancelled"]
])

type Outcome =
  | { readonly _tag: "Authorized"; readonly authorization: Authorization }
  | { readonly _tag: "Rejected"; readonly code: string; readonly message: string }
  | { readonly _tag: "Cancelled"; readonly protocol: string | null; readonly cancelledAt: Date }
  | { readonly _tag: "CancellationRefused"; readonly code: string; readonly message: string }
  | { readonly _tag: "Transient"; readonly code: string; readonly message: string }
  | { readonly _tag: "NotSent"; readonly code: string; readonly message: string }

const authorized = (authorization: Authorization): Outcome => ({ _tag: "Authorized", authorization })
const cancelled = (protocol: string | null, cancelledAt: Date): Outcome => ({ _tag: "Cancelled", protocol, cancelledAt })

export const makeIssuanceWorker = Effect.gen(function*() {
  const inTransaction = yield* makeTransaction
  const config = yield* AppConfig
  const repo = yield* DocumentRepo
  const queue = yield* IssuanceQueue
  const tenants = yield* TenantService
  const events = yield* EventLog
  const authorities = yield* TaxAuthorities
  const schedule = exponentialBackoff(config.retry)

  /** The event of an outcome, carrying the document as it now stands (built, not read back). */
  const emit = (document: StoredDocument, type: EventType) =>
    events.record({ tenantId: document.tenantId, environment: document.environment, type, object: toDocument(document) })

  /** Writes the outcome with the job's end (or its retry), in one transaction fenced by the lease. */
  const record = (job: IssuanceJob, row: StoredDocument, outcome: Outcome) =>
    Effect.gen(function*() {
      const at = yield* now
      const lastError = (code: string, message: string) => ({ code, message, at })
      const settle = (change: DocumentChange, event: EventType, nfseXml?: string) =>
        Effect.gen(function*() {
          yield* queue.complete(job, "done")
          yield* repo.update(row.id, change, at, nfseXml)
          yield* emit({ ...row, ...change, updatedAt: at }, event)
          return event
        })
      switch (outcome._tag) {
        case "Authorized": {
          const { accessKey, authorizedAt, nfseNumber, nfseXml, protocol } = outcome.authorization
          return yield* settle({
            status: "authorized",
            authority: { access_key: accessKey, nfse_number: nfseNumber, protocol, authorized_at: authorizedAt }
          }, "document.authorized", nfseXml)
        }
        case "NotSent":
          // Nothing reached the authority: retrying would build and refuse the same request again.
          if (job.kind === "submit") {
            return yield* settle({ status: "failed", lastError: lastError(outcome.code, outcome.message) }, "document.failed")
          }
          return yield* settle({
            status: "authorized",
            cancellation: { ...row.cancellation!, error: { code: outcome.code, message: outcome.message } },
            lastError: lastError(outcome.code, outcome.message)
          }, "document.cancellation_failed")
        case "Rejected":
          return yield* settle({ status: "rejected", rejection: { code: outcome.code, message: outcome.message } }, "document.rejected")
        case "Cancelled":
          return yield* settle({
            status: "cancelled",
            cancellation: {
              ...row.cancellation!,
              cancelled_at: outcome.cancelledAt,
              protocol: outcome.protocol,
              error: null
            }
          }, "document.cancelled")
        case "CancellationRefused":
          return yield* settle({
            status: "authorized",
            cancellation: { ...row.cancellation!, error: { code: outcome.code, message: outcome.message } }
          }, "document.cancellation_failed")
        case "Transient": {
          const delay = Option.getOrElse(yield* delayAfter(schedule, job.attempts), () => config.retry.window)
          const started = job.firstAttemptAt ?? at
          const giveUp = at.getTime() + Duration.toMillis(delay) > started.getTime() + Duration.toMillis(config.retry.window)
          if (!giveUp) {
            yield* queue.retryAt(job, new Date(at.getTime() + Duration.toMillis(delay)))
            yield* repo.update(row.id, { lastError: lastError(outcome.code, outcome.message) }, at)
            return undefined
          }
          if (job.kind === "submit") {
            return yield* settle({ status: "failed", lastError: lastError(outcome.code, outcome.message) }, "document.failed")
          }
          return yield* settle({
            status: "authorized",
            cancellation: {
              ...row.cancellation!,
              error: { code: "authority_unavailable", message: `The authority did not answer: ${outcome.message}` }
            },
            lastError: lastError(outcome.code, outcome.message)
          }, "document.cancellation_failed")
        }
      }
    }).pipe(inTransaction)

  const submissionOf = (row: StoredDocument): SubmissionRef => ({ tenantId: row.tenantId, submissionId: row.submissionId })

  const notSent = (error: RequestNotSent): Effect.Effect<Outcome> =>
    Effect.succeed({ _tag: "NotSent", code: error.code, message: error.message })

  const transient = (error: { readonly _tag: string; readonly message: string }): Outcome => ({
    _tag: "Transient",
    code: error._tag === "AuthorityTimeout" ? "authority_timeout" : "authority_unavailable",
    message: error.message
  })

  const submit = (job: IssuanceJob, row: StoredDocument, authority: TaxAuthority, issuer: SubmissionDocument["issuer"]) =>
    Effect.gen(function*() {
      if (job.attempts > 1) {
        // A previous attempt may have been authorized. If the authority cannot even be asked (the
        // certificate was removed or expired meanwhile), that is no proof of the contrary: keep
        // asking within the retry window rather than fail a document that may exist.
        const found = yield* authority.lookup(submissionOf(row)).pipe(
          Effect.catchTag("RequestNotSent", (error) =>
            Effect.fail(new AuthorityUnavailable({
              message: `Whether the previous attempt was authorized cannot be checked: ${error.message}`
            })))
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
        AuthorityRejected: (rejected) => Effect.succeed<Outcome>({ _tag: "Rejected", code: rejected.code, message: rejected.message }),
        AuthorityUnavailable: (error) => Effect.succeed(transient(error)),
        AuthorityTimeout: (error) => Effect.succeed(transient(error))
      })
    )

  const cancel = (job: IssuanceJob, row: StoredDocument, authority: TaxAuthority, issuerTaxId: string) =>
    Effect.gen(function*() {
      if (job.attempts > 1) {
        const found = yield* authority.lookup(submissionOf(row))
        if (Option.isSome(found) && found.value.status === "cancelled") {
          return cancelled(null, found.value.cancelledAt ?? (yield* now))
        }
      }
      const cancellation = row.cancellation!
      const result = yield* authority.cancel({
        ...submissionOf(row),
        environment: row.environment,
        issuerTaxId,
        accessKey: row.authority!.access_key,
        reasonCode: cancellation.reason_code,
        reason: cancellation.reason,
        requestedAt: cancellation.requested_at
      })
      return cancelled(result.protocol, result.cancelledAt)
    }).pipe(
      Effect.catchTags({
        AuthorityRejected: (refused) =>
          Effect.succeed<Outcome>({ _tag: "CancellationRefused", code: refused.code, message: refused.message }),
        RequestNotSent: notSent,
        AuthorityUnavailable: (error) => Effect.succeed(transient(error)),
        AuthorityTimeout: (error) => Effect.succeed(transient(error))
      })
    )

  /** The documents and tenants of a claim's jobs, read together (two statements per claim, not per job). */
  const prefetch = (jobs: Arr.NonEmptyReadonlyArray<IssuanceJob>) =>
    Effect.gen(function*() {
      const [documents, issuers] = yield* Effect.all([
        repo.findByIds(Arr.map(jobs, (job) => job.documentId)),
        tenants.issuers(Arr.dedupe(Arr.map(jobs, (job) => job.tenantId)))
      ], { concurrency: 2 })
      return { documents: new Map(documents.map((row) => [row.id, row])), issuers }
    })

  type Prefetched = Effect.Success<ReturnType<typeof prefetch>>

  /**
   * Handles one claimed job: a submission or a cancellation, then its outcome. The document and its
   * tenant come from the claim's prefetch, or are read for it alone when there was none.
   */
  const process = (job: IssuanceJob, prefetched?: Prefetched) =>
    Effect.gen(function*() {
      const { documents, issuers } = prefetched ?? (yield* prefetch([job]))
      const row = documents.get(job.documentId)
      if (row === undefined) return
      const expected = job.kind === "submit" ? ["queued", "submitting"] : ["cancel_requested"]
      if (!expected.includes(row.status)) {
        // Already settled (by a previous owner of this job): nothing left to do.
        return yield* queue.complete(job, "done")
      }
      yield* Effect.annotateCurrentSpan({
        "document.id": row.id,
        "tenant.id": row.tenantId,
        "document.environment": row.environment,
        "job.attempt": job.attempts
      })
      const authority = authorities.for(row.environment)
      let outcome: Outcome
      // The document as this job leaves it: the outcome is written over it (and sent with its event).
      let current = row
      const tenant = issuers.get(row.tenantId)
      if (tenant === undefined) return yield* Effect.die(`document ${row.id} has no tenant`)
      if (job.kind === "submit") {
        const at = yield* now
        // Counted only by the lease holder: a stale worker must not touch the document.
        if (!(yield* repo.markSubmitting(row.id, at, queue.holding(job)))) return yield* new LeaseLost()
        current = { ...row, status: "submitting", attempts: row.attempts + 1, updatedAt: at }
        // The tenant as it is now: a Simples Nacional option changed while the document waited applies.
        const { name, simplesNacional, taxId } = tenant
        outcome = yield* submit(job, current, authority, { taxId, name, simplesNacional })
      } else {
        outcome = yield* cancel(job, row, authority, tenant.taxId)
      }
      const event = yield* record(job, current, outcome)
      // Counted once committed: a transaction that rolls back is retried, and would count twice.
      const reached = event === undefined ? undefined : FINAL_STATUSES.get(event)
      if (reached !== undefined) {
        yield* Metric.update(Metric.withAttributes(documentsMetric, { status: reached, environment: row.environment }), 1)
      }
    }).pipe(
      Effect.catchTag("LeaseLost", () => Effect.logWarning("lost the lease on a job; its new owner will reconcile")),
      linkedTrace(`IssuanceWorker.${job.kind}`, { kind: "consumer" }, job.traceparent)
    )

  return { prefetch, process } as const
})

/** The issuance workers: `WORKER_CONCURRENCY` jobs at a time on this instance (src/queue/WorkerPool.ts). */
export const IssuanceWorkersLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const worker = yield* makeIssuanceWorker
    yield* runWorkerPool({
      queue: yield* IssuanceQueue,
      concurrency: config.issuance.concurrency,
      pollInterval: config.issuance.pollInterval,
      lease: config.issuance.lease,
      grace: config.queue.shutdownGrace,
      prefetch: worker.prefetch,
      handle: worker.process,
      metricsInterval: (yield* Effect.orDie(metricsConfig)).sampleInterval
    })
  })
)
