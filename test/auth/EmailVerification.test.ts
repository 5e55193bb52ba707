/**
 * E-mail verification through the real mail: registration mails a one-time link (pt-BR or en) to a
 * real SMTP server; the link's token confirms the address once; used, expired, superseded or unknown
 * tokens are one `400 invalid_token`; until verified a user cannot create live keys or upload a
 * certificate (`403 email_unverified`), while test keys keep working.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { expectError } from "../support/accounts.js"
import { cnpj, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { makeMailTestApp, TestMailbox } from "../support/Mailbox.js"
import { completeRegistration } from "../support/registration.js"
import { client, rawRequest, testDatabases } from "../support/TestApp.js"

/** The token of a mailed dashboard link (the fragment's last segment). */
const tokenOf = (link: string) => link.slice(link.lastIndexOf("/") + 1)

/** Registers a user with a tenant (address unverified), logged in, and returns the verification mail. */
const registerUnverified = (locale?: "pt-BR" | "en") =>
  Effect.gen(function*() {
    const mailbox = yield* TestMailbox
    const email = uniqueEmail("unverified")
    const api = yield* client()
    const registration = yield* api.auth.register({
      payload: {
        email,
        password: Redacted.make(PASSWORD),
        name: "Ana",
        tenant: { name: "Ana Ltda", tax_id: cnpj() },
        ...(locale === undefined ? {} : { locale })
      }
    })
    const login = yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    const mail = yield* mailbox.waitFor(email)
    return { email, session: login.token, tenantId: registration.tenant!.id, registration, mail }
  })

const confirm = (token: string) => rawRequest("POST", "/auth/email-verification/confirm", { body: { token } })

for (const database of testDatabases) {
  layer(makeMailTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `e-mail verification (${database})`,
    (it) => {
      it.effect("registration mails a link in Portuguese by default; it verifies once, a second use is invalid_token", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const user = yield* registerUnverified()
          expect(user.registration.user.email_verified).toBe(false)
          expect(user.mail.subject).toBe("Confirme seu endereço de e-mail")
          const link = mailbox.linkIn(user.mail)
          expect(link).toMatch(/^http:\/\/localhost:3000\/#\/verify-email\/etd_verify_[a-z2-7]{32}$/u)
          const me = yield* client(user.session)
          expect((yield* me.auth.me()).email_verified).toBe(false)

          expect((yield* confirm(tokenOf(link))).status).toBe(204)
          expect((yield* me.auth.me()).email_verified).toBe(true)
          expectError(yield* confirm(tokenOf(link)), 400, "invalid_token")
        }))

      it.effect("the mail is in English when asked for", () =>
        Effect.gen(function*() {
          const user = yield* registerUnverified("en")
          expect(user.mail.subject).toBe("Confirm your e-mail address")
          expect(user.mail.text).toContain("Hello Ana,")
        }))

      it.effect("unknown, malformed and superseded tokens are all invalid_token; a resent link works", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const user = yield* registerUnverified()
          const first = tokenOf(mailbox.linkIn(user.mail))
          expectError(yield* confirm("etd_verify_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 400, "invalid_token")
          expectError(yield* confirm("not a token"), 400, "invalid_token")
          // A session token is no verification token.
          expectError(yield* confirm(user.session), 400, "invalid_token")

          const resent = yield* rawRequest("POST", "/me/email-verification", { token: user.session, body: {} })
          expect(resent.status).toBe(202)
          const second = yield* mailbox.waitFor(user.email, (mail) => tokenOf(mailbox.linkIn(mail)) !== first)
          expectError(yield* confirm(first), 400, "invalid_token")
          expect((yield* confirm(tokenOf(mailbox.linkIn(second)))).status).toBe(204)
        }))

      it.effect("resending is rate limited per user (429 with Retry-After)", () =>
        Effect.gen(function*() {
          const user = yield* registerUnverified()
          const statuses: Array<number> = []
          let retryAfter: string | undefined
          for (let i = 0; i < 4; i++) {
            const response = yield* rawRequest("POST", "/me/email-verification", { token: user.session, body: {} })
            statuses.push(response.status)
            retryAfter ??= response.headers["retry-after"]
          }
          expect(statuses).toEqual([202, 202, 202, 429])
          expect(Number(retryAfter)).toBeGreaterThan(0)
        }))

      it.effect("resending needs a session; the confirmation takes no token in the URL", () =>
        Effect.gen(function*() {
          expectError(yield* rawRequest("POST", "/me/email-verification", { body: {} }), 401, "missing_credentials")
          expectError(
            yield* rawRequest("POST", "/auth/email-verification/confirm", { body: {} }),
            400,
            "invalid_request"
          )
        }))

      it.effect("until verified: live keys and certificate uploads are 403 email_unverified; test keys work", () =>
        Effect.gen(function*() {
          const mailbox = yield* TestMailbox
          const user = yield* registerUnverified()
          const path = `/tenants/${user.tenantId}`
          yield* (yield* client(user.session)).tenants.update({
            params: { tenantId: user.tenantId },
            payload: { registration: completeRegistration }
          })
          const live = { name: "live", environment: "live", scopes: ["documents:read"] }
          const test = { name: "test", environment: "test", scopes: ["documents:read"] }
          expectError(
            yield* rawRequest("POST", `${path}/api-keys`, { token: user.session, body: live }),
            403,
            "email_unverified"
          )
          expect((yield* rawRequest("POST", `${path}/api-keys`, { token: user.session, body: test })).status).toBe(201)
          // The gate comes before the file is even read.
          const upload = { pkcs12: "AAAA", password: "not read" }
          expectError(
            yield* rawRequest("POST", `${path}/credentials`, { token: user.session, body: upload }),
            403,
            "email_unverified"
          )

          expect((yield* confirm(tokenOf(mailbox.linkIn(user.mail)))).status).toBe(204)
          expect((yield* rawRequest("POST", `${path}/api-keys`, { token: user.session, body: live })).status).toBe(201)
          // Past the gate: whatever the upload's own checks say, it is no longer email_unverified.
          const after = yield* rawRequest("POST", `${path}/credentials`, { token: user.session, body: upload })
          expect(after.json?.["code"]).not.toBe("email_unverified")
        }))
    }
  )

  layer(makeMailTestApp(database, {}, { verificationTtl: Duration.millis(400) }), {
    timeout: 60_000,
    excludeTestServices: true
  })(`e-mail verification links expire (${database})`, (it) => {
    it.effect("past its lifetime a link is invalid_token and the address stays unverified", () =>
      Effect.gen(function*() {
        const mailbox = yield* TestMailbox
        const user = yield* registerUnverified()
        const token = tokenOf(mailbox.linkIn(user.mail))
        yield* Effect.sleep(Duration.millis(500))
        expectError(yield* confirm(token), 400, "invalid_token")
        expect((yield* (yield* client(user.session)).auth.me()).email_verified).toBe(false)
      }))
  })
}
