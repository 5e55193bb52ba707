/**
 * Users and sessions: registration (optionally with a tenant), login, logout and session checks.
 */
import { Context, Duration, Effect, Layer, Option, type Redacted } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { InvalidCredentials, InvalidSession } from "../domain/Errors.js"
import { makeId, type UserId } from "../domain/Ids.js"
import type { SessionPrincipal } from "../domain/Principal.js"
import type { NewTenant } from "../domain/Tenant.js"
import { now } from "../domain/Time.js"
import { generateToken, hashToken } from "../domain/Tokens.js"
import type { MailLocale } from "../mail/Outbox.js"
import { TenantService } from "../tenants/TenantService.js"
import { AccountLinks } from "./AccountLinks.js"
import { LoginResult, Registration } from "./Api.js"
import { Passwords } from "./Passwords.js"
import { SessionRepo } from "./SessionRepo.js"
import { toPublicUser, type UserProfile, UserRepo } from "./UserRepo.js"

export interface RegisterInput {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly name?: string | undefined
  readonly tenant?: NewTenant | undefined
  readonly locale?: MailLocale | undefined
}

export class AuthService extends Context.Service<AuthService>()("etd/AuthService", {
  make: Effect.gen(function*() {
    const config = yield* AppConfig
    const passwords = yield* Passwords
    const users = yield* UserRepo
    const sessions = yield* SessionRepo
    const tenants = yield* TenantService
    const inTransaction = yield* makeTransaction
    const links = yield* AccountLinks

    const register = Effect.fn("AuthService.register")(function*(input: RegisterInput) {
      // Hash before the transaction: the KDF is slow and must not hold a connection.
      const passwordHash = yield* passwords.hash(input.password)
      const createdAt = yield* now
      const user = {
        id: yield* makeId("user"),
        email: input.email,
        name: input.name ?? null,
        emailVerifiedAt: null,
        createdAt
      }
      /** The user, the tenant, the owner's membership and the verification mail commit together or not at all. */
      return yield* Effect.gen(function*() {
        yield* users.insert({ ...user, passwordHash })
        yield* links.sendVerification(user, input.locale ?? "pt-BR")
        if (input.tenant === undefined) return new Registration({ user: toPublicUser(user) })
        const tenant = yield* tenants.create(input.tenant, user.id, createdAt)
        return new Registration({ user: toPublicUser(user), tenant })
      }).pipe(inTransaction)
    })

    /** A new session for a user who proved who they are (a password, or an invitation's link while registering). */
    const openSession = Effect.fn("AuthService.openSession")(function*(user: UserProfile) {
      const token = generateToken("sess")
      const createdAt = yield* now
      const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(config.sessionTtl))
      yield* sessions.insert({
        id: yield* makeId("session"),
        userId: user.id,
        tokenHash: hashToken(token),
        createdAt,
        expiresAt
      })
      return new LoginResult({ token, expires_at: expiresAt, user: toPublicUser(user) })
    })

    const login = Effect.fn("AuthService.login")(function*(email: string, password: Redacted.Redacted<string>) {
      const user = yield* users.findByEmail(email)
      if (Option.isNone(user)) {
        yield* passwords.burn(password)
        return yield* new InvalidCredentials()
      }
      const valid = yield* passwords.verify(password, user.value.passwordHash)
      if (!valid) return yield* new InvalidCredentials()
      return yield* openSession(user.value)
    })

    /** Checked against the database on every request: logout takes effect at once everywhere. */
    const verifySession = Effect.fn("AuthService.verifySession")(function*(token: string) {
      const session = yield* sessions.findByTokenHash(hashToken(token))
      const at = yield* now
      if (Option.isNone(session) || session.value.revokedAt !== null || session.value.expiresAt <= at) {
        return yield* new InvalidSession()
      }
      const principal: SessionPrincipal = { _tag: "Session", sessionId: session.value.id, userId: session.value.userId }
      return principal
    })

    const logout = Effect.fn("AuthService.logout")(function*(sessionId: string) {
      yield* sessions.revoke(sessionId, yield* now)
    })

    const me = Effect.fn("AuthService.me")(function*(userId: UserId) {
      const user = yield* users.findById(userId)
      // A session always belongs to an existing user; users are never deleted.
      return toPublicUser(Option.getOrThrow(user))
    })

    /** A session token that leaked (SPEC §4) is revoked at once; returns the session it belonged to. */
    const revokeExposedSession = (token: string) =>
      Effect.flatMap(now, (at) => sessions.revokeByTokenHash(hashToken(token), at))

    return { register, login, openSession, verifySession, logout, me, revokeExposedSession } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([
      Passwords.layer,
      UserRepo.layer,
      SessionRepo.layer,
      TenantService.layer,
      Transaction.layer,
      AccountLinks.layer
    ])
  )
}
