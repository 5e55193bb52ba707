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
import { Clock, Duration, Effect, Fiber, FiberSet, Option, Queue, Ref, type Scope, Semaphore, Stream } from "effect"
import { Readiness } from "../system/Readiness.js"
import type { Lease, LeasedQueue } from "./LeasedQueue.js"

export interface WorkerPoolOptions<Job extends Lease> {
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
   * keeps its lease and is taken again once the lease runs out (and reconciled by its handler).
   */
  readonly handle: (job: Job) => Effect.Effect<void, unknown>
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
 * Forks the pool in the current scope and registers its claimers with readiness (`<queue>-<n>`).
 * Wake-ups come from the queue's NOTIFY channel when the database is PostgreSQL or PGlite.
 */
export const runWorkerPool = <Job extends Lease>(
  options: WorkerPoolOptions<Job>
): Effect.Effect<void, never, Scope.Scope | Readiness> =>
  Effect.gen(function*() {
    const { queue } = options
    const readiness = yield* Readiness
    const wakeUps = yield* Queue.sliding<void>(1)
    const slots = yield* Semaphore.make(options.concurrency)
    const running = yield* FiberSet.make<void, never>()
    const stopping = yield* Ref.make(false)

    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isSome(pg)) {
      yield* Effect.forkScoped(
        pg.value.listen(queue.channel).pipe(
          Effect.flatMap((notifications) => Stream.runForEach(Stream.fromQueue(notifications), () => Queue.offer(wakeUps, undefined))),
          Effect.scoped,
          // Without notifications the poll still finds every job, just later.
          Effect.catchCause((cause) => Effect.logWarning(`${queue.name} queue notifications unavailable; polling only`, cause))
        )
      )
    }

    /** The jobs in hand, with when their lease was last taken or renewed. */
    const inHand = new Map<Job, number>()
    yield* Effect.forkScoped(keepLeased(queue, inHand, options.lease))

    const handle = (job: Job) =>
      Effect.gen(function*() {
        inHand.set(job, yield* Clock.currentTimeMillis)
        yield* options.handle(job)
      }).pipe(
        Effect.ensuring(Effect.sync(() => inHand.delete(job))),
        Effect.catchCause((cause) => Effect.logError(`${queue.name} job failed unexpectedly`, cause)),
        Effect.annotateLogs({ queue: queue.name, job_id: String(job.id) }),
        Effect.ensuring(Semaphore.release(slots, 1))
      )

    /** Claims as many jobs as there are free slots (at least one, waited for) and starts them. */
    const claimAndStart = Effect.andThen(Semaphore.take(slots, 1), Effect.gen(function*() {
      let free = 1
      while (free < options.concurrency && (yield* Semaphore.takeIfAvailable(slots, 1))) free++
      const jobs = yield* queue.claim(free, options.lease).pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logError(`could not claim ${queue.name} jobs`, cause), []))
      )
      if (jobs.length < free) yield* Semaphore.release(slots, free - jobs.length)
      for (const job of jobs) yield* FiberSet.run(running, handle(job))
      return jobs.length
      // Once claimed, a job is always started: otherwise its lease would stand idle until it ran out.
    }).pipe(Effect.uninterruptible))

    // The poll is one wake-up per interval for the pool, not one per claimer: an idle instance
    // claims once per interval, and the claimer it wakes claims for every free slot.
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(options.pollInterval), Queue.offer(wakeUps, undefined))))

    const loop = Effect.gen(function*() {
      while (!(yield* Ref.get(stopping))) {
        const claimed = yield* claimAndStart
        if (claimed === 0) yield* Queue.take(wakeUps)
        // One notification may stand for many jobs: keep claiming while there are some.
      }
    })

    // One claimer per slot: when several slots free up at once, their claims run side by side
    // instead of queueing behind one claimer's round trips; a claimer that finds several free slots
    // claims for all of them at once.
    const claimers = yield* Effect.forEach(Array.from({ length: options.concurrency }, (_, i) => i), (i) =>
      Effect.tap(Effect.forkScoped(loop), (claimer) => readiness.registerWorker(`${queue.name}-${i}`, claimer)))
    // Added after the forks, so it runs before the scope interrupts them.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Ref.set(stopping, true)
        // Within the grace too: a claim under way (uninterruptible) could hang on a dead database.
        yield* Fiber.interruptAll(claimers).pipe(
          Effect.andThen(FiberSet.awaitEmpty(running)),
          Effect.timeout(options.grace),
          Effect.ignore
        )
      })
    )
  })
