/**
 * Who gets a thread of the PKCS#12 pool, and how long anyone waits for one (SPEC §11: "a bounded
 * wait for the opening pool, never a long hang"). Three rules, all in this instance:
 * - at most `queue` openings wait for a thread; one more is refused at once (`queue_full`);
 * - an opening waits at most `maxWait`; then it is refused (`wait_expired`), having cost nothing;
 * - a claimant (a tenant, a user) has at most one opening running or waiting (`already_opening`),
 *   so one tenant's burst of costly files cannot fill the queue in front of everyone else: another
 *   tenant's upload waits behind at most one file of each other claimant.
 * Waiters are served first come, first served. The rate-limit buckets (per tenant, per user, global)
 * decide how many uploads may start at all; these rules bound what the admitted ones cost in waiting.
 */
import { Data, Duration, Effect, Option, Semaphore } from "effect"

export type OpenerBusyReason = "queue_full" | "wait_expired" | "already_opening"

/** No thread for this opening now: nothing of the file was read. */
export class OpenerBusy extends Data.TaggedError("OpenerBusy")<{
  readonly reason: OpenerBusyReason
  /** Whole seconds after which a retry has a fair chance. */
  readonly retryAfterSeconds: number
}> {}

export interface OpeningTurnsOptions {
  /** Openings running at once (the pool's threads). */
  readonly threads: number
  /** Openings that may wait for a thread; 0: none waits. */
  readonly queue: number
  readonly maxWait: Duration.Input
}

export interface OpeningLoad {
  readonly running: number
  readonly waiting: number
}

export const makeOpeningTurns = (options: OpeningTurnsOptions) =>
  Effect.gen(function*() {
    const threads = yield* Semaphore.make(options.threads)
    const maxWait = Duration.fromInputUnsafe(options.maxWait)
    // A full queue empties about as fast as its openings may wait; one opening of a claimant ends
    // within a second when the file is an ordinary one.
    const queueRetryAfter = Math.max(1, Math.ceil(Duration.toSeconds(maxWait)))
    const busy = (reason: OpenerBusyReason) =>
      new OpenerBusy({ reason, retryAfterSeconds: reason === "already_opening" ? 1 : queueRetryAfter })

    let running = 0
    let waiting = 0
    const holders = new Set<string>()

    /** A thread for this scope, or `OpenerBusy`; the thread returns when the scope closes. */
    const thread = (restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        // Someone already waiting goes first: no overtaking the queue when a thread frees up.
        if (waiting === 0 && (yield* threads.takeIfAvailable(1))) {
          yield* Effect.addFinalizer(() => threads.release(1))
          return
        }
        if (waiting >= options.queue) return yield* busy("queue_full")
        waiting++
        const taken = yield* restore(Effect.timeoutOption(threads.takeScoped(1), maxWait)).pipe(
          Effect.ensuring(Effect.sync(() => waiting--))
        )
        if (Option.isNone(taken)) return yield* busy("wait_expired")
      })

    /**
     * Runs `work` on a turn of the pool for these claimants, or fails with `OpenerBusy` without
     * running it. An interrupted waiter (the client went away) leaves the queue at once.
     */
    const withTurn = <A, E, R>(claimants: ReadonlyArray<string>, work: Effect.Effect<A, E, R>) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const mine = [...new Set(claimants)]
          if (mine.some((claimant) => holders.has(claimant))) return yield* busy("already_opening")
          for (const claimant of mine) holders.add(claimant)
          return yield* Effect.scoped(
            Effect.gen(function*() {
              yield* thread(restore)
              running++
              yield* Effect.addFinalizer(() => Effect.sync(() => running--))
              return yield* restore(work)
            })
          ).pipe(Effect.ensuring(Effect.sync(() => mine.forEach((claimant) => holders.delete(claimant)))))
        })
      )

    const load: Effect.Effect<OpeningLoad> = Effect.sync(() => ({ running, waiting }))

    return { withTurn, load } as const
  })
