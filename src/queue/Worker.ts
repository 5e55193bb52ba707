/**
 * The worker skeleton every queue's pipeline runs on. A pipeline brings what is its own: the reads
 * of a claim (`prefetch`), the call that does the job's work and what it came to (`attempt`, outside
 * any transaction: an authority or a receiver may take seconds), a pure `decide` that turns that into
 * what to write, and a small `apply` that writes it. The skeleton does the rest the same way for all:
 * each job is a trace of its own linked to the one that queued it, the decision is made and written
 * in one transaction that stands only while the job's lease holds, a worker that lost the lease
 * writes nothing more and leaves the job to its new owner, and the jobs run on a supervised pool
 * (WorkerPool) with this instance's concurrency, poll, lease, shutdown grace and queue gauges.
 */
import { type Array as Arr, type Duration, Effect, Option, type Tracer } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction } from "../db/Repository.js"
import { metricsConfig } from "../telemetry/MetricsEndpoint.js"
import { linkedTrace } from "../telemetry/TraceContext.js"
import type { Lease, LeasedQueue, LeaseLost } from "./LeasedQueue.js"
import { runWorkerPool } from "./WorkerPool.js"

/** A claimed job as the skeleton sees it: its lease, and the trace context stored when it was queued. */
export interface TracedJob extends Lease {
  readonly traceparent: string | null
}

export interface Pipeline<Job extends TracedJob, Prefetched, Attempt, Facts, Decision> {
  readonly queue: LeasedQueue<Job, never>
  /** The job's own span, the root of a trace of its own that links to the one that queued the job. */
  readonly span: (job: Job) => {
    readonly name: string
    readonly kind: Tracer.SpanKind
    readonly attributes?: Record<string, unknown>
  }
  /** Logged when another worker took the job over (this one's lease ran out): that one finishes it. */
  readonly leaseLost: string
  /**
   * Reads what the jobs of one claim need, for all of them at once; a job handled alone (no
   * prefetch, or a failed one) is read for by itself.
   */
  readonly prefetch: (jobs: Arr.NonEmptyReadonlyArray<Job>) => Effect.Effect<Prefetched>
  /** Does the job's work and says what it came to; none when there is nothing to write at all. */
  readonly attempt: (job: Job, prefetched: Prefetched) => Effect.Effect<Option.Option<Attempt>, LeaseLost>
  /**
   * What the decision needs to know that only the clock, chance or the database can say (the time,
   * a jittered delay, a counter the outcome moves), read in the transaction that writes the decision.
   */
  readonly facts: (job: Job, attempt: Attempt) => Effect.Effect<Facts, LeaseLost>
  /** What to write: no effects, so every branch is tested without a database. */
  readonly decide: (attempt: Attempt, job: Job, facts: Facts) => Decision
  /**
   * Writes the decision. The job's own writes (the queue's complete, retryAt) are fenced by its
   * lease: when it was lost they fail with LeaseLost, and the transaction takes back the rest.
   */
  readonly apply: (decision: Decision, job: Job) => Effect.Effect<void, LeaseLost>
  /**
   * An attempt whose writes are a single statement needs no transaction: BEGIN and COMMIT would add
   * two round trips to its one. Unset: every attempt is written in a transaction.
   */
  readonly singleWrite?: (attempt: Attempt) => boolean
  /** Runs once the decision is committed (counting it before could count a rolled-back one twice). */
  readonly settled?: (decision: Decision, attempt: Attempt) => Effect.Effect<void>
}

export interface Worker<Job extends TracedJob, Prefetched> {
  readonly queue: LeasedQueue<Job, never>
  readonly prefetch: (jobs: Arr.NonEmptyReadonlyArray<Job>) => Effect.Effect<Prefetched>
  /** Handles one claimed job, with the claim's prefetch when there was one. */
  readonly process: (job: Job, prefetched?: Prefetched) => Effect.Effect<void>
}

export const makeWorker = <Job extends TracedJob, Prefetched, Attempt, Facts, Decision>(
  pipeline: Pipeline<Job, Prefetched, Attempt, Facts, Decision>
) =>
  Effect.map(makeTransaction, (inTransaction): Worker<Job, Prefetched> => {
    const record = (job: Job, attempt: Attempt) => {
      const write = Effect.gen(function*() {
        const decision = pipeline.decide(attempt, job, yield* pipeline.facts(job, attempt))
        yield* pipeline.apply(decision, job)
        return decision
      })
      return pipeline.singleWrite?.(attempt) === true ? write : inTransaction(write)
    }

    const process = (job: Job, prefetched?: Prefetched) => {
      const span = pipeline.span(job)
      return Effect.gen(function*() {
        const attempt = yield* pipeline.attempt(job, prefetched ?? (yield* pipeline.prefetch([job])))
        if (Option.isNone(attempt)) return
        const decision = yield* record(job, attempt.value)
        if (pipeline.settled !== undefined) yield* pipeline.settled(decision, attempt.value)
      }).pipe(
        Effect.catchTag("LeaseLost", () => Effect.logWarning(pipeline.leaseLost)),
        linkedTrace(span.name, span, job.traceparent)
      )
    }

    return { queue: pipeline.queue, prefetch: pipeline.prefetch, process }
  })

/** How one pipeline's pool runs on this instance (AppConfig's `issuance`, `webhooks`). */
export interface PoolSettings {
  /** Jobs handled at the same time by this instance. */
  readonly concurrency: number
  readonly pollInterval: Duration.Duration
  readonly lease: Duration.Duration
}

/** Runs `worker`'s jobs on a supervised pool in the current scope (WorkerPool), stopped with it. */
export const runWorker = <Job extends TracedJob, Prefetched>(worker: Worker<Job, Prefetched>, settings: PoolSettings) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* runWorkerPool({
      queue: worker.queue,
      concurrency: settings.concurrency,
      pollInterval: settings.pollInterval,
      lease: settings.lease,
      grace: config.queue.shutdownGrace,
      prefetch: worker.prefetch,
      handle: worker.process,
      metricsInterval: (yield* Effect.orDie(metricsConfig)).sampleInterval
    })
  })
