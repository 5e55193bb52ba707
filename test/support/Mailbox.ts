/**
 * A real SMTP server for tests (npm `smtp-server`), whose mail is parsed (`mailparser`) and kept in
 * memory. The app under test sends to it over SMTP through its real transport: point `SMTP_URL` at
 * `url` (see `mailConfigFor`). `refuseNext(n)` makes it answer the next `n` messages with a
 * temporary failure (451), as a server under load would, or with another code (550: refused for good).
 * Attachments are kept byte for byte, with the headers a test checks.
 */
import { ConfigProvider, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import type { AppConfigShape } from "../../src/Config.js"
import { mailConfig, type MailConfigShape } from "../../src/mail/MailConfig.js"
import { makeTestApp, type TestDatabase } from "./TestApp.js"

export interface ReceivedAttachment {
  readonly filename: string
  readonly contentType: string
  readonly content: Uint8Array
}

export interface ReceivedMail {
  readonly to: ReadonlyArray<string>
  readonly from: string
  /** The From's display name and address, as parsed. */
  readonly fromName: string
  readonly fromAddress: string
  readonly replyTo: string
  readonly messageId: string
  readonly subject: string
  readonly text: string
  readonly html: string
  readonly attachments: ReadonlyArray<ReceivedAttachment>
  /** Every header line's name, lower-cased, as received (a header injected by a name would show here). */
  readonly headerNames: ReadonlyArray<string>
}

export interface Mailbox {
  readonly url: string
  readonly messages: ReadonlyArray<ReceivedMail>
  /** The first message to `to` (matching `predicate`) that arrives, waiting up to `timeout` for it. */
  readonly waitFor: (
    to: string,
    predicate?: (mail: ReceivedMail) => boolean,
    timeout?: Duration.Duration
  ) => Effect.Effect<ReceivedMail>
  /** The messages to `to` so far. */
  readonly to: (to: string) => ReadonlyArray<ReceivedMail>
  /** The dashboard link in a message's text (there is one per mail). */
  readonly linkIn: (mail: ReceivedMail) => string
  /** Answers the next `count` messages with `code`: `451` (try again later) unless told. */
  readonly refuseNext: (count: number, code?: number) => void
  /** How many messages were refused so far. */
  readonly refused: () => number
  readonly close: Effect.Effect<void>
}

const addressesOf = (parsed: ParsedMail): Array<string> => {
  const to = parsed.to === undefined ? [] : Array.isArray(parsed.to) ? parsed.to : [parsed.to]
  return to.flatMap((group) => group.value.map((address) => (address.address ?? "").toLowerCase()))
}

/** Starts a mailbox on a free loopback port; closed with the scope. */
export const startMailbox = Effect.acquireRelease(
  Effect.callback<Mailbox>((resume) => {
    const messages: Array<ReceivedMail> = []
    const waiters = new Set<() => void>()
    let toRefuse = 0
    let refusalCode = 451
    let refusedCount = 0
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, _session, callback) {
        if (toRefuse > 0) {
          toRefuse--
          refusedCount++
          stream.resume()
          stream.on(
            "end",
            () =>
              callback(Object.assign(
                new Error(refusalCode >= 500 ? "Mailbox unavailable" : "Mailbox busy, try again later"),
                { responseCode: refusalCode }
              ))
          )
          return
        }
        simpleParser(stream).then((parsed) => {
          const from = parsed.from?.value[0]
          messages.push({
            to: addressesOf(parsed),
            from: parsed.from?.text ?? "",
            fromName: from?.name ?? "",
            fromAddress: from?.address ?? "",
            replyTo: parsed.replyTo?.value[0]?.address ?? "",
            messageId: parsed.messageId ?? "",
            subject: parsed.subject ?? "",
            text: parsed.text ?? "",
            html: typeof parsed.html === "string" ? parsed.html : "",
            attachments: parsed.attachments.map((attachment) => ({
              filename: attachment.filename ?? "",
              contentType: attachment.contentType,
              content: new Uint8Array(attachment.content)
            })),
            headerNames: parsed.headerLines.map((line) => line.key)
          })
          for (const wake of waiters) wake()
          callback()
        }, (error: Error) => callback(error))
      }
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.server.address() as AddressInfo).port
      const to = (address: string) => messages.filter((mail) => mail.to.includes(address.toLowerCase()))
      resume(Effect.succeed({
        url: `smtp://127.0.0.1:${port}`,
        messages,
        to,
        waitFor: (address, predicate = () => true, timeout = Duration.seconds(15)) =>
          Effect.callback<ReceivedMail>((wake) => {
            const check = () => {
              const found = to(address).find(predicate)
              if (found === undefined) return false
              waiters.delete(check)
              wake(Effect.succeed(found))
              return true
            }
            if (!check()) waiters.add(check)
            return Effect.sync(() => void waiters.delete(check))
          }).pipe(
            Effect.timeoutOrElse({
              duration: timeout,
              orElse: () => Effect.die(new Error(`no mail to ${address} within ${Duration.format(timeout)}`))
            })
          ),
        linkIn: (mail) => {
          const link = /https?:\/\/\S+\/#\/\S+/u.exec(mail.text)?.[0]
          if (link === undefined) throw new Error(`no link in the mail "${mail.subject}"`)
          return link
        },
        refuseNext: (count, code = 451) => {
          toRefuse = count
          refusalCode = code
        },
        refused: () => refusedCount,
        close: Effect.callback<void>((done) => server.close(() => done(Effect.void)))
      }))
    })
  }),
  (mailbox) => mailbox.close
)

/** The mail settings that send to `url`, with quick retries; the rest as configured by default. */
export const mailSettings = (url: string, overrides: Partial<MailConfigShape> = {}): MailConfigShape => ({
  ...Effect.runSync(Effect.orDie(mailConfig.parse(ConfigProvider.fromUnknown({})))),
  smtpUrl: Option.some(Redacted.make(url)),
  retryBaseDelay: Duration.millis(100),
  retryMaxDelay: Duration.millis(500),
  pollInterval: Duration.millis(100),
  timeout: Duration.seconds(5),
  ...overrides
})

/** The test's mailbox, started before the app that sends to it. */
export class TestMailbox extends Context.Service<TestMailbox, Mailbox>()("test/TestMailbox") {
  static readonly layer = Layer.effect(this, startMailbox)
}

/**
 * The application under test sending its mail to a fresh TestMailbox (also in the layer's output).
 * `mail` adjusts the mail settings, `overrides` the rest.
 */
export const makeMailTestApp = (
  database: TestDatabase,
  overrides: Partial<AppConfigShape> = {},
  mail: Partial<MailConfigShape> = {}
) =>
  Layer.unwrap(
    Effect.map(TestMailbox, (mailbox) => makeTestApp(database, { ...overrides, mail: mailSettings(mailbox.url, mail) }))
  ).pipe(Layer.provideMerge(TestMailbox.layer))
