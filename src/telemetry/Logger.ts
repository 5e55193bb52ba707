/**
 * Structured JSON logs on stdout, one object per line, with the trace and span ids of the fiber
 * that logged. Every line passes the token guard before it is written: anything shaped like one of
 * our secrets is replaced by `[REDACTED]`, and the well-formed tokens in it are reported as exposed
 * (SPEC §4).
 */
import { Cause, Config, Context, Effect, Layer, Logger, LogLevel, References, Schema, Tracer } from "effect"
import { embeddedSecretPattern, findTokens } from "../domain/Tokens.js"
import { ExposureReports } from "./ExposureReports.js"
import { serviceNameConfig } from "./Resource.js"
import { realSpan } from "./TraceContext.js"

export const redactSecrets = (text: string): string =>
  // Most lines hold neither prefix: the regular expression runs only on those that might.
  text.includes("etd_") || text.includes("whsec_") ? text.replace(embeddedSecretPattern, "[REDACTED]") : text

/** Fields every line has; annotations of the same names do not replace them. */
const RESERVED = new Set(["time", "level", "msg", "service", "trace_id", "span_id", "error", "details"])

/**
 * The record as one JSON line, whatever was logged: a bigint as its digits, an object met again
 * (a cycle, or the same object twice) as "[repeated]". Logging never fails its caller.
 */
const serialize = (record: Record<string, unknown>): string => {
  const seen = new WeakSet<object>()
  try {
    return JSON.stringify(record, (_key, value: unknown) => {
      if (typeof value === "bigint") return value.toString()
      if (typeof value === "object" && value !== null) {
        if (seen.has(value)) return "[repeated]"
        seen.add(value)
      }
      return value
    })
  } catch {
    // A toJSON that throws, say: the line keeps what is known to serialize.
    return JSON.stringify({
      time: record["time"],
      level: record["level"],
      msg: String(record["msg"]),
      service: record["service"]
    })
  }
}

/** A logged value as JSON can carry it: an Error keeps its name and message (its stack stays out). */
const loggable = (value: unknown): unknown =>
  value instanceof Error ? { name: value.name, message: value.message } : value

/** Whether every field is a string, number, boolean or nothing: JSON needs no replacer for those. */
const isFlat = (record: Record<string, unknown>) => {
  for (const key in record) {
    const value = record[key]
    if ((typeof value === "object" && value !== null) || typeof value === "bigint") return false
  }
  return true
}

/**
 * A line logged with its own fields and span, for a line whose fields are all known where it is
 * written (the access log, once per request): it spares opening a scope of log annotations, and
 * entering the span, for one line. The fields follow the fiber's annotations, under the same names
 * rules; the span gives the line its trace and span ids.
 */
export class LineWithFields {
  constructor(
    readonly msg: string,
    readonly fields: Readonly<Record<string, unknown>>,
    readonly span: Tracer.AnySpan
  ) {}
}

const lowerCase = new Map(LogLevel.values.map((level) => [level, level.toLowerCase()]))

/**
 * The line for one log call, in the fields log pipelines expect: `time`, `level` (lower case),
 * `msg`, `service`, `trace_id` and `span_id` of the span the fiber is in, then the annotations as
 * fields of their own, `details` for any further logged values and `error` for a cause. A
 * `LineWithFields` logged first gives the message, the span and more fields.
 *
 * `onTokens` hears the well-formed tokens of each line, once per line, before the line is written redacted.
 */
export const makeGuardedLogger = (
  write: (line: string) => void,
  onTokens: (tokens: ReadonlyArray<string>) => void,
  service = "etd-service"
) =>
  Logger.make(({ cause, date, fiber, logLevel, message }) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    const first = parts[0]
    const own = first instanceof LineWithFields ? first : undefined
    const record: Record<string, unknown> = {
      time: date.toISOString(),
      level: lowerCase.get(logLevel) ?? logLevel.toLowerCase(),
      msg: own !== undefined ? own.msg : typeof first === "string" ? first : loggable(first),
      service
    }
    const found = own !== undefined ? own.span : Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
    // Under an unsampled request the spans are no-ops: the ids are those of the request's span.
    const span = found !== undefined ? realSpan(found) : undefined
    if (span !== undefined) {
      record["trace_id"] = span.traceId
      record["span_id"] = span.spanId
    }
    const annotations = fiber.getRef(References.CurrentLogAnnotations)
    for (const key in annotations) {
      if (!RESERVED.has(key)) record[key] = loggable(annotations[key])
    }
    if (own !== undefined) {
      for (const key in own.fields) {
        if (!RESERVED.has(key)) record[key] = loggable(own.fields[key])
      }
    }
    if (parts.length > 1) record["details"] = parts.slice(1).map(loggable)
    if (cause.reasons.length > 0) record["error"] = Cause.pretty(cause)
    const line = isFlat(record) ? JSON.stringify(record) : serialize(record)
    const tokens = findTokens(line)
    if (tokens.length > 0) onTokens(tokens)
    write(redactSecrets(line))
  })

// Effect 4 spells levels exactly ("Info", "Warn"); operators write "info", "INFO" or "warning".
const levels = new Map<string, LogLevel.LogLevel>([
  ...LogLevel.values.map((level) => [level.toLowerCase(), level] as const),
  ["warning", "Warn"]
])
const levelOf = (name: string) => levels.get(name.trim().toLowerCase())

/** LOG_LEVEL, case-insensitive, with `Warning` as another name of `Warn`. */
export const logLevelConfig = Config.schema(
  Schema.String.check(
    Schema.makeFilter((name) => levelOf(name) !== undefined, {
      message: `LOG_LEVEL must be one of ${[...LogLevel.values, "Warning"].join(", ")}`
    })
  ),
  "LOG_LEVEL"
).pipe(
  // The filter above admits only names the map knows.
  Config.map((name) => levelOf(name)!),
  Config.withDefault<LogLevel.LogLevel>("Info")
)

/**
 * Lines for stdout, written together once per turn of the event loop: with an access-log line per
 * request, one write per line was a quarter of the service's throughput (docs/benchmarks.md). What
 * is pending when the layer closes (shutdown) is written then.
 */
const stdoutLines = Effect.acquireRelease(
  Effect.sync(() => {
    let pending: Array<string> = []
    const flush = () => {
      if (pending.length === 0) return
      const chunk = pending.join("\n") + "\n"
      pending = []
      process.stdout.write(chunk)
    }
    const write = (line: string) => {
      if (pending.length === 0) setImmediate(flush)
      pending.push(line)
    }
    return { write, flush }
  }),
  ({ flush }) => Effect.sync(flush)
)

/** Replaces the default logger; the guard's exposure reports go to the ExposureReports. */
export const LoggerLive = Layer.unwrap(
  Effect.gen(function*() {
    const exposure = yield* ExposureReports
    const level = yield* Effect.orDie(logLevelConfig)
    const service = yield* Effect.orDie(serviceNameConfig)
    const stdout = yield* stdoutLines
    const logger = makeGuardedLogger(stdout.write, (tokens) => exposure.reportUnsafe(tokens, "log"), service)
    return Layer.merge(Logger.layer([logger]), Layer.succeed(References.MinimumLogLevel, level))
  })
)
