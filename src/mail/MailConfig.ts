/**
 * Mail settings (SPEC §14), read with the rest of AppConfig: the SMTP server, the sender, the
 * dashboard's public address that links point to, how long one-time links live, and the sender
 * worker's pool and retries.
 */
import { Config, Duration, Option, type Redacted, Schema } from "effect"

export interface MailConfigShape {
  /** `SMTP_URL` (`smtp://` or `smtps://`, may hold credentials). Unset: development logs each mail instead. */
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  readonly fromAddress: string
  readonly fromName: string
  /** `PUBLIC_URL`: where people reach the dashboard, without a trailing slash. */
  readonly publicUrl: string
  readonly verificationTtl: Duration.Duration
  readonly resetTtl: Duration.Duration
  /** Attempts before a mail is given up (recorded as failed). */
  readonly maxAttempts: number
  readonly retryBaseDelay: Duration.Duration
  readonly retryMaxDelay: Duration.Duration
  /** Bound on one SMTP conversation. */
  readonly timeout: Duration.Duration
  readonly concurrency: number
  readonly pollInterval: Duration.Duration
  /** Longer than `timeout`, so a live attempt never loses its claim. */
  readonly lease: Duration.Duration
}

const smtpUrl = Config.schema(
  Schema.Redacted(Schema.String.check(Schema.makeFilter((value) => {
    const parsed = URL.canParse(value) ? new URL(value) : undefined
    // The message never quotes the value: it may carry the SMTP password.
    return (parsed !== undefined && (parsed.protocol === "smtp:" || parsed.protocol === "smtps:") &&
      parsed.hostname !== "") || "SMTP_URL must be an smtp:// or smtps:// URL (smtp://user:password@host:587)"
  }))),
  "SMTP_URL"
)

const publicUrl = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(3000)),
  url: Config.option(Config.schema(
    Schema.String.check(Schema.makeFilter((value) => {
      const parsed = URL.canParse(value) ? new URL(value) : undefined
      return (parsed !== undefined && (parsed.protocol === "https:" || parsed.protocol === "http:") &&
        parsed.search === "" && parsed.hash === "") ||
        "PUBLIC_URL must be an http(s):// URL without query or fragment (https://etd.example.com)"
    })),
    "PUBLIC_URL"
  ))
}).pipe(
  Config.map(({ port, url }) => Option.getOrElse(url, () => `http://localhost:${port}`).replace(/\/+$/u, ""))
)

const positive = (name: string, fallback: number) =>
  Config.schema(Schema.Int.check(Schema.makeFilter((n) => n > 0 || `${name} must be a positive integer`)), name)
    .pipe(Config.withDefault(fallback))

export const mailConfig: Config.Config<MailConfigShape> = Config.all({
  smtpUrl: Config.option(smtpUrl),
  fromAddress: Config.NonEmptyString("MAIL_FROM_ADDRESS").pipe(Config.withDefault("no-reply@localhost")),
  fromName: Config.String("MAIL_FROM_NAME").pipe(Config.withDefault("ETD")),
  publicUrl,
  verificationTtl: Config.Duration("EMAIL_VERIFICATION_TTL").pipe(Config.withDefault(Duration.hours(24))),
  resetTtl: Config.Duration("PASSWORD_RESET_TTL").pipe(Config.withDefault(Duration.hours(1))),
  maxAttempts: positive("MAIL_MAX_ATTEMPTS", 8),
  retryBaseDelay: Config.Duration("MAIL_RETRY_BASE_DELAY").pipe(Config.withDefault(Duration.seconds(30))),
  retryMaxDelay: Config.Duration("MAIL_RETRY_MAX_DELAY").pipe(Config.withDefault(Duration.hours(1))),
  timeout: Config.Duration("MAIL_TIMEOUT").pipe(Config.withDefault(Duration.seconds(30))),
  concurrency: positive("MAIL_CONCURRENCY", 4),
  pollInterval: Config.Duration("MAIL_POLL_INTERVAL").pipe(Config.withDefault(Duration.seconds(5))),
  lease: Config.Duration("MAIL_LEASE").pipe(Config.withDefault(Duration.seconds(90)))
})

/** A dashboard link: `PUBLIC_URL/#/<path>`. The fragment never reaches a server, nor a Referer header. */
export const linkTo = (config: Pick<MailConfigShape, "publicUrl">, path: string) =>
  `${config.publicUrl}/#/${path.replace(/^\/+/u, "")}`
