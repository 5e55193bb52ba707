/**
 * Sampling is honoured before the work: below a span that is not sampled no spans are made (Effect's
 * no-op spans stand in), while the trace ids the logs and the queued jobs carry stay the real ones.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Option, Tracer } from "effect"
import { makeGuardedLogger } from "../../src/telemetry/Logger.js"
import { parseSampler, TraceSampler } from "../../src/telemetry/Sampler.js"
import { currentTraceparent, linkedTrace, unsampledBelow, untraced } from "../../src/telemetry/TraceContext.js"

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
const SPAN = "00f067aa0ba902b7"
const caller = (sampled: boolean) => Tracer.externalSpan({ traceId: TRACE, spanId: SPAN, sampled })

/** The span `Effect.withSpan` makes below `parent`, and the traceparent a job queued there would carry. */
const below = (parent: Tracer.ExternalSpan) =>
  Effect.withSpan(Effect.all({ span: Effect.currentSpan, traceparent: currentTraceparent }), "child").pipe(
    Effect.withParentSpan(parent),
    unsampledBelow(parent)
  )

describe("trace context", () => {
  it.effect("below an unsampled span no span is made; the traceparent is the caller's, not sampled", () =>
    Effect.gen(function*() {
      const { span, traceparent } = yield* below(caller(false))
      expect(span.spanId).toBe("noop")
      expect(traceparent).toBe(`00-${TRACE}-${SPAN}-00`)
    }))

  it.effect("below a sampled span spans are made as usual, in the caller's trace", () =>
    Effect.gen(function*() {
      const { span, traceparent } = yield* below(caller(true))
      expect(span.spanId).not.toBe("noop")
      expect(span.traceId).toBe(TRACE)
      expect(traceparent).toBe(`00-${TRACE}-${span.spanId}-01`)
    }))

  it.effect("a job is a trace of its own, linked to its request, with the request's sampling decision", () =>
    Effect.gen(function*() {
      const inJob = (flags: string) =>
        Effect.withSpan(Effect.currentSpan, "step").pipe(
          linkedTrace("job", { kind: "consumer" }, `00-${TRACE}-${SPAN}-${flags}`)
        )
      // Unsampled: the job's own span is not recorded and nothing is made below it.
      expect((yield* inJob("00")).spanId).toBe("noop")
      const step = yield* inJob("01")
      expect(step.spanId).not.toBe("noop")
      // A new trace: a retry hours later does not stretch the request's.
      expect(step.traceId).not.toBe(TRACE)
      const job = Option.getOrThrow(step._tag === "Span" ? step.parent : Option.none())
      expect(job._tag === "Span" && job.name).toBe("job")
      expect(job._tag === "Span" && job.links.map((link) => [link.span.traceId, link.span.spanId])).toEqual([[
        TRACE,
        SPAN
      ]])
    }))

  it.effect("a job queued outside any trace is recorded as the sampler decides", () =>
    Effect.gen(function*() {
      const job = Effect.withSpan(Effect.currentSpan, "step").pipe(linkedTrace("job", { kind: "consumer" }, null))
      expect((yield* job).spanId).not.toBe("noop")
      const never = parseSampler("always_off", undefined).sampler
      expect((yield* Effect.provideService(job, TraceSampler, never)).spanId).toBe("noop")
    }))

  it.effect("an untraced loop makes no spans; work it starts as a linked trace does", () =>
    Effect.gen(function*() {
      const loop = Effect.withSpan(Effect.currentSpan, "poll")
      expect((yield* untraced(loop)).spanId).toBe("noop")
      const job = Effect.withSpan(Effect.currentSpan, "step").pipe(linkedTrace("job", { kind: "consumer" }, null))
      expect((yield* untraced(job)).spanId).not.toBe("noop")
    }))

  it.effect("a log line under an unsampled request carries the request's trace and span ids", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const logger = makeGuardedLogger((line) => lines.push(line), () => {})
      yield* Effect.withSpan(Effect.logInfo("inside"), "child").pipe(
        Effect.withParentSpan(caller(false)),
        unsampledBelow(caller(false)),
        Effect.provide(Logger.layer([logger]))
      )
      const line = JSON.parse(lines.at(-1)!) as Record<string, unknown>
      expect(line["trace_id"]).toBe(TRACE)
      expect(line["span_id"]).toBe(SPAN)
    }))
})
