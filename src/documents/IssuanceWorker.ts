/**
 * The durable issuance pipeline (SPEC §6–7). Accepted documents wait in `document_jobs`; workers
 * claim a due job with `FOR UPDATE SKIP LOCKED` and a lease, talk to the authority outside any
 * transaction, and record the outcome in one transaction together with the job's completion and
 * the event it causes. Several instances can run workers on the same queue.
 *
 * Never issue twice: a job's attempts are counted when it is claimed, so any attempt after the
 * first (a retry, or a retake after a crash mid-call) first asks the authority, by the document's
 * deterministic submission id, whether it already authorized it, and adopts that authorization.
 * Transient failures are retried on the retry Schedule within a bounded window; rejections are
 * final. A worker that lost its lease writes nothing: the job's new owner reconciles.
 */
import { randomUUID } from "node:crypto"
import {
  Data,
  Duration,
  Effect,
  Layer,
  Option,
  Result,
  Schedule
} from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import {
  type AuthorityRecord,
  type Authorization,
  TaxAuthorityLive,
  TaxAuthoritySandbox,
  type TaxAuthority
} from "../authority/TaxAuthority.js"
import { AppConfig } from "../Config.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { continueTrace } from "../telemetry/TraceContext.js"
import { EventLog, type EventType } from "../events/EventLog.js"
import { superviseWorkers, workLoop } from "../system/Workers.js"
import { type DocumentRow, type JobRow, DocumentRepo } from "./DocumentRepo.js"
import { toDocument, WorkSignal } from "./DocumentService.js"

/** Exponential backoff with jitter, each delay capped at `maxDelay`. */
export const retrySchedule = (options: { baseDelay: Duration.Duration; maxDelay: Duration.Duration }) =>
  Schedule.exponential(options.baseDelay, 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, options.maxDelay)))
  )

/** The delay before attempt `attempt + 1`, read off the schedule (attempt 1 → its first delay). */
export const retryDelay = (schedule: Schedule.Schedule<unknown, unknown>, attempt: number) =>
  Effect.gen(function*() {
    const step = yield* Schedule.toStep(schedule)
    let delay = Duration.zero
    for (let i = 0; i < attempt; i++) {
      // A schedule that is done has no further delay: the last one it gave stands.
      const next = yield* Effect.result(step(0, undefined))
      if (Result.isFailure(next)) break
      delay = next.success[1]
    }
    return delay
  })

class LeaseLost extends Data.TaggedError("LeaseLost") {}

type Outcome =
  | { readonly _tag: "Authorized"; readonly authorization: Authorization }
  | { readonly _tag: "Rejected"; readonly code: string; readonly message: string }
  | { readonly _tag: "Cancelled"; readonly protocol: string | null; readonly cancelledAt: Date }
  | { readonly _tag: "CancellationRefused"; readonly code: string; readonly message: string }
  | { readonly _tag: "Transient"; readonly code: string; readonly message: string }


