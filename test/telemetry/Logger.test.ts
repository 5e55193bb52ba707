/**
 * The log line's shape (SPEC §13): the conventional fields, annotations as fields of their own,
 * further values under `details`, a cause under `error`, secrets redacted; and a log call never
 * fails its caller, whatever it logs. A line that brings its own fields and span (the access log)
 * is written the same way.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Logger, References, Tracer } from "effect"
import { LineWithFields, makeGuardedLogger } from "../../src/telemetry/Logger.js"

const capture = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const tokens: Array<string> = []
    const logger = makeGuardedLogger((line) => lines.push(line), (found) => tokens.push(...found), "etd-test")
    yield* Effect.provide(effect, Logger.layer([logger]))
    return { records: lines.map((line) => JSON.parse(line) as Record<string, unknown>), lines, tokens }
  })

const TOKEN = `etd_live_${"a".repeat(32)}`

describe("log lines", () => {
  it.effect("carry time, level, msg, service, the span's ids and the annotations as fields", () =>
    Effect.gen(function*() {
      const span = Tracer.externalSpan({ traceId: "1".repeat(32), spanId: "2".repeat(16), sampled: true })
      const { records } = yield* capture(
        Effect.logWarning("queue slow", { depth: 3 }).pipe(
          Effect.annotateLogs({ queue: "issuance", level: "not mine", msg: "nor this" }),
          Effect.withParentSpan(span)
        )
      )
      expect(records).toHaveLength(1)
      const [record] = records
      expect(record).toMatchObject({
        level: "warn",
        msg: "queue slow",
        service: "etd-test",
        trace_id: "1".repeat(32),
        span_id: "2".repeat(16),
        queue: "issuance",
        details: [{ depth: 3 }]
      })
      expect(Date.parse(String(record!["time"]))).not.toBeNaN()
    }))

  it.effect("a cause is under error; a token anywhere in the line is redacted and reported", () =>
    Effect.gen(function*() {
      const { lines, records, tokens } = yield* capture(
        Effect.logError(`leaked ${TOKEN}`, Cause.fail(new Error("boom"))).pipe(Effect.annotateLogs({ header: TOKEN }))
      )
      expect(String(records[0]!["error"])).toContain("boom")
      expect(lines.join("")).not.toContain(TOKEN)
      expect(records[0]!["header"]).toBe("[REDACTED]")
      expect(tokens).toEqual([TOKEN])
    }))

  it.effect("a bigint or a cycle in what is logged never fails the caller", () =>
    Effect.gen(function*() {
      const cycle: Record<string, unknown> = { name: "loop" }
      cycle["self"] = cycle
      const { records } = yield* capture(
        Effect.logInfo("odd values", cycle).pipe(Effect.annotateLogs({ count: 10n, again: cycle }))
      )
      expect(records[0]).toMatchObject({ msg: "odd values", count: "10", again: { name: "loop", self: "[repeated]" } })
    }))

  it.effect("a line with its own fields and span: the span's ids, the fields after the annotations, the same guard", () =>
    Effect.gen(function*() {
      const own = Tracer.externalSpan({ traceId: "3".repeat(32), spanId: "4".repeat(16), sampled: false })
      const current = Tracer.externalSpan({ traceId: "1".repeat(32), spanId: "2".repeat(16), sampled: true })
      const { lines, records, tokens } = yield* capture(
        Effect.logDebug(
          new LineWithFields("request", { "http.response.status_code": 200, header: TOKEN, level: "not mine" }, own)
        ).pipe(
          Effect.annotateLogs({ queue: "issuance" }),
          Effect.withParentSpan(current),
          Effect.provideService(References.MinimumLogLevel, "Debug")
        )
      )
      expect(records).toEqual([{
        time: expect.any(String),
        level: "debug",
        msg: "request",
        service: "etd-test",
        trace_id: "3".repeat(32),
        span_id: "4".repeat(16),
        queue: "issuance",
        "http.response.status_code": 200,
        header: "[REDACTED]"
      }])
      expect(lines.join("")).not.toContain(TOKEN)
      expect(tokens).toEqual([TOKEN])
    }))
})
