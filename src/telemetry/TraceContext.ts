/**
 * Trace context across the service's boundaries (SPEC §13).
 *
 * - Queued work keeps the W3C `traceparent` of the span that queued it, and the worker's span
 *   *links* to it: the job is a trace of its own, so a retry hours later does not stretch the
 *   request's trace, and a trace viewer still leads from one to the other.
 * - Sampling is honoured before the work: under a span that is not sampled, the spans below it
 *   would never be exported, so they are not made at all (`unsampledBelow`: Effect then hands out
 *   no-op spans, which cost almost nothing). Trace ids stay those of the nearest real span, for the
 *   logs, the request id and the jobs.
 * - Background loops (polling, sweeps) make no spans: an idle instance exports nothing (`untraced`).
 */
import { Context, Effect, Option, References, Tracer } from "effect"
import { decide, TraceSampler } from "./Sampler.js"

/** The nearest span that is not one of Effect's no-op spans (made where tracing is off). */
export const realSpan = (span: Tracer.AnySpan): Tracer.AnySpan | undefined => {
  let current: Tracer.AnySpan = span
  while (current._tag === "Span" && current.spanId === "noop") {
    if (Option.isNone(current.parent)) return undefined
    current = current.parent.value
  }
  return current
}

export const traceparentOf = (span: Tracer.AnySpan) => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/** The current span as a `traceparent` (its sampled flag included), or null outside any span. */
export const currentTraceparent = Effect.map(Effect.option(Effect.currentSpan), (found) => {
  const span = Option.isSome(found) ? realSpan(found.value) : undefined
  return span === undefined ? null : traceparentOf(span)
})

/** Runs `effect` making no spans when `span` is not sampled (nothing below it would be exported). */
export const unsampledBelow = (span: Tracer.AnySpan) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  span.sampled ? effect : Effect.provideService(effect, References.TracerEnabled, false)

/**
 * Runs `effect` as the work of `span`, the entry of a trace (a request's server span, a job's):
 * its spans are children of `span`, or none are made when `span` is not sampled. No stack trace is
 * captured: the span's name says where it is. What `Effect.withParentSpan` (with no stack trace)
 * and `unsampledBelow` would provide one after the other is provided in one change of context,
 * as every request enters its span this way.
 */
const noStack = () => undefined

export const runWithin = (span: Tracer.Span) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.updateContext(effect, (context: Context.Context<Exclude<R, Tracer.ParentSpan>>) => {
    const frame: References.StackFrame = {
      name: span.name,
      stack: noStack,
      parent: Context.get(context, References.CurrentStackFrame)
    }
    const within = Context.add(Context.add(context, Tracer.ParentSpan, span), References.CurrentStackFrame, frame)
    return (span.sampled ? within : Context.add(within, References.TracerEnabled, false)) as Context.Context<R>
  })

/** Runs `effect` without making spans: for loops that run whether or not there is work. */
export const untraced = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, References.TracerEnabled, false)

/** Runs `effect` with spans again, under a loop that made none. */
export const traced = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, References.TracerEnabled, true)

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0([01])$/

/** A stored `traceparent` as a span to link to, when it is a valid one. */
export const parseTraceparent = (traceparent: string | null): Tracer.ExternalSpan | undefined => {
  const match = traceparent === null ? null : TRACEPARENT.exec(traceparent)
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined
  return Tracer.externalSpan({ traceId: match[1]!, spanId: match[2]!, sampled: match[3] === "1" })
}

/**
 * Runs a queued job as a trace of its own named `name`, linked to the context stored when it was
 * queued. It is recorded when that context was (parent-based samplers), or as the sampler decides
 * for work queued outside any trace.
 */
export const linkedTrace = (
  name: string,
  options: { readonly kind: Tracer.SpanKind; readonly attributes?: Record<string, unknown> },
  traceparent: string | null
) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    const origin = parseTraceparent(traceparent)
    const sampled = decide(yield* TraceSampler, origin?.sampled)
    return yield* Effect.useSpan(
      name,
      {
        kind: options.kind,
        attributes: options.attributes,
        root: true,
        sampled,
        links: origin === undefined ? [] : [{ span: origin, attributes: { "link.reason": "queued by" } }]
      },
      (span) => runWithin(span)(effect)
    )
  }).pipe(traced)
