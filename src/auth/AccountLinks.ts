/**
 * The links that prove a person reads a mailbox: e-mail verification and password reset. Each link
 * carries a one-time token (`etd_verify_…`, `etd_reset_…`) of which only the SHA-256 is stored; it
 * works once, before it expires, and only while it is the newest of its kind for the user. The
 * token travels in the link's fragment (never sent to a server) and comes back in a JSON body.
 */
import { Context, Duration, Effect, FiberSet, Layer, Option, type Redacted } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { InvalidToken } from "../domain/Errors.js"
import { makeId, type UserId } from "../domain/Ids.js"
import { now } from "../domain/Time.js"
import { generateLinkToken, hashToken, linkTokenPattern } from "../domain/Tokens.js"
import { linkTo } from "../mail/MailConfig.js"
import { type MailLocale, Outbox } from "../mail/Outbox.js"
import { Passwords } from "./Passwords.js"
import { SessionRepo } from "./SessionRepo.js"
import type { UserProfile } from "./UserRepo.js"
import { UserRepo } from "./UserRepo.js"
import { type TokenPurpose, UserTokenRepo } from "./UserTokenRepo.js"

export class AccountLinks extends Context.Service<AccountLinks>()("etd/AccountLinks", {
  make: Effect.gen(function*() {
    const { mail: config } = yield* AppConfig
    const outbox = yield* Outbox
    const users = yield* UserRepo
    const tokens = yield* UserTokenRepo
    const sessions = yield* SessionRepo
    const passwords = yield* Passwords
    const inTransaction = yield* makeTransaction
    // Reset requests are answered before they are looked into (see requestReset); their work runs
    // here, and is interrupted with the service at shutdown.
    const background = yield* FiberSet.make()

    /** A new token for the user (older ones of the purpose are used up), with its link and expiry. */
    const issue = (userId: UserId, purpose: TokenPurpose) =>
      Effect.gen(function*() {
        const token = generateLinkToken(purpose === "email_verification" ? "verify" : "reset")
        const createdAt = yield* now
        const expiresAt = new Date(
          createdAt.getTime() +
            Duration.toMillis(purpose === "email_verification" ? config.verificationTtl : config.resetTtl)
        )
        yield* tokens.issue({
          id: yield* makeId("userToken"),
          userId,
          purpose,
          tokenHash: hashToken(token),
          createdAt,
          expiresAt
        })
        const path = purpose === "email_verification" ? "verify-email" : "reset-password"
        return { link: linkTo(config, `${path}/${token}`), expiresAt }
      })

    /**
     * Queues a verification mail for the user, in the caller's transaction when there is one: a
     * registration and its mail commit together.
     */
    const sendVerification = Effect.fn("AccountLinks.sendVerification")(
      function*(user: Pick<UserProfile, "id" | "email" | "name">, locale: MailLocale) {
        const { link, expiresAt } = yield* issue(user.id, "email_verification")
        yield* outbox.send({
          to: user.email,
          locale,
          message: { template: "email_verification", name: user.name, link, expiresAt }
        })
      }
    )

    /** A new verification mail for a signed-in user; nothing when the address is already verified. */
    const resendVerification = Effect.fn("AccountLinks.resendVerification")(
      function*(userId: UserId, locale: MailLocale) {
        const user = Option.getOrThrow(yield* users.findById(userId))
        if (user.emailVerifiedAt !== null) return
        yield* sendVerification(user, locale).pipe(inTransaction)
      }
    )

    /** Uses a token up, or fails with one answer whatever was wrong (malformed, unknown, used, expired, superseded). */
    const consume = (token: string, purpose: TokenPurpose) =>
      Effect.gen(function*() {
        if (!linkTokenPattern.test(token)) return yield* new InvalidToken()
        const userId = yield* tokens.consume(hashToken(token), purpose, yield* now)
        if (userId === undefined) return yield* new InvalidToken()
        return userId
      })

    const confirmVerification = Effect.fn("AccountLinks.confirmVerification")(function*(token: string) {
      yield* Effect.gen(function*() {
        const userId = yield* consume(token, "email_verification")
        yield* users.markVerified(userId, yield* now)
      }).pipe(inTransaction)
    })

    /**
     * Answers at once and looks into the request after: a known address and an unknown one take the
     * same time, and only a known one gets a mail.
     */
    const requestReset = Effect.fn("AccountLinks.requestReset")(function*(email: string, locale: MailLocale) {
      const work = Effect.gen(function*() {
        const user = yield* users.findByEmail(email)
        if (Option.isNone(user)) return
        yield* Effect.gen(function*() {
          const { link, expiresAt } = yield* issue(user.value.id, "password_reset")
          yield* outbox.send({
            to: user.value.email,
            locale,
            message: { template: "password_reset", name: user.value.name, link, expiresAt }
          })
        }).pipe(inTransaction)
      }).pipe(
        Effect.catchCause((cause) => Effect.logError("password reset request failed", cause)),
        Effect.withSpan("AccountLinks.requestReset.work")
      )
      yield* FiberSet.run(background, work)
    })

    /**
     * Sets the new password, ends every session of the user and marks the address verified (the
     * link proved the mailbox), all in one transaction with the token's use.
     */
    const confirmReset = Effect.fn("AccountLinks.confirmReset")(
      function*(token: string, password: Redacted.Redacted<string>) {
        if (!linkTokenPattern.test(token)) return yield* new InvalidToken()
        // Hash before the transaction: the KDF is slow and must not hold a connection.
        const passwordHash = yield* passwords.hash(password)
        yield* Effect.gen(function*() {
          const userId = yield* consume(token, "password_reset")
          const at = yield* now
          yield* users.setPasswordHash(userId, passwordHash)
          yield* sessions.revokeAllOf(userId, at)
          yield* users.markVerified(userId, at)
        }).pipe(inTransaction)
      }
    )

    return { sendVerification, resendVerification, confirmVerification, requestReset, confirmReset } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([Passwords.layer, UserRepo.layer, UserTokenRepo.layer, SessionRepo.layer, Transaction.layer])
  )
}
