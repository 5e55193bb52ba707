/**
 * Accepting invitations by the mailed link (SPEC §5), through a real SMTP server: the mail arrives
 * with a dashboard link whose fragment carries the one-time token; the link registers a new person
 * (address verified, a session returned) or, with that account's session, joins an existing account;
 * it works once, and a resend, a revocation or the expiry kills it (`400 invalid_token`). The
 * squatting sequence of the issue: whoever registers someone else's address first gets nothing.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { addMember, expectError, field, registerUser } from "../support/accounts.js"
import { PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { makeMailTestApp, type ReceivedMail, TestMailbox } from "../support/Mailbox.js"
import { client, rawRequest, testDatabases } from "../support/TestApp.js"

const NEW_PASSWORD = "a long enough secret phrase"

/** The token of a mailed dashboard link (the fragment's last segment). */
const tokenOf = (link: string) => link.slice(link.lastIndexOf("/") + 1)

const invite = (session: string, tenantId: string, email: string, role = "developer", locale?: "en" | "pt-BR") =>
  rawRequest("POST", `/v1/tenants/${tenantId}/invitations`, {
    token: session,
    body: { email, role, ...(locale === undefined ? {} : { locale }) }
  })

const lookup = (token: string) => rawRequest("POST", "/v1/invitations/lookup", { body: { token } })

const accept = (body: Record<string, unknown>, session?: string) =>
  rawRequest("POST", "/v1/invitations/accept", { body, ...(session === undefined ? {} : { token: session }) })

const isInvitation = (mail: ReceivedMail) => mail.text.includes("/#/invitation/")

/** The `count`-th invitation mail to `email` (registration also mails the address), and its link's token. */
const mailTo = (email: string, count = 1) =>
  Effect.gen(function*() {
    const mailbox = yield* TestMailbox
    const invitations = () => mailbox.to(email).filter(isInvitation)
    yield* mailbox.waitFor(email, () => invitations().length >= count)
    const mail = invitations()[count - 1]!
    const link = mailbox.linkIn(mail)
    return { mail, link, token: tokenOf(link) }
  })

const rolesOf = (session: string, tenantId: string) =>
  Effect.gen(function*() {
    const page = yield* (yield* client(session)).tenants.listMembers({ params: { tenantId }, query: { limit: 100 } })
    return new Map(page.data.map((member) => [member.user.email, member.role]))
  })

