/**
 * Retry delays of queued jobs, read off a Schedule. A job that failed is put back in its table
 * with a due time rather than retried in memory, so the delay before attempt `n + 1` is computed
 * by stepping a fresh copy of the schedule `n` times.
 */
import { Duration, Effect, Option, Pull, Schedule } from "effect"

/** Exponential backoff with jitter, each delay capped at `maxDelay`. */
export const exponentialBackoff = (options: { baseDelay: Duration.Duration; maxDelay: Duration.Duration }) =>
  Schedule.exponential(options.baseDelay, 2).pipe(
    Schedule.jittered,
    Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, options.maxDelay)))
  )

/**
 * The delay before the next attempt after `attempts` failed ones: the schedule's `attempts`-th
 * delay (1 → its first). None once the schedule is spent, or for fewer than one attempt.
 */
export const delayAfter = (
  schedule: Schedule.Schedule<unknown, unknown>,
  attempts: number
): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.gen(function*() {
    if (attempts < 1) return Option.none()
    const step = yield* Schedule.toStep(schedule)
    let delay = Option.none<Duration.Duration>()
    for (let i = 0; i < attempts; i++) {
      delay = yield* step(0, undefined).pipe(
        Effect.map(([, duration]) => Option.some(duration)),
        Pull.catchDone(() => Effect.succeed(Option.none<Duration.Duration>()))
      )
      if (Option.isNone(delay)) return delay
    }
    return delay
  })
