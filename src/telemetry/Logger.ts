/**
 * Structured JSON logs on stdout, one object per line, with the trace and span ids of the fiber
 * that logged. Every line passes the token guard before it is written: anything shaped like one of
 * our secrets is replaced by `[REDACTED]`, and the well-formed tokens in it are reported as exposed
 * (SPEC §4).
 */
import { Config, Context, Effect, Layer, Logger, LogLevel, Option, References, Schema, Tracer } from "effect"
import { embeddedSecretPattern, findTokens } from "../domain/Tokens.js"
import { ExposureReports } from "./ExposureReports.js"
import { realSpan } from "./TraceContext.js"

export const redactSecrets = (text: string): string => text.replace(embeddedSecretPattern, "[REDACTED]")

/** `onTokens` hears the well-formed tokens of each line, once per line, before the line is written redacted. */
export const makeGuardedLogger = (write: (line: string) => void, onTokens: (tokens: ReadonlyArray<string>) => void) =>
  Logger.make((options) => {
    // Effect 4 names the level `level`; the lines keep the field names they have always had.
    const { level, message, ...rest } = Logger.formatStructured.log(options)
    const record: Record<string, unknown> = { message, logLevel: level, ...rest }
    const found = Context.getOption(options.fiber.context, Tracer.ParentSpan)
    // Under an unsampled request the spans are no-ops: the ids are those of the request's span.
    const span = Option.isSome(found) ? realSpan(found.value) : undefined
    if (span !== undefined) {
      record["trace_id"] = span.traceId
      record["span_id"] = span.spanId
    }
    let line: string
    try {
      line = JSON.stringify(record)
    } catch {
      line = JSON.stringify({ ...record, message: String(record["message"]), annotations: "[unserializable]" })
    }
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

/** Replaces the default logger; the guard's exposure reports go to the ExposureReports. */
export const LoggerLive = Layer.unwrap(
  Effect.gen(function*() {
    const exposure = yield* ExposureReports
    const level = yield* Effect.orDie(logLevelConfig)
    const logger = makeGuardedLogger((line) => process.stdout.write(line + "\n"), (tokens) => exposure.reportUnsafe(tokens, "log"))
    return Layer.merge(Logger.layer([logger]), Layer.succeed(References.MinimumLogLevel, level))
  })
)
