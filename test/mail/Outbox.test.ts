/**
 * The outbox end to end: a mail queued through `Outbox.send` reaches a real SMTP server (the test's
 * Mailbox) through the real transport, in its locale; a mail queued in a transaction that rolls
 * back is never sent; a refusing server is retried and the mail arrives once; the sealed payload
 * is unreadable at rest and erased once sent.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Outbox } from "../../src/mail/Outbox.js"
import { uniqueEmail } from "../support/fixtures.js"
import { makeMailTestApp, TestMailbox } from "../support/Mailbox.js"
import { testDatabases } from "../support/TestApp.js"

const expiresAt = new Date("2030-01-02T15:00:00Z")

for (const database of testDatabases) {
  layer(makeMailTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `mail outbox (${database})`,
    (it) => {
      it.effect("a queued mail arrives at the SMTP server, rendered in its locale, text and HTML", () =>
        Effect.gen(function*() {
          const outbox = yield* Outbox
          const mailbox = yield* TestMailbox
          const pt = uniqueEmail("pt")
          const en = uniqueEmail("en")
          const link = "http://localhost:3000/#/verify-email/etd_verify_abcdefghijklmnopqrstuvwxyz234567"
          yield* outbox.send({
            to: pt,
            locale: "pt-BR",
            message: { template: "email_verification", name: "Ana", link, expiresAt }
          })
          yield* outbox.send({
            to: en,
            locale: "en",
            message: { template: "email_verification", name: null, link, expiresAt }
          })
          const ptMail = yield* mailbox.waitFor(pt)
          expect(ptMail.subject).toBe("Confirme seu endereço de e-mail")
          expect(ptMail.text).toContain("Olá, Ana,")
          expect(mailbox.linkIn(ptMail)).toBe(link)
          expect(ptMail.html).toContain(`href="${link}"`)
          expect(ptMail.from).toContain("no-reply@localhost")
          const enMail = yield* mailbox.waitFor(en)
          expect(enMail.subject).toBe("Confirm your e-mail address")
          expect(enMail.text).toContain("The link works once")
        }))

      it.effect("a mail queued in a transaction that rolls back is never sent", () =>
        Effect.gen(function*() {
          const outbox = yield* Outbox
          const mailbox = yield* TestMailbox
          const sql = yield* SqlClient.SqlClient
          const lost = uniqueEmail("lost")
          const kept = uniqueEmail("kept")
          const message = {
            template: "tax_id_verified_elsewhere",
            tenantName: "Ana Ltda",
            taxId: "11222333000181"
          } as const
          yield* sql.withTransaction(
            Effect.andThen(outbox.send({ to: lost, locale: "en", message }), Effect.fail("rolled back" as const))
          ).pipe(Effect.flip)
          yield* sql.withTransaction(outbox.send({ to: kept, locale: "en", message }))
          yield* mailbox.waitFor(kept)
          // The kept one was queued after the lost one would have been: had it been queued, it would be here.
          yield* Effect.sleep(Duration.millis(300))
          expect(mailbox.to(lost)).toEqual([])
        }))

      it.effect("a refusing server is retried and the mail arrives once; its payload is sealed, then erased", () =>
        Effect.gen(function*() {
          const outbox = yield* Outbox
          const mailbox = yield* TestMailbox
          const sql = yield* SqlClient.SqlClient
          const to = uniqueEmail("retry")
          const token = "etd_reset_abcdefghijklmnopqrstuvwxyz234567"
          mailbox.refuseNext(2)
          yield* outbox.send({
            to,
            locale: "en",
            message: { template: "password_reset", name: null, link: `http://x/#/reset-password/${token}`, expiresAt }
          })
          const mail = yield* mailbox.waitFor(to)
          expect(mail.subject).toBe("Reset your password")
          expect(mailbox.refused()).toBeGreaterThanOrEqual(2)
          // Settled: the row says sent after three attempts, and nothing of the payload is left.
          let row: { state: string; attempts: number; payload: string | null; lastError: string | null } | undefined
          for (let i = 0; i < 50; i++) {
            ;[row] = yield* sql<typeof row & object>`
            SELECT state, attempts, payload, last_error FROM mail_jobs WHERE template = 'password_reset'
            ORDER BY created_at DESC LIMIT 1`.pipe(Effect.orDie)
            if (row?.state === "sent") break
            yield* Effect.sleep(Duration.millis(50))
          }
          expect(row).toMatchObject({ state: "sent", attempts: 3, payload: null, lastError: null })
          yield* Effect.sleep(Duration.millis(500))
          expect(mailbox.to(to)).toHaveLength(1)
        }))

      it.effect("the queued payload keeps neither the address nor the token readable", () =>
        Effect.gen(function*() {
          const outbox = yield* Outbox
          const sql = yield* SqlClient.SqlClient
          const mailbox = yield* TestMailbox
          const to = uniqueEmail("sealed")
          const token = "etd_verify_sealedsealedsealedsealedsealed2345"
          mailbox.refuseNext(1000)
          yield* outbox.send({
            to,
            locale: "en",
            message: { template: "email_verification", name: null, link: `http://x/#/verify-email/${token}`, expiresAt }
          })
          const rows = yield* sql<{ payload: string | null; recipientKey: string }>`
          SELECT payload, recipient_key FROM mail_jobs WHERE state = 'pending'`.pipe(Effect.orDie)
          mailbox.refuseNext(0)
          expect(rows.length).toBeGreaterThan(0)
          for (const row of rows) {
            expect(row.payload).not.toBeNull()
            expect(row.payload).not.toContain(token)
            expect(row.payload).not.toContain(to)
            expect(row.recipientKey).not.toContain(to)
          }
          yield* mailbox.waitFor(to)
        }))
    }
  )
}
