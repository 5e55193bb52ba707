/**
 * The shape every background worker shares (issuance, webhook dispatch): a loop that claims one
 * leased job at a time and processes it, run by a pool of supervised fibers that readiness watches
 * and that shut down gracefully.
 */
import { type Duration, Effect, Fiber, Option, Ref, type Scope } from "effect"
import { Readiness } from "./Readiness.js"

export interface WorkLoop<Job> {
  /** What the logs call one unit of work. */
  readonly label: string
  /** Takes the next due job under a lease, if any. */
  readonly claim: Effect.Effect<Option.Option<Job>, unknown>
  readonly process: (job: Job) => Effect.Effect<unknown, unknown>
  /** Waits for new work (a signal or the poll interval) when the queue is empty. */
  readonly idle: Effect.Effect<unknown>
  /** Runs after a successful claim, before processing (e.g. pass a wake-up on to a sibling). */
  readonly onClaim?: Effect.Effect<unknown>
}

/**
 * Claims and processes until `stopping` is set. A failure never ends the loop: an unprocessed job
 * keeps its lease, and once the lease runs out it is claimed again (and reconciled).
 */
export const workLoop = <Job>(loop: WorkLoop<Job>) => (stopping: Ref.Ref<boolean>) =>
  Effect.gen(function*() {
    while (!(yield* Ref.get(stopping))) {
      const job = yield* loop.claim.pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logError(`could not claim a ${loop.label}`, cause), Option.none<Job>()))
      )
      if (Option.isSome(job)) {
        if (loop.onClaim) yield* loop.onClaim
        yield* loop.process(job.value).pipe(
          Effect.catchCause((cause) => Effect.logError(`${loop.label} failed unexpectedly`, cause))
        )
      } else {
        yield* loop.idle
      }
    }
  })

/**
 * Forks `count` workers in the current scope and registers each with readiness. On shutdown they
 * stop claiming and get `grace` to finish the job in hand; the scope then interrupts the rest
 * (their leases expire and another instance takes the jobs over).
 */
export const superviseWorkers = (options: {
  readonly name: string
  readonly count: number
  readonly grace: Duration.Input
  readonly worker: (stopping: Ref.Ref<boolean>) => Effect.Effect<void>
}): Effect.Effect<void, never, Scope.Scope | Readiness> =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    const stopping = yield* Ref.make(false)
    const fibers = yield* Effect.forEach(
      Array.from({ length: options.count }, (_, i) => i),
      (i) => Effect.tap(Effect.forkScoped(options.worker(stopping)), (fiber) => readiness.registerWorker(`${options.name}-${i}`, fiber))
    )
    // Added after the forks, so it runs before the scope interrupts them.
    yield* Effect.addFinalizer(() =>
      Ref.set(stopping, true).pipe(
        Effect.andThen(Fiber.awaitAll(fibers).pipe(Effect.timeout(options.grace), Effect.ignore))
      )
    )
  })
