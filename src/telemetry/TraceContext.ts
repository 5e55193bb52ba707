/**
 * Background work continues the trace of the request that queued it (SPEC §13): the W3C
 * `traceparent` of the current span is stored with the job, and the worker runs under it.
 */
import { Effect, Option, Tracer } from "effect"

/** The current span as a `traceparent`, or null outside any span. */
export const currentTraceparent = Effect.map(
  Effect.option(Effect.currentSpan),
  Option.match({ onNone: () => null, onSome: (span) => `00-${span.traceId}-${span.spanId}-01` })
)

/** Runs `effect` as part of the stored trace, when there is a valid one. */
export const continueTrace = (traceparent: string | null) => <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const match = traceparent === null ? null : /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent)
  return match
    ? Effect.withParentSpan(effect, Tracer.externalSpan({ traceId: match[1]!, spanId: match[2]!, sampled: true }), {
      captureStackTrace: false
    })
    : effect
}
