/**
 * Runs a queue's jobs: a supervised pool that claims due jobs in batches, as many as it has free
 * slots, and handles each in a fiber of its own. It sleeps when the queue is empty until a NOTIFY
 * (sent at the commit that queued work, to every instance) or the poll interval wakes it.
 *
 * A handler's job keeps its lease while it runs (renewed once a third of it has passed), so a long
 * call to a slow authority is not taken over by another worker. Shutdown is graceful: the pool stops
 * claiming, gives the jobs in hand the grace period, and interrupts the rest; their leases then
 * run out and another instance takes them over.
 */
import { PgClient } from "@effect/sql-pg"
import {
  Array as Arr,
  Cause,
  Clock,
  Duration,
  Effect,
  Fiber,
  FiberSet,
  Metric,
  Option,
  Queue,
  Ref,
  Schedule,
  type Scope,
  Semaphore,
  Stream
} from "effect"
import { Readiness } from "../runtime/Readiness.js"
import { queueDepth, queueOldestAge } from "../telemetry/Metrics.js"
import { untraced } from "../telemetry/TraceContext.js"
import type { Lease, LeasedQueue } from "./LeasedQueue.js"

export interface WorkerPoolOptions<Job extends Lease, Prefetched = never> {
  readonly queue: LeasedQueue<Job, never>
  /** Jobs handled at the same time by this instance. */
  readonly concurrency: number
  /** Fallback wake-up when no notification comes (a missed NOTIFY, or a retry falling due). */
  readonly pollInterval: Duration.Duration
  readonly lease: Duration.Duration
  /** How long the jobs in hand may run on at shutdown. */
  readonly grace: Duration.Duration
  /**
   * Handles one claimed job. Its failures and defects are logged, never end the pool: the job
   * gives its lease back and is due again after a pause (a second per attempt so far, at most a
   * lease), when it is taken again (and reconciled by its handler).
   */
  readonly handle: (job: Job, prefetched: Prefetched | undefined) => Effect.Effect<void, unknown>
  /**
   * Reads what the jobs of one claim need, for all of them at once (a statement per kind of row
   * rather than per job), handed to each job's `handle`. A failure here costs only those reads:
   * the handlers get `undefined` and read for themselves.
   */
  readonly prefetch?: (jobs: Arr.NonEmptyReadonlyArray<Job>) => Effect.Effect<Prefetched>
  /** How often the queue's depth and oldest age are read for the metrics; unset, never. */
  readonly metricsInterval?: Duration.Duration
}

/**
 * Keeps the leases of the jobs in hand alive: a job whose lease was taken or last renewed a third
 * of a lease ago is renewed, checked every sixth of a lease, so a renewal comes at most half a
 * lease after the last and a failed one can be tried again before the lease runs out. One loop per
 * pool rather than a timer per job: most jobs end long before a third of their lease. A lost lease
 * is dropped from the set: the handler's own writes are fenced and will find out.
 */
const keepLeased = <Job extends Lease>(
  queue: LeasedQueue<Job, never>,
  inHand: Map<Job, number>,
  lease: Duration.Duration
) =>
  Effect.gen(function*() {
    const third = Duration.toMillis(lease) / 3
    for (;;) {
      yield* Effect.sleep(Duration.millis(third / 2))
      const at = yield* Clock.currentTimeMillis
      for (const [job, leasedAt] of inHand) {
        if (at - leasedAt < third) continue
        const held = yield* queue.renew(job, lease).pipe(
          Effect.as(true),
          Effect.catchTag("LeaseLost", () => Effect.succeed(false)),
          // A database hiccup: the next check tries again (the time stays, so it is due at once).
          Effect.catchDefect((defect) => Effect.as(Effect.logWarning("could not renew a job lease", defect), undefined))
        )
        // The job may have ended while the renewal was under way: it must not come back.
        if (held === true && inHand.has(job)) inHand.set(job, at)
        else if (held === false) inHand.delete(job)
      }
    }
  })

/**
 * Forks the pool in the current scope and registers its claimer with readiness (`<queue>`).
 * Wake-ups come from the queue's NOTIFY channel when the database is PostgreSQL or PGlite.
 */
