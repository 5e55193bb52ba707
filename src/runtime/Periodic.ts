/**
 * A background round run at start-up and then every `interval`, supervised: a failed round (the
 * database briefly away) is logged and the next tick tries again, so the fiber lives on; it makes no
 * spans (SPEC §13: an idle instance emits none; its logs say what it did); and readiness watches it.
 */
import { type Duration, Effect, Schedule, type Scope } from "effect"
import { untraced } from "../telemetry/TraceContext.js"
import { Readiness } from "./Readiness.js"

export const runPeriodically = <A, E, R>(
  name: string,
  interval: Duration.Duration,
  round: Effect.Effect<A, E, R>
): Effect.Effect<void, never, R | Readiness | Scope.Scope> =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    const fiber = yield* round.pipe(
      Effect.catchCause((cause) => Effect.logError(`${name}: a round failed`, cause)),
      Effect.repeat(Schedule.spaced(interval)),
      untraced,
      Effect.forkScoped
    )
    yield* readiness.registerWorker(name, fiber)
  })