for (const database of testDatabases) {
  layer(makeMailTestApp(database, { loginRateLimit: { perMinute: 100_000 } }), {
    timeout: 90_000,
    excludeTestServices: true
  })(`invitation links (${database})`, (it) => {
    it.effect("a new person: the mail arrives, its link shows the invitation, registers them once and signs them in", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("Acme")
        const email = uniqueEmail("cfo")
        const created = yield* invite(owner.session, owner.tenantId, email, "admin")
        expect(created.status, created.text).toBe(201)
        const { link, mail, token } = yield* mailTo(email)
        expect(mail.subject).toBe("Convite para Acme Ltda")
        expect(mail.text).toContain("Acme convidou você para participar de Acme Ltda")
        expect(link).toMatch(/^http:\/\/localhost:3000\/#\/invitation\/etd_inv_[a-z2-7]{32}$/u)
        expect(created.text).not.toContain(token)

        const shown = yield* lookup(token)
        expect(shown.status, shown.text).toBe(200)
        expect(shown.json).toMatchObject({
          object: "invitation_lookup",
          account_exists: false,
          invitation: { email, role: "admin", status: "pending", tenant: { id: owner.tenantId, name: "Acme Ltda" } }
        })
        expect(shown.text).not.toContain(token)

        // A new account needs a password: nothing is created without one.
        expectError(yield* accept({ token }), 400, "invalid_request")
        expectError(yield* accept({ token, password: "short" }), 400, "invalid_request")

        const accepted = yield* accept({ token, name: "Carla", password: NEW_PASSWORD })
        expect(accepted.status, accepted.text).toBe(200)
        expect(accepted.json).toMatchObject({
          object: "invitation_acceptance",
          role: "admin",
          tenant: { id: owner.tenantId },
          user: { email, name: "Carla", email_verified: true }
        })
        const session = String(field(accepted.json, "token"))
        expect(session).toMatch(/^etd_sess_[a-z2-7]{32}$/u)
        // The session lands in the tenant with the role; the password logs in too.
        const mine = yield* (yield* client(session)).auth.myTenants({ query: {} })
        expect(mine.data.map((m) => [m.tenant.id, m.role])).toEqual([[owner.tenantId, "admin"]])
        yield* (yield* client()).auth.login({ payload: { email, password: Redacted.make(NEW_PASSWORD) } })
        // The link proved the mailbox: no verification mail follows.
        expect((yield* TestMailbox).to(email).filter((received) => !isInvitation(received))).toEqual([])

        // Once only.
        expectError(yield* accept({ token, password: NEW_PASSWORD }), 400, "invalid_token")
        expectError(yield* lookup(token), 400, "invalid_token")
      }))

    it.effect("the mail follows the invitation's language; unknown and malformed tokens are invalid_token", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("Globex")
        const email = uniqueEmail("english")
        yield* invite(owner.session, owner.tenantId, email, "developer", "en")
        const { mail } = yield* mailTo(email)
        expect(mail.subject).toBe("Invitation to Globex Ltda")
        expect(mail.text).toContain("invited you to join Globex Ltda")
        for (const token of [`etd_inv_${"a".repeat(32)}`, "etd_inv_short", "", `etd_sess_${"a".repeat(32)}`]) {
          expectError(yield* lookup(token), 400, "invalid_token")
          expectError(yield* accept({ token, password: NEW_PASSWORD }), 400, "invalid_token")
        }
        expectError(yield* rawRequest("POST", "/v1/invitations/lookup", { body: {} }), 400, "invalid_request")
      }))

    it.effect("a resend mails a new link and kills the old one; a revocation kills the link", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const email = uniqueEmail("resent")
        const created = yield* invite(owner.session, owner.tenantId, email)
        const first = yield* mailTo(email)
        const api = yield* client(owner.session)
        const invitationId = String(field(created.json, "id"))
        yield* api.invitations.resend({ params: { tenantId: owner.tenantId, invitationId } })
        const second = yield* mailTo(email, 2)
        expect(second.token).not.toBe(first.token)
        expectError(yield* lookup(first.token), 400, "invalid_token")
        expectError(yield* accept({ token: first.token, password: NEW_PASSWORD }), 400, "invalid_token")
        expect((yield* lookup(second.token)).status).toBe(200)

        yield* api.invitations.revoke({ params: { tenantId: owner.tenantId, invitationId } })
        expectError(yield* lookup(second.token), 400, "invalid_token")
        expectError(yield* accept({ token: second.token, password: NEW_PASSWORD }), 400, "invalid_token")
        // Nobody was created by the refused acceptances.
        expectError(
          yield* rawRequest("POST", "/v1/auth/login", { body: { email, password: NEW_PASSWORD } }),
          401,
          "invalid_credentials"
        )
      }))

    it.effect("two acceptances of one link at once: one joins, the other is invalid_token; one account exists", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const email = uniqueEmail("racer")
        yield* invite(owner.session, owner.tenantId, email, "admin")
        const { token } = yield* mailTo(email)
        const responses = yield* Effect.all(
          Array.from({ length: 4 }, (_, i) => accept({ token, name: `racer ${i}`, password: NEW_PASSWORD })),
          { concurrency: "unbounded" }
        )
        expect(responses.map((response) => response.status).sort()).toEqual([200, 400, 400, 400])
        for (const response of responses.filter((r) => r.status === 400)) expectError(response, 400, "invalid_token")
        expect((yield* rolesOf(owner.session, owner.tenantId)).get(email)).toBe("admin")
      }))

    it.effect("an existing account accepts by link only with its own session (401 without, 403 another's)", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const user = yield* registerUser("existing")
        const other = yield* registerUser("other")
        yield* invite(owner.session, owner.tenantId, user.email)
        const { token } = yield* mailTo(user.email)
        expect(field((yield* lookup(token)).json, "account_exists")).toBe(true)

        expectError(yield* accept({ token }), 401, "missing_credentials")
        // A password does not stand in for the account's session.
        expectError(yield* accept({ token, password: PASSWORD }), 401, "missing_credentials")
        expectError(yield* accept({ token }, other.session), 403, "forbidden")
        expectError(yield* accept({ token }, `etd_sess_${"a".repeat(32)}`), 401, "invalid_session")
        expect((yield* rolesOf(owner.session, owner.tenantId)).has(user.email)).toBe(false)

        const accepted = yield* accept({ token }, user.session)
        expect(accepted.status, accepted.text).toBe(200)
        expect(accepted.json).toMatchObject({
          token: null,
          expires_at: null,
          role: "developer",
          user: { id: user.userId }
        })
        expect((yield* rolesOf(owner.session, owner.tenantId)).get(user.email)).toBe("developer")
      }))

    it.effect("an inviter demoted before the link is used no longer vouches: 409 invalid_state, nobody created", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const admin = yield* addMember(owner, "admin")
        const email = uniqueEmail("vouched")
        yield* invite(admin.session, owner.tenantId, email, "admin")
        const { token } = yield* mailTo(email)
        yield* (yield* client(owner.session)).tenants.changeMemberRole({
          params: { tenantId: owner.tenantId, userId: admin.userId },
          payload: { role: "developer" }
        })
        expectError(yield* accept({ token, password: NEW_PASSWORD }), 409, "invalid_state")
        expect(field((yield* lookup(token)).json, "account_exists")).toBe(false)
      }))

    it.effect("the squatter: registering the CFO's address first gains nothing, and the link makes no second account", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("Victim")
        const cfo = uniqueEmail("cfo")
        // The squatter registers the address before the owner invites it (unverified: they lack the mailbox).
        const api = yield* client()
        yield* api.auth.register({ payload: { email: cfo, password: Redacted.make(PASSWORD), name: "Squatter" } })
        const squatter = yield* api.auth.login({ payload: { email: cfo, password: Redacted.make(PASSWORD) } })

        const created = yield* invite(owner.session, owner.tenantId, cfo, "admin")
        expect(created.status, created.text).toBe(201)
        const invitationId = String(field(created.json, "id"))
        // The squatter's session neither sees nor accepts it: the address is not proven.
        expectError(yield* rawRequest("GET", "/v1/me/invitations", { token: squatter.token }), 403, "email_unverified")
        for (const action of ["accept", "decline"]) {
          expectError(
            yield* rawRequest("POST", `/v1/me/invitations/${invitationId}/${action}`, { token: squatter.token }),
            403,
            "email_unverified"
          )
        }
        // Nor with a link they do not have: any guess is invalid_token.
        expectError(yield* accept({ token: `etd_inv_${"b".repeat(32)}` }, squatter.token), 400, "invalid_token")
        expect((yield* rolesOf(owner.session, owner.tenantId)).has(cfo)).toBe(false)
        const squatterTenants = yield* (yield* client(squatter.token)).auth.myTenants({ query: {} })
        expect(squatterTenants.data).toEqual([])

        // The link went to the mailbox; it cannot create a second account for the address either.
        const { token } = yield* mailTo(cfo)
        expectError(yield* accept({ token, password: NEW_PASSWORD }), 401, "missing_credentials")
      }))

    it.effect("an unverified account accepting by link with its own session becomes verified", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const email = uniqueEmail("late")
        const api = yield* client()
        yield* api.auth.register({ payload: { email, password: Redacted.make(PASSWORD) } })
        const session = (yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })).token
        yield* invite(owner.session, owner.tenantId, email)
        const accepted = yield* accept({ token: (yield* mailTo(email)).token }, session)
        expect(accepted.status, accepted.text).toBe(200)
        expect(accepted.json).toMatchObject({ user: { email, email_verified: true } })
        expect((yield* (yield* client(session)).auth.me()).email_verified).toBe(true)
      }))
  })

  layer(
    makeMailTestApp(database, { loginRateLimit: { perMinute: 100_000 }, invitationTtl: Duration.millis(800) }),
    { timeout: 60_000, excludeTestServices: true }
  )(`invitation link expiry (${database})`, (it) => {
    it.effect("an expired link is invalid_token; a resend mails a working one", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const email = uniqueEmail("late")
        const created = yield* invite(owner.session, owner.tenantId, email)
        const first = yield* mailTo(email)
        yield* Effect.sleep(Duration.millis(1_000))
        expectError(yield* lookup(first.token), 400, "invalid_token")
        expectError(yield* accept({ token: first.token, password: NEW_PASSWORD }), 400, "invalid_token")
        yield* (yield* client(owner.session)).invitations.resend({
          params: { tenantId: owner.tenantId, invitationId: String(field(created.json, "id")) }
        })
        const second = yield* mailTo(email, 2)
        expect((yield* accept({ token: second.token, password: NEW_PASSWORD })).status).toBe(200)
      }))
  })

  layer(makeMailTestApp(database, { loginRateLimit: { perMinute: 3 } }), {
    timeout: 60_000,
    excludeTestServices: true
  })(
    `invitation link limits (${database})`,
    (it) => {
      it.effect("guessing links is rate limited per client address (429 with Retry-After)", () =>
        Effect.gen(function*() {
          const statuses: Array<number> = []
          let limited: { readonly headers: Record<string, string> } | undefined
          for (let i = 0; i < 12; i++) {
            // The limit is per client address: every attempt counts, whatever the token.
            const response = yield* lookup(`etd_inv_${"c".repeat(32)}`)
            statuses.push(response.status)
            if (response.status === 429) limited = response
          }
          expect(statuses.slice(0, 9).every((status) => status === 400)).toBe(true)
          expect(statuses).toContain(429)
          expect(Number(limited?.headers["retry-after"])).toBeGreaterThan(0)
        }))
    }
  )
}