export const runWorkerPool = <Job extends Lease, Prefetched = never>(
  options: WorkerPoolOptions<Job, Prefetched>
): Effect.Effect<void, never, Scope.Scope | Readiness> =>
  // Claims, polls and lease renewals make no spans (an idle instance exports nothing, SPEC §13);
  // each job's handler starts a trace of its own (`TraceContext.linkedTrace`).
  untraced(Effect.gen(function*() {
    const { queue } = options
    const readiness = yield* Readiness
    const wakeUps = yield* Queue.sliding<void>(1)
    const slots = yield* Semaphore.make(options.concurrency)
    const running = yield* FiberSet.make<void, never>()
    /** Leases of failed jobs being given back; interrupted, not awaited, at shutdown. */
    const givingBack = yield* FiberSet.make<void, never>()
    const stopping = yield* Ref.make(false)

    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isSome(pg)) {
      yield* Effect.forkScoped(
        pg.value.listen(queue.channel).pipe(
          Effect.flatMap((notifications) =>
            Stream.runForEach(Stream.fromQueue(notifications), () => Queue.offer(wakeUps, undefined))
          ),
          Effect.scoped,
          // Without notifications the poll still finds every job, just later.
          Effect.catchCause((cause) =>
            Effect.logWarning(`${queue.name} queue notifications unavailable; polling only`, cause)
          )
        )
      )
    }

    /** The jobs in hand, with when their lease was last taken or renewed. */
    const inHand = new Map<Job, number>()
    yield* Effect.forkScoped(keepLeased(queue, inHand, options.lease))

    /**
     * Gives back the lease of a job whose handler failed: held until it ran out, it would count
     * against its tenant's cap meanwhile, and a tenant whose jobs failed together (the database went
     * away under them) would wait a whole lease. While the database is away the write is tried again
     * every second, until the lease would have run out anyway. Fenced: a job another worker took
     * over, or that its handler ended before failing, is left alone.
     */
    const giveBack = (job: Job) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const pause = Math.min(job.attempts * 1000, Duration.toMillis(options.lease))
        yield* queue.retryAt(job, new Date(at + pause)).pipe(
          Effect.catchTag("LeaseLost", () => Effect.void),
          Effect.catchDefect((defect) => Effect.fail(defect)),
          Effect.retry(Schedule.spaced(Duration.seconds(1)))
        )
        yield* Queue.offer(wakeUps, undefined)
      }).pipe(Effect.timeout(options.lease), Effect.ignore)

    const handle = (job: Job, prefetched: Prefetched | undefined) =>
      Effect.gen(function*() {
        inHand.set(job, yield* Clock.currentTimeMillis)
        yield* options.handle(job, prefetched)
      }).pipe(
        Effect.ensuring(Effect.sync(() => inHand.delete(job))),
        Effect.catchCause((cause) =>
          Effect.andThen(
            Effect.logError(`${queue.name} job failed unexpectedly`, cause),
            // Not at shutdown: an interrupted job's lease runs out, and another instance takes it.
            Cause.hasInterruptsOnly(cause) ? Effect.void : FiberSet.run(givingBack, giveBack(job))
          )
        ),
        Effect.annotateLogs({ queue: queue.name, job_id: String(job.id) }),
        Effect.ensuring(Semaphore.release(slots, 1)),
        // The job's end frees a place under its tenant's cap: due jobs a claim left for that reason
        // can be claimed now, not at the next poll (a claimer that found nothing waits for a wake-up).
        Effect.ensuring(Queue.offer(wakeUps, undefined))
      )

    /** Claims as many jobs as there are free slots (at least one, waited for) and starts them. */
    const claimAndStart = Effect.andThen(
      Semaphore.take(slots, 1),
      Effect.gen(function*() {
        let free = 1
        while (free < options.concurrency && (yield* Semaphore.takeIfAvailable(slots, 1))) free++
        const jobs = yield* queue.claim(free, options.lease).pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logError(`could not claim ${queue.name} jobs`, cause), []))
        )
        if (jobs.length < free) yield* Semaphore.release(slots, free - jobs.length)
        const prefetched = options.prefetch === undefined || !Arr.isReadonlyArrayNonEmpty(jobs)
          ? undefined
          : yield* options.prefetch(jobs).pipe(
            // Bounded: the claimed jobs' leases are not renewed until they start.
            Effect.timeout(Duration.millis(Duration.toMillis(options.lease) / 6)),
            Effect.catchCause((cause) =>
              Effect.as(Effect.logWarning(`could not prefetch for ${queue.name} jobs`, cause), undefined)
            )
          )
        for (const job of jobs) yield* FiberSet.run(running, handle(job, prefetched))
        return jobs.length
        // Once claimed, a job is always started: otherwise its lease would stand idle until it ran out.
      }).pipe(Effect.uninterruptible)
    )

    // The queue's gauges (SPEC §13), read by every instance: each reports the same shared queue.
    if (options.metricsInterval !== undefined) {
      const attributes = { queue: queue.name }
      yield* Effect.forkScoped(Effect.repeat(
        queue.backlog.pipe(
          Effect.flatMap(({ depth, oldestAgeSeconds }) =>
            Effect.andThen(
              Metric.update(Metric.withAttributes(queueDepth, attributes), depth),
              Metric.update(Metric.withAttributes(queueOldestAge, attributes), oldestAgeSeconds)
            )
          ),
          // The database briefly away: the gauges keep their last values until the next reading.
          Effect.catchDefect(() => Effect.void)
        ),
        Schedule.spaced(options.metricsInterval)
      ))
    }

    // The poll is one wake-up per interval: an idle instance claims once per interval.
    yield* Effect.forkScoped(
      Effect.forever(Effect.andThen(Effect.sleep(options.pollInterval), Queue.offer(wakeUps, undefined)))
    )

    // One claimer, one claim at a time, for every slot free when it runs: claims for one tenant
    // take turns in the database anyway (its cap is counted under its lock), so claims side by side
    // would only queue there, each holding a slot and claiming for it alone; one after the other,
    // the slots freed during a claim are all claimed by the next.
    const claimer = yield* Effect.forkScoped(Effect.gen(function*() {
      while (!(yield* Ref.get(stopping))) {
        const claimed = yield* claimAndStart
        if (claimed === 0) yield* Queue.take(wakeUps)
        // One notification may stand for many jobs: keep claiming while there are some.
      }
    }))
    yield* readiness.registerWorker(queue.name, claimer)
    // Added after the fork, so it runs before the scope interrupts it.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Ref.set(stopping, true)
        // Within the grace too: a claim under way (uninterruptible) could hang on a dead database.
        yield* Fiber.interrupt(claimer).pipe(
          Effect.andThen(FiberSet.awaitEmpty(running)),
          Effect.timeout(options.grace),
          Effect.ignore
        )
      })
    )
  }))
