/**
 * Users and sessions: registration (optionally with a tenant), login, logout and session checks.
 */
import { Context, Duration, Effect, Layer, Option, type Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../Config.js"
import { isUniqueViolation } from "../db/errors.js"
import { Conflict, InvalidCredentials, InvalidSession } from "../domain/Errors.js"
import { makeId } from "../domain/Ids.js"
import type { SessionPrincipal } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { generateToken, hashToken } from "../domain/Tokens.js"
import { TenantRepo, toTenant } from "../tenants/TenantRepo.js"
import { LoginResult, Registration } from "./Api.js"
import { Passwords } from "./Passwords.js"
import { SessionRepo } from "./SessionRepo.js"
import { toPublicUser, UserRepo } from "./UserRepo.js"

export interface RegisterInput {
  readonly email: string
  readonly password: Redacted.Redacted<string>
  readonly name?: string | undefined
  readonly tenant?: { readonly name: string; readonly tax_id: string } | undefined
}

export class AuthService extends Context.Service<AuthService>()("etd/AuthService", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const passwords = yield* Passwords
    const users = yield* UserRepo
    const sessions = yield* SessionRepo
    const tenants = yield* TenantRepo

    const register = Effect.fn("AuthService.register")(function*(input: RegisterInput) {
      // Hash before the transaction: the KDF is slow and must not hold a connection.
      const passwordHash = yield* passwords.hash(input.password)
      const createdAt = yield* now
      const userId = yield* makeId("user")
      const tenantId = yield* makeId("tenant")
      return yield* Effect.gen(function*() {
        yield* users.insert({ id: userId, email: input.email, name: input.name ?? null, passwordHash, createdAt })
        const user = toPublicUser({ id: userId, email: input.email, name: input.name ?? null, createdAt })
        if (input.tenant === undefined) return new Registration({ user })
        const tenantRow = {
          id: tenantId,
          name: input.tenant.name,
          taxId: input.tenant.tax_id,
          monthlyQuota: config.defaultMonthlyQuota,
          createdAt
        }
        yield* tenants.insert(tenantRow)
        yield* tenants.addMember({ tenantId, userId, role: "owner", createdAt })
        return new Registration({
          user,
          tenant: toTenant({ ...tenantRow, status: "active", plan: "free", used: 0 }, createdAt.toISOString().slice(0, 7))
        })
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error, "tenants_tax_id")
            ? Effect.fail(new Conflict({ message: "A tenant with this tax id already exists." }))
            : isUniqueViolation(error)
            ? Effect.fail(new Conflict({ message: "A user with this email already exists." }))
            : Effect.die(error))
      )
    })

    const login = Effect.fn("AuthService.login")(function*(email: string, password: Redacted.Redacted<string>) {
      const user = yield* Effect.orDie(users.findByEmail(email))
      if (Option.isNone(user)) {
        yield* passwords.burn(password)
        return yield* new InvalidCredentials()
      }
      const valid = yield* passwords.verify(password, user.value.passwordHash)
      if (!valid) return yield* new InvalidCredentials()
      const token = generateToken("sess")
      const createdAt = yield* now
      const expiresAt = new Date(createdAt.getTime() + Duration.toMillis(config.sessionTtl))
      yield* Effect.orDie(sessions.insert({
        id: yield* makeId("session"),
        userId: user.value.id,
        tokenHash: hashToken(token),
        createdAt,
        expiresAt
      }))
      return new LoginResult({ token, expires_at: expiresAt, user: toPublicUser(user.value) })
    })

    /** Checked against the database on every request: logout takes effect at once everywhere. */
    const verifySession = Effect.fn("AuthService.verifySession")(function*(token: string) {
      const session = yield* Effect.orDie(sessions.findByTokenHash(hashToken(token)))
      const at = yield* now
      if (Option.isNone(session) || session.value.revokedAt !== null || session.value.expiresAt <= at) {
        return yield* new InvalidSession()
      }
      const principal: SessionPrincipal = { _tag: "Session", sessionId: session.value.id, userId: session.value.userId }
      return principal
    })

    const logout = Effect.fn("AuthService.logout")(function*(sessionId: string) {
      yield* Effect.orDie(sessions.revoke(sessionId, yield* now))
    })

    const me = Effect.fn("AuthService.me")(function*(userId: string) {
      const user = yield* Effect.orDie(users.findById(userId))
      // A session always belongs to an existing user; users are never deleted.
      return toPublicUser(Option.getOrThrow(user))
    })

    /** A session token that leaked (SPEC §4) is revoked at once; returns the session it belonged to. */
    const revokeExposedSession = (token: string) =>
      Effect.flatMap(now, (at) => Effect.orDie(sessions.revokeByTokenHash(hashToken(token), at)))

    return { register, login, verifySession, logout, me, revokeExposedSession } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([Passwords.layer, UserRepo.layer, SessionRepo.layer, TenantRepo.layer])
  )
}