export const makeIssuanceWorker = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const repo = yield* DocumentRepo
  const events = yield* EventLog
  const signal = yield* WorkSignal
  const live = yield* TaxAuthorityLive
  const sandbox = yield* TaxAuthoritySandbox
  const authorityFor = (environment: Environment): TaxAuthority => (environment === "live" ? live : sandbox)
  const me = config.worker.instanceId
  const schedule = retrySchedule(config.retry)

  /** Takes the next due job, if any, and counts the attempt. */
  const claim = Effect.gen(function*() {
    const at = yield* now
    const leaseUntil = new Date(at.getTime() + Duration.toMillis(config.worker.lease))
    // Each claim gets its own token: workers of one instance must not pass for each other's lease.
    const lockToken = `${me}:${randomUUID()}`
    const rows = yield* sql<JobRow>`
      UPDATE document_jobs
      SET locked_by = ${lockToken}, locked_until = ${leaseUntil}, attempts = attempts + 1,
          first_attempt_at = COALESCE(first_attempt_at, ${at}), updated_at = ${at}
      WHERE id = (
        SELECT id FROM document_jobs
        WHERE state = 'pending' AND run_at <= ${at} AND (locked_until IS NULL OR locked_until <= ${at})
        ORDER BY run_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING id, document_id, kind, attempts, first_attempt_at, traceparent, locked_by`
    return Option.fromNullishOr(rows[0])
  }).pipe(Effect.withSpan("IssuanceWorker.claim"))

  /** Ends the job, if this worker still holds it; otherwise the whole transaction rolls back. */
  const finishJob = (job: JobRow, at: Date) =>
    Effect.flatMap(
      sql`
        UPDATE document_jobs SET state = 'done', locked_by = NULL, locked_until = NULL, updated_at = ${at}
        WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND state = 'pending'
        RETURNING id`,
      (rows) => (rows.length === 1 ? Effect.void : Effect.fail(new LeaseLost()))
    )

  /** Fails the surrounding transaction unless this claim still holds the job (and locks it). */
  const holdLease = (job: JobRow) =>
    Effect.flatMap(
      sql`
        SELECT id FROM document_jobs
        WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND state = 'pending'
        FOR UPDATE`,
      (rows) => (rows.length === 1 ? Effect.void : Effect.fail(new LeaseLost()))
    )

  const emit = (row: DocumentRow, type: EventType) =>
    Effect.flatMap(repo.findById(row.id), (updated): Effect.Effect<unknown, SqlError.SqlError> =>
      Option.isSome(updated)
        ? events.record({
          tenantId: row.tenantId,
          environment: row.environment,
          type,
          object: toDocument(updated.value)
        })
        : Effect.void)

  const record = (job: JobRow, row: DocumentRow, outcome: Outcome) =>
    Effect.gen(function*() {
      const at = yield* now
      const lastError = (code: string, message: string) => JSON.stringify({ code, message, at: at.toISOString() })
      switch (outcome._tag) {
        case "Authorized": {
          const authority = {
            access_key: outcome.authorization.accessKey,
            protocol: outcome.authorization.protocol,
            authorized_at: outcome.authorization.authorizedAt.toISOString()
          }
          yield* finishJob(job, at)
          yield* sql`
            UPDATE documents SET status = 'authorized', authority = ${JSON.stringify(authority)}::jsonb, updated_at = ${at}
            WHERE id = ${row.id}`
          return yield* emit(row, "document.authorized")
        }
        case "Rejected": {
          yield* finishJob(job, at)
          yield* sql`
            UPDATE documents
            SET status = 'rejected', rejection = ${JSON.stringify({ code: outcome.code, message: outcome.message })}::jsonb,
                updated_at = ${at}
            WHERE id = ${row.id}`
          return yield* emit(row, "document.rejected")
        }
        case "Cancelled": {
          const cancellation = { ...row.cancellation, cancelled_at: outcome.cancelledAt.toISOString(), protocol: outcome.protocol, error: null }
          yield* finishJob(job, at)
          yield* sql`
            UPDATE documents SET status = 'cancelled', cancellation = ${JSON.stringify(cancellation)}::jsonb, updated_at = ${at}
            WHERE id = ${row.id}`
          return yield* emit(row, "document.cancelled")
        }
        case "CancellationRefused": {
          const cancellation = { ...row.cancellation, error: { code: outcome.code, message: outcome.message } }
          yield* finishJob(job, at)
          yield* sql`
            UPDATE documents SET status = 'authorized', cancellation = ${JSON.stringify(cancellation)}::jsonb, updated_at = ${at}
            WHERE id = ${row.id}`
          return yield* emit(row, "document.cancellation_failed")
        }
        case "Transient": {
          const delay = yield* retryDelay(schedule, job.attempts)
          const started = job.firstAttemptAt ?? at
          const giveUp = at.getTime() + Duration.toMillis(delay) > started.getTime() + Duration.toMillis(config.retry.window)
          if (!giveUp) {
            const runAt = new Date(at.getTime() + Duration.toMillis(delay))
            const updated = yield* sql`
              UPDATE document_jobs SET run_at = ${runAt}, locked_by = NULL, locked_until = NULL, updated_at = ${at}
              WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND state = 'pending'
              RETURNING id`
            if (updated.length === 0) return yield* new LeaseLost()
            return yield* sql`
              UPDATE documents SET last_error = ${lastError(outcome.code, outcome.message)}::jsonb, updated_at = ${at}
              WHERE id = ${row.id}`
          }
          yield* finishJob(job, at)
          if (job.kind === "submit") {
            yield* sql`
              UPDATE documents SET status = 'failed', last_error = ${lastError(outcome.code, outcome.message)}::jsonb,
                updated_at = ${at}
              WHERE id = ${row.id}`
            return yield* emit(row, "document.failed")
          }
          const cancellation = {
            ...row.cancellation,
            error: { code: "authority_unavailable", message: `The authority did not answer: ${outcome.message}` }
          }
          yield* sql`
            UPDATE documents SET status = 'authorized', cancellation = ${JSON.stringify(cancellation)}::jsonb,
              last_error = ${lastError(outcome.code, outcome.message)}::jsonb, updated_at = ${at}
            WHERE id = ${row.id}`
          return yield* emit(row, "document.cancellation_failed")
        }
      }
    }).pipe(sql.withTransaction)

  const adopt = (found: AuthorityRecord): Outcome => ({ _tag: "Authorized", authorization: found.authorization })

  const transient = (error: { readonly _tag: string; readonly message: string }): Outcome => ({
    _tag: "Transient",
    code: error._tag === "AuthorityTimeout" ? "authority_timeout" : "authority_unavailable",
    message: error.message
  })

  const submit = (job: JobRow, row: DocumentRow, authority: TaxAuthority, tenant: { name: string; taxId: string }) =>
    Effect.gen(function*() {
      if (job.attempts > 1) {
        const found = yield* authority.lookup(row.submissionId)
        if (Option.isSome(found)) return adopt(found.value)
      }
      const authorization = yield* authority.submit({
        submissionId: row.submissionId,
        document: {
          environment: row.environment,
          issuer: tenant,
          series: row.series,
          number: Number(row.number),
          issueDate: row.issueDate,
          taker: row.taker as Parameters<TaxAuthority["submit"]>[0]["document"]["taker"],
          service: row.service as Parameters<TaxAuthority["submit"]>[0]["document"]["service"],
          amounts: row.amounts as Parameters<TaxAuthority["submit"]>[0]["document"]["amounts"],
          notes: row.notes
        }
      })
      return { _tag: "Authorized", authorization } satisfies Outcome as Outcome
    }).pipe(
      Effect.catchTags({
        AlreadyAuthorized: (existing) =>
          Effect.succeed<Outcome>({
            _tag: "Authorized",
            authorization: { accessKey: existing.accessKey, protocol: existing.protocol, authorizedAt: existing.authorizedAt }
          }),
        AuthorityRejected: (rejected) => Effect.succeed<Outcome>({ _tag: "Rejected", code: rejected.code, message: rejected.message }),
        AuthorityUnavailable: (error) => Effect.succeed(transient(error)),
        AuthorityTimeout: (error) => Effect.succeed(transient(error))
      })
    )

  const cancel = (job: JobRow, row: DocumentRow, authority: TaxAuthority) =>
    Effect.gen(function*() {
      if (job.attempts > 1) {
        const found = yield* authority.lookup(row.submissionId)
        if (Option.isSome(found) && found.value.status === "cancelled") {
          return { _tag: "Cancelled", protocol: null, cancelledAt: found.value.cancelledAt ?? (yield* now) } satisfies Outcome as Outcome
        }
      }
      const cancellation = row.cancellation!
      const result = yield* authority.cancel({
        submissionId: row.submissionId,
        accessKey: row.authority!.access_key,
        reasonCode: cancellation.reason_code as "issue_error" | "service_not_provided" | "other",
        reason: cancellation.reason
      })
      return { _tag: "Cancelled", protocol: result.protocol, cancelledAt: result.cancelledAt } satisfies Outcome as Outcome
    }).pipe(
      Effect.catchTags({
        AuthorityRejected: (refused) =>
          Effect.succeed<Outcome>({ _tag: "CancellationRefused", code: refused.code, message: refused.message }),
        AuthorityUnavailable: (error) => Effect.succeed(transient(error)),
        AuthorityTimeout: (error) => Effect.succeed(transient(error))
      })
    )

  const process = (job: JobRow) =>
    Effect.gen(function*() {
      const found = yield* repo.findById(job.documentId)
      if (Option.isNone(found)) return
      const row = found.value
      const expected = job.kind === "submit" ? ["queued", "submitting"] : ["cancel_requested"]
      if (!expected.includes(row.status)) {
        // Already settled (by a previous owner of this job): nothing left to do.
        yield* sql.withTransaction(Effect.flatMap(now, (at) => finishJob(job, at)))
        return
      }
      yield* Effect.annotateCurrentSpan({
        "document.id": row.id,
        "tenant.id": row.tenantId,
        "document.environment": row.environment,
        "job.attempt": job.attempts
      })
      const authority = authorityFor(row.environment)
      let outcome: Outcome
      if (job.kind === "submit") {
        const [tenant] = yield* sql<{ name: string; taxId: string }>`SELECT name, tax_id FROM tenants WHERE id = ${row.tenantId}`
        const at = yield* now
        // Counted only by the lease holder: a stale worker must not touch the document.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* holdLease(job)
          yield* sql`
            UPDATE documents SET status = 'submitting', attempts = attempts + 1, updated_at = ${at}
            WHERE id = ${row.id} AND status IN ('queued', 'submitting')`
        }))
        outcome = yield* submit(job, row, authority, tenant!)
      } else {
        outcome = yield* cancel(job, row, authority)
      }
      yield* record(job, row, outcome)
    }).pipe(
      Effect.catchTag("LeaseLost", () =>
        Effect.logWarning("lost the lease on a job; its new owner will reconcile").pipe(
          Effect.annotateLogs({ job_id: job.id })
        )),
      Effect.withSpan(`IssuanceWorker.${job.kind}`, { kind: "consumer" }),
      continueTrace(job.traceparent)
    )

  /** One worker: claim and process until told to stop; sleep until woken when the queue is empty. */
  const runWorker = workLoop({
    label: "job",
    claim,
    process,
    idle: Effect.raceFirst(signal.wait, Effect.sleep(config.worker.pollInterval))
  })

  return { claim, process, runWorker } as const
})

/**
 * The workers as a scoped layer. Shutdown is graceful: workers stop claiming, finish the job in
 * hand within the grace period, and are interrupted after it (their leases then expire).
 */
export const IssuanceWorkersLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const worker = yield* makeIssuanceWorker
    yield* superviseWorkers({
      name: "issuance",
      count: config.worker.concurrency,
      grace: config.worker.shutdownGrace,
      worker: worker.runWorker
    })
  })
)
