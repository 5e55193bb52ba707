/**
 * How a rendered mail leaves: over SMTP (`SMTP_URL`, nodemailer) or, in development without an
 * SMTP server, as one log line that shows the link so the developer can follow it. The line is
 * written beside the logger on purpose: the log's token guard would redact the link's token,
 * which is the line's whole point. Production without `SMTP_URL` refuses to start (SPEC §14), so
 * that line can never be written there.
 */
import { Context, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import type nodemailer from "nodemailer"
import { AppConfig } from "../Config.js"
import { SecretUnavailable } from "../runtime/Secrets.js"
import { serviceNameConfig } from "../telemetry/Resource.js"
import type { MailAttachment } from "./NoteMail.js"
import type { RenderedMail } from "./Templates.js"

/** A mail the transport could not hand over. `permanent`: the server refused it for good (5xx). */
export class MailTransportError extends Data.TaggedError("MailTransportError")<{
  readonly message: string
  readonly permanent: boolean
}> {}

export interface Envelope extends RenderedMail {
  readonly to: string
  readonly template: string
  /** The one link the mail carries, if any: the development line shows it. */
  readonly link: string | null
  /** The From's display name, when not the service's (`MAIL_FROM_NAME`); the address is always the service's. */
  readonly fromName?: string | undefined
  readonly replyTo?: string | null | undefined
  /** A Message-ID of the mail's own, the same on every attempt, so a mail sent twice can be told apart. */
  readonly messageId?: string | undefined
  readonly attachments?: ReadonlyArray<MailAttachment> | undefined
}

export class MailTransport extends Context.Service<MailTransport, {
  readonly deliver: (mail: Envelope) => Effect.Effect<void, MailTransportError>
}>()("etd/MailTransport") {}

/** Where the development line goes; tests read it here. */
export const MailDevLog = Context.Reference<{ readonly write: (line: string) => void }>("etd/MailDevLog", {
  defaultValue: () => ({ write: (line: string) => void process.stdout.write(line + "\n") })
})

/** An SMTP server's answer, shortened; addresses it echoes are left out (the job's row outlives the mail). */
const describe = (error: unknown): MailTransportError => {
  const fields = typeof error === "object" && error !== null ? error as Record<string, unknown> : {}
  const responseCode = typeof fields["responseCode"] === "number" ? fields["responseCode"] : undefined
  const code = typeof fields["code"] === "string" ? fields["code"] : "ERROR"
  const detail = typeof fields["response"] === "string"
    ? fields["response"]
    : error instanceof Error
    ? error.message
    : String(error)
  const message = `${code}${responseCode === undefined ? "" : ` ${responseCode}`}: ${detail}`
    .replace(/[^\s<>@]+@[^\s<>@]+/gu, "[address]")
    .slice(0, 300)
  return new MailTransportError({ message, permanent: responseCode !== undefined && responseCode >= 500 })
}

const smtpTransport = (url: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const { mail } = yield* AppConfig
    const timeout = Duration.toMillis(mail.timeout)
    // Loaded only when SMTP is configured: an instance that sends no mail carries none of it.
    const { default: smtp } = yield* Effect.promise(() => import("nodemailer"))
    const transporter = yield* Effect.acquireRelease(
      Effect.sync(() =>
        smtp.createTransport(
          {
            url: Redacted.value(url),
            connectionTimeout: timeout,
            greetingTimeout: timeout,
            socketTimeout: timeout
          } as Parameters<typeof nodemailer.createTransport>[0]
        )
      ),
      (transporter) => Effect.sync(() => transporter.close())
    )
    return MailTransport.of({
      deliver: (envelope) =>
        Effect.tryPromise({
          try: () =>
            transporter.sendMail({
              from: { name: envelope.fromName ?? mail.fromName, address: mail.fromAddress },
              to: envelope.to,
              ...(envelope.replyTo == null ? {} : { replyTo: envelope.replyTo }),
              ...(envelope.messageId === undefined ? {} : { messageId: envelope.messageId }),
              subject: envelope.subject,
              text: envelope.text,
              html: envelope.html,
              attachments: (envelope.attachments ?? []).map((file) => ({
                filename: file.filename,
                contentType: file.contentType,
                content: typeof file.content === "string" ? file.content : Buffer.from(file.content)
              }))
            }),
          catch: describe
        }).pipe(
          Effect.timeoutOrElse({
            duration: Duration.times(mail.timeout, 2),
            orElse: () =>
              Effect.fail(
                new MailTransportError({
                  message: `timed out after ${Duration.format(mail.timeout)}`,
                  permanent: false
                })
              )
          }),
          Effect.asVoid,
          Effect.withSpan("MailTransport.deliver", {
            kind: "client",
            attributes: { "mail.template": envelope.template }
          })
        )
    })
  })

const developmentTransport = Effect.gen(function*() {
  const { write } = yield* MailDevLog
  const service = yield* Effect.orDie(serviceNameConfig)
  return MailTransport.of({
    deliver: (envelope) =>
      Effect.sync(() =>
        write(JSON.stringify({
          time: new Date().toISOString(),
          level: "info",
          msg: `mail not sent (SMTP_URL is not set, development only): "${envelope.subject}" to ${envelope.to}` +
            (envelope.link === null ? "" : `; its link: ${envelope.link}`),
          service,
          "mail.template": envelope.template,
          "mail.to": envelope.to,
          ...(envelope.link === null ? {} : { "mail.link": envelope.link })
        }))
      )
  })
})

/** SMTP when `SMTP_URL` is set; else the development line, or no start at all in production. */
export const MailTransportLive = Layer.effect(
  MailTransport,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.mail.smtpUrl)) return yield* smtpTransport(config.mail.smtpUrl.value)
    if (config.production) {
      return yield* new SecretUnavailable({
        message: "SMTP_URL is not set. It is required in production (NODE_ENV=production), where verification and " +
          "password-reset links must reach people's mailboxes; the service will not start without it."
      })
    }
    return yield* developmentTransport
  })
)
