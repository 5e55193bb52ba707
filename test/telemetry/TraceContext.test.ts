/**
 * Sampling is honoured before the work: below a span that is not sampled no spans are made (Effect's
 * no-op spans stand in), while the trace ids the logs and the queued jobs carry stay the real ones.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, Tracer } from "effect"
import { makeGuardedLogger } from "../../src/telemetry/Logger.js"
import { continueTrace, currentTraceparent, unsampledBelow } from "../../src/telemetry/TraceContext.js"

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

  it.effect("a job continues its request's trace with the request's sampling decision", () =>
    Effect.gen(function*() {
      const inJob = (flags: string) =>
        Effect.withSpan(Effect.currentSpan, "job").pipe(continueTrace(`00-${TRACE}-${SPAN}-${flags}`))
      expect((yield* inJob("00")).spanId).toBe("noop")
      const sampled = yield* inJob("01")
      expect(sampled.spanId).not.toBe("noop")
      expect(sampled.traceId).toBe(TRACE)
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
