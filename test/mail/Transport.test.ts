/**
 * Without SMTP_URL: in development each mail is one log line that deliberately shows its link (the
 * log's token guard would redact it); in production the service refuses to start, so that line can
 * never appear there. And the templates: every one in both languages, text and HTML.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { AppConfigTest } from "../../src/Config.js"
import type { AccountMessage } from "../../src/mail/Outbox.js"
import { render } from "../../src/mail/Templates.js"
import { MailDevLog, MailTransport, MailTransportLive } from "../../src/mail/Transport.js"
import { redactSecrets } from "../../src/telemetry/Logger.js"
import { mailSettings } from "../support/Mailbox.js"

const link = "http://localhost:3000/#/reset-password/etd_reset_abcdefghijklmnopqrstuvwxyz234567"
const envelope = {
  to: "ana@example.com",
  template: "password_reset",
  link,
  ...render("en", {
    template: "password_reset",
    name: "Ana",
    link,
    expiresAt: new Date("2030-01-01T00:00:00Z")
  })
}

const withoutSmtp = (production: boolean, lines: Array<string>) =>
  MailTransportLive.pipe(
    Layer.provide(AppConfigTest({ production, mail: { ...mailSettings("smtp://unused"), smtpUrl: Option.none() } })),
    Layer.provide(Layer.succeed(MailDevLog, { write: (line) => void lines.push(line) }))
  )

describe("mail without SMTP_URL", () => {
  it.effect("development: one line per mail shows the link, which the log guard would have redacted", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      yield* Effect.flatMap(MailTransport, (transport) => transport.deliver(envelope)).pipe(
        Effect.provide(withoutSmtp(false, lines))
      )
      expect(lines).toHaveLength(1)
      const line = JSON.parse(lines[0]!)
      expect(line.level).toBe("info")
      expect(line.msg).toContain(link)
      expect(line["mail.link"]).toBe(link)
      expect(line.msg).toContain("SMTP_URL is not set")
      // Through the logger the token would be gone: the line is written beside it on purpose.
      expect(redactSecrets(lines[0]!)).not.toContain("etd_reset_")
    }))

  it.effect("production: the service does not start, and nothing shows a link", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const exit = yield* Effect.exit(Layer.build(withoutSmtp(true, lines)).pipe(Effect.scoped))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("SMTP_URL is not set")
      expect(lines).toEqual([])
    }))
})

describe("mail templates", () => {
  const expiresAt = new Date("2030-03-04T15:00:00Z")
  const messages: ReadonlyArray<AccountMessage> = [
    { template: "email_verification", name: "Ana <b>", link, expiresAt },
    { template: "password_reset", name: null, link, expiresAt },
    { template: "invitation", tenantName: "Ana & Filhos", role: "developer", inviterName: "Bia", link, expiresAt },
    { template: "tax_id_verified_elsewhere", tenantName: "Ana & Filhos", taxId: "11222333000181" }
  ]
  for (const message of messages) {
    for (const locale of ["pt-BR", "en"] as const) {
      it(`${message.template} in ${locale}: subject, text and escaped HTML`, () => {
        const mail = render(locale, message)
        expect(mail.subject.length).toBeGreaterThan(5)
        expect(mail.html).toContain(`lang="${locale}"`)
        expect(mail.html).not.toContain("<b>")
        if ("link" in message) {
          expect(mail.text).toContain(`\n${link}\n`)
          expect(mail.html).toContain(`href="${link}"`)
          expect(mail.text).toContain(locale === "pt-BR" ? "horário de Brasília" : "Brasília time")
        }
      })
    }
  }

  it("the two languages differ, word for word", () => {
    for (const message of messages) expect(render("pt-BR", message).subject).not.toBe(render("en", message).subject)
    expect(render("pt-BR", messages[2]!).text).toContain(
      "Bia convidou você para participar de Ana & Filhos como desenvolvedor."
    )
    expect(render("en", messages[2]!).text).toContain("Bia invited you to join Ana & Filhos as developer.")
  })
})
