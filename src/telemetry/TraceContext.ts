/**
 * Background work continues the trace of the request that queued it (SPEC §13): the W3C
 * `traceparent` of the current span is stored with the job, and the worker runs under it.
 *
 * Sampling is honoured before the work: under a span that is not sampled (a caller's `traceparent`
 * with flags `00`), the spans below it would never be exported, so they are not made at all
 * (`unsampledBelow`: Effect then hands out no-op spans, which cost almost nothing). Trace ids stay
 * those of the nearest real span, for the logs and for the jobs.
 */
import { Effect, Option, References, Tracer } from "effect"

/** The nearest span that is not one of Effect's no-op spans (made where tracing is off). */
export const realSpan = (span: Tracer.AnySpan): Tracer.AnySpan | undefined => {
  let current: Tracer.AnySpan = span
  while (current._tag === "Span" && current.spanId === "noop") {
    if (Option.isNone(current.parent)) return undefined
    current = current.parent.value
  }
  return current
}

/** The current span as a `traceparent` (its sampled flag included), or null outside any span. */
export const currentTraceparent = Effect.map(Effect.option(Effect.currentSpan), (found) => {
  const span = Option.isSome(found) ? realSpan(found.value) : undefined
  return span === undefined ? null : `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
})

/** Runs `effect` making no spans when `span` is not sampled (nothing below it would be exported). */
export const unsampledBelow = (span: Tracer.AnySpan) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  span.sampled ? effect : Effect.provideService(effect, References.TracerEnabled, false)

/** Runs `effect` as part of the stored trace, when there is a valid one. */
export const continueTrace = (traceparent: string | null) => <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const match = traceparent === null ? null : /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/.exec(traceparent)
  if (!match) return effect
  const parent = Tracer.externalSpan({ traceId: match[1]!, spanId: match[2]!, sampled: match[3] === "1" })
  return Effect.withParentSpan(effect, parent, { captureStackTrace: false }).pipe(unsampledBelow(parent))
}
