/**
 * AuthService alone: its neighbours are mocks (Layer.mock), so each test states exactly what the
 * service asks of them. The HTTP suite (Auth.test.ts) covers the contract on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { AccountLinks } from "../../src/auth/AccountLinks.js"
import { AuthService } from "../../src/auth/AuthService.js"
import { Passwords } from "../../src/auth/Passwords.js"
import { SessionRepo } from "../../src/auth/SessionRepo.js"
import { UserRepo } from "../../src/auth/UserRepo.js"
import { AppConfigTest } from "../../src/Config.js"
import { Transaction } from "../../src/db/Repository.js"
import { Conflict } from "../../src/domain/Errors.js"
import { asId } from "../../src/domain/Ids.js"
import { hashToken } from "../../src/domain/Tokens.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { recordingTransaction } from "../support/recordingTransaction.js"

const PASSWORD = Redacted.make("correct horse battery staple")
const SESSION_TOKEN = "etd_sess_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

type Mock<S extends { readonly Service: object }> = Layer.PartialEffectful<S["Service"]>

/** The service over mocks: each neighbour does only what a test gives it, and dies if asked for more. */
const serviceWith = (mocks: {
  readonly passwords?: Mock<typeof Passwords>
  readonly users?: Mock<typeof UserRepo>
  readonly sessions?: Mock<typeof SessionRepo>
  readonly tenants?: Mock<typeof TenantService>
  readonly links?: Mock<typeof AccountLinks>
  readonly transaction?: Layer.Layer<Transaction>
}) =>
  AuthService.layerNoDeps.pipe(
    Layer.provide([
      Layer.mock(Passwords)(mocks.passwords ?? {}),
      Layer.mock(UserRepo)(mocks.users ?? {}),
      Layer.mock(SessionRepo)(mocks.sessions ?? {}),
      Layer.mock(TenantService)(mocks.tenants ?? {}),
      Layer.mock(AccountLinks)(mocks.links ?? {}),
      mocks.transaction ?? Transaction.layerTest,
      AppConfigTest()
    ])
  )

describe("AuthService (neighbours mocked)", () => {
  it.effect("hashes the password first, then writes the user, its verification mail and the tenant in one transaction that a taken tax id rolls back", () => {
    const log: Array<string> = []
    const layer = serviceWith({
      passwords: { hash: () => Effect.sync(() => log.push("hash")).pipe(Effect.as("scrypt$hash")) },
      users: { insert: (user) => Effect.sync(() => void log.push(`insert ${user.email}`)) },
      links: { sendVerification: (user) => Effect.sync(() => void log.push(`verification mail to ${user.email}`)) },
      tenants: {
        create: (tenant, ownerId) =>
          Effect.sync(() => log.push(`create ${tenant.tax_id} owned by ${ownerId.slice(0, 4)}`)).pipe(
            Effect.andThen(Effect.fail(new Conflict({ message: "A tenant with this tax id already exists." })))
          )
      },
      transaction: recordingTransaction(log)
    })
    return Effect.gen(function*() {
      const auth = yield* AuthService
      const error = yield* Effect.flip(auth.register({
        email: "ana@example.com",
        password: PASSWORD,
        tenant: { name: "Ana Ltda", tax_id: "11222333000181" }
      }))
      expect(error.message).toContain("tax id")
      // The slow KDF runs before the transaction, so it never holds a connection.
      expect(log).toEqual([
        "hash",
        "BEGIN",
        "insert ana@example.com",
        "verification mail to ana@example.com",
        "create 11222333000181 owned by usr_",
        "ROLLBACK"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.effect("an unknown email costs a password check and fails like a wrong password, with no session", () => {
    const checked: Array<string> = []
    const layer = serviceWith({
      passwords: {
        burn: () => Effect.sync(() => void checked.push("burn")),
        verify: () => Effect.sync(() => checked.push("verify")).pipe(Effect.as(false))
      },
      users: {
        findByEmail: (email) =>
          Effect.succeed(
            email === "ana@example.com"
              ? Option.some({
                id: asId("user", "usr_ana"),
                email,
                name: null,
                passwordHash: "scrypt$hash",
                emailVerifiedAt: null,
                createdAt: new Date(0)
              })
              : Option.none()
          )
      }
      // No `sessions.insert`: creating a session would die.
    })
    return Effect.gen(function*() {
      const auth = yield* AuthService
      const unknown = yield* Effect.flip(auth.login("nobody@example.com", PASSWORD))
      const wrong = yield* Effect.flip(auth.login("ana@example.com", PASSWORD))
      expect(unknown).toEqual(wrong)
      expect(unknown._tag).toBe("InvalidCredentials")
      expect(checked).toEqual(["burn", "verify"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a session is refused from the very millisecond it expires, and once revoked", () => {
    const expiresAt = new Date("2026-11-01T12:00:00Z")
    let revokedAt: Date | null = null
    const layer = serviceWith({
      sessions: {
        findByTokenHash: (tokenHash) =>
          Effect.succeed(
            tokenHash === hashToken(SESSION_TOKEN)
              ? Option.some({ id: "ses_1", userId: asId("user", "usr_1"), expiresAt, revokedAt })
              : Option.none()
          )
      }
    })
    return Effect.gen(function*() {
      const auth = yield* AuthService
      const outcome = Effect.match(auth.verifySession(SESSION_TOKEN), {
        onFailure: (error) => error._tag,
        onSuccess: (principal) => principal.sessionId
      })
      yield* TestClock.setTime(expiresAt.getTime() - 1)
      expect(yield* outcome).toBe("ses_1")
      revokedAt = new Date(expiresAt.getTime() - 2)
      expect(yield* outcome).toBe("InvalidSession")
      revokedAt = null
      yield* TestClock.setTime(expiresAt.getTime())
      expect(yield* outcome).toBe("InvalidSession")
    }).pipe(Effect.provide(layer))
  })
})
