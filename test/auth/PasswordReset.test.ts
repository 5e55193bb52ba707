/**
 * Password reset through the real mail: the request is always `202` (no account enumeration) and
 * mails a known address only; the link sets the new password once, ends every session of the user
 * and marks the address verified; the old password then fails and the new one works.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { expectError } from "../support/accounts.js"
import { PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { makeMailTestApp, TestMailbox } from "../support/Mailbox.js"
import { client, rawRequest, testDatabases } from "../support/TestApp.js"

const tokenOf = (link: string) => link.slice(link.lastIndexOf("/") + 1)
const NEW_PASSWORD = "a brand new passphrase"

const requestReset = (email: string, locale?: "pt-BR" | "en") =>
  rawRequest("POST", "/auth/password-reset", { body: { email, ...(locale === undefined ? {} : { locale }) } })
const confirmReset = (token: string, password = NEW_PASSWORD) =>
  rawRequest("POST", "/auth/password-reset/confirm", { body: { token, password } })
const login = (email: string, password: string) => rawRequest("POST", "/auth/login", { body: { email, password } })

for (const database of testDatabases) {
  layer(makeMailTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `password reset (${database})`,
    (it) => {
      it.effect("the link sets the password once, ends every session and marks the address verified", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const owner = yield* registerOwner("reset")
          const other = yield* (yield* client()).auth.login({
            payload: { email: owner.email, password: Redacted.make(PASSWORD) }
          })
          const accepted = yield* requestReset(owner.email, "en")
          expect(accepted.status).toBe(202)
          const mail = yield* mailbox.waitFor(owner.email, (m) => m.subject === "Reset your password")
          const link = mailbox.linkIn(mail)
          expect(link).toMatch(/\/#\/reset-password\/etd_reset_[a-z2-7]{32}$/u)

          // Too short a password is refused before the token is spent.
          expectError(yield* confirmReset(tokenOf(link), "short"), 400, "invalid_request")
          expect((yield* confirmReset(tokenOf(link))).status).toBe(204)
          expectError(yield* confirmReset(tokenOf(link), "yet another passphrase"), 400, "invalid_token")

          for (const session of [owner.session, other.token]) {
            expectError(yield* rawRequest("GET", "/me", { token: session }), 401, "invalid_session")
          }
          expectError(yield* login(owner.email, PASSWORD), 401, "invalid_credentials")
          const fresh = yield* login(owner.email, NEW_PASSWORD)
          expect(fresh.status).toBe(200)
          expect(fresh.json?.["user"]?.["email_verified"]).toBe(true)
        }))

      it.effect("proves the mailbox: an unverified user who resets is verified", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const email = uniqueEmail("unverified")
          yield* (yield* client()).auth.register({ payload: { email, password: Redacted.make(PASSWORD) } })
          expect((yield* requestReset(email)).status).toBe(202)
          const mail = yield* mailbox.waitFor(email, (m) => m.subject === "Redefinição de senha")
          expect((yield* confirmReset(tokenOf(mailbox.linkIn(mail)))).status).toBe(204)
          const fresh = yield* login(email, NEW_PASSWORD)
          expect(fresh.json?.["user"]?.["email_verified"]).toBe(true)
        }))

      it.effect("an unknown address gets the same 202 and no mail", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const owner = yield* registerOwner("known")
          const unknown = uniqueEmail("nobody")
          const [known, none] = [yield* requestReset(owner.email), yield* requestReset(unknown)]
          expect([known.status, known.text]).toEqual([none.status, none.text])
          expect(none.status).toBe(202)
          yield* mailbox.waitFor(owner.email, (m) => m.subject === "Redefinição de senha")
          yield* Effect.sleep(Duration.millis(300))
          expect(mailbox.to(unknown)).toEqual([])
        }))

      it.effect("a newer link supersedes the older; unknown tokens are invalid_token", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const owner = yield* registerOwner("twice")
          yield* requestReset(owner.email)
          const first = yield* mailbox.waitFor(owner.email, (m) => m.subject === "Redefinição de senha")
          yield* requestReset(owner.email)
          const second = yield* mailbox.waitFor(
            owner.email,
            (m) => m.subject === "Redefinição de senha" && m !== first
          )
          expectError(yield* confirmReset(tokenOf(mailbox.linkIn(first))), 400, "invalid_token")
          expectError(yield* confirmReset("etd_reset_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 400, "invalid_token")
          // A verification token is no reset token.
          expectError(yield* confirmReset("etd_verify_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 400, "invalid_token")
          expect((yield* confirmReset(tokenOf(mailbox.linkIn(second)))).status).toBe(204)
        }))

      it.effect("two confirmations of one link at once: exactly one sets the password", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const owner = yield* registerOwner("race")
          yield* requestReset(owner.email)
          const mail = yield* mailbox.waitFor(owner.email, (m) => m.subject === "Redefinição de senha")
          const token = tokenOf(mailbox.linkIn(mail))
          const results = yield* Effect.all([
            confirmReset(token, "first racing passphrase"),
            confirmReset(token, "second racing passphrase")
          ], { concurrency: 2 })
          expect(results.map((r) => r.status).sort()).toEqual([204, 400])
        }))

      it.effect("requests are rate limited per address (429 with Retry-After)", () =>
        Effect.gen(function*() {
          const email = uniqueEmail("limited")
          const statuses: Array<number> = []
          for (let i = 0; i < 4; i++) statuses.push((yield* requestReset(email)).status)
          expect(statuses).toEqual([202, 202, 202, 429])
        }))
    }
  )
}
