/**
 * Secrets of SPEC §14 that the service cannot run without (the credentials master key, the
 * payment provider's webhook secret). Configured → used as given. Unset in development → generated
 * once into `DATA_DIR/secrets/<file>` (mode 0600) and reused on every later start, with a warning.
 * Unset in production → the service refuses to start: a generated secret there would silently
 * make stored credentials unreadable on the next instance, or accept nobody's webhooks.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"

export class SecretUnavailable extends Schema.TaggedError<SecretUnavailable>()("SecretUnavailable", {
  message: Schema.String
}) {}

export interface SecretSource {
  /** The environment variable, for messages. */
  readonly variable: string
  readonly configured: Option.Option<Redacted.Redacted<string>>
  readonly production: boolean
  readonly dataDir: string
  /** File name under `DATA_DIR/secrets`. */
  readonly file: string
  /** A fresh value in the variable's own format. */
  readonly generate: () => string
}

const isMissingFile = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT"

export const secretFilePath = (dataDir: string, file: string) => path.resolve(dataDir, "secrets", file)

export const resolveSecret = (source: SecretSource): Effect.Effect<Redacted.Redacted<string>, SecretUnavailable> =>
  Option.match(source.configured, {
    onSome: Effect.succeed,
    onNone: () =>
      source.production
        ? Effect.fail(
          new SecretUnavailable({
            message:
              `${source.variable} is not set. It is required in production (NODE_ENV=production); the service will not start without it.`
          })
        )
        : Effect.gen(function*() {
          const file = secretFilePath(source.dataDir, source.file)
          const existing = yield* Effect.try({
            try: () => readFileSync(file, "utf8").trim(),
            catch: (error) => error
          }).pipe(
            Effect.map(Option.some),
            Effect.catch((error) =>
              isMissingFile(error)
                ? Effect.succeed(Option.none<string>())
                : Effect.fail(new SecretUnavailable({ message: `${source.variable}: cannot read ${file}.` }))
            )
          )
          if (Option.isSome(existing) && existing.value !== "") return Redacted.make(existing.value)
          const created = yield* Effect.try({
            try: () => {
              const value = source.generate()
              mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
              // `wx`: two processes starting on a fresh DATA_DIR must not overwrite each other's secret.
              writeFileSync(file, value + "\n", { mode: 0o600, flag: "wx" })
              chmodSync(file, 0o600)
              return value
            },
            catch: (error) => error
          }).pipe(
            Effect.catch((error) =>
              // Lost that race: the other process's secret is the one to use.
              Effect.try({ try: () => readFileSync(file, "utf8").trim(), catch: () => error }).pipe(
                Effect.filterOrFail((raced) => raced !== "", () => error)
              )
            ),
            Effect.mapError(() => new SecretUnavailable({ message: `${source.variable}: cannot write ${file}.` }))
          )
          yield* Effect.logWarning(
            `${source.variable} is not set: using a development secret generated in ${file}. Set ${source.variable} in production.`
          )
          return Redacted.make(created)
        })
  })
