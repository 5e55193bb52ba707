/**
 * KeyService and AuthService against the database with the TestClock: the exact boundaries of a
 * rotation's grace period and of a session's lifetime, and the batching of `last_used_at`.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { AuthService } from "../../src/auth/AuthService.js"
import { AppConfigTest } from "../../src/Config.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { asId, type TenantId, type UserId } from "../../src/domain/Ids.js"
import { KeyService } from "../../src/keys/KeyService.js"
import { Outbox } from "../../src/mail/Outbox.js"
import { cnpj, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { databaseLayer, testDatabases } from "../support/TestApp.js"

const START = Date.parse("2026-11-01T12:00:00Z")
const DAY = 24 * 60 * 60 * 1000

/** Real time passes (TestClock does not move), so the database can answer a fiber we do not join. */
const realPause = (millis: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

const lastUsedAt = (keyId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ lastUsedAt: Date | null }>`SELECT last_used_at FROM api_keys WHERE id = ${keyId}`
    expect(rows).toHaveLength(1)
    return rows[0]!.lastUsedAt
  })

/** Counts every UPDATE statement that sets last_used_at, with a statement-level trigger. */
const installTouchCounter = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE IF NOT EXISTS touch_statements (n integer NOT NULL)`
  yield* sql`
    CREATE OR REPLACE FUNCTION count_touch() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO touch_statements (n) VALUES (1);
      RETURN NULL;
    END
    $$`
  yield* sql`DROP TRIGGER IF EXISTS api_keys_touch_counter ON api_keys`
  yield* sql`
    CREATE TRIGGER api_keys_touch_counter AFTER UPDATE OF last_used_at ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION count_touch()`
  yield* sql`DELETE FROM touch_statements`
  return Effect.map(
    sql<{ count: number }>`SELECT count(*)::int AS count FROM touch_statements`,
    (rows) => rows[0]!.count
  )
})

/** A user with a tenant, registered at the current TestClock time. */
const tenantFixture = Effect.gen(function*() {
  const auth = yield* AuthService
  const email = uniqueEmail("rotation")
  const registration = yield* auth.register({
    email,
    password: Redacted.make(PASSWORD),
    tenant: { name: "Rotation Ltda", tax_id: cnpj() }
  })
  return { email, userId: asId("user", registration.user.id), tenantId: asId("tenant", registration.tenant!.id) }
})

const newKey = (owner: { userId: UserId; tenantId: TenantId }, environment: "live" | "test" = "live") =>
  Effect.flatMap(KeyService, (keys) =>
    keys.create({
      tenantId: owner.tenantId,
      name: "rotation",
      environment,
      scopes: ["documents:read"],
      createdBy: owner.userId
    }))

/** The id of a key the service created, as its methods take it. */
const keyIdOf = (created: { readonly api_key: { readonly id: string } }) => asId("apiKey", created.api_key.id)

const verifyTag = (token: string) =>
  Effect.flatMap(KeyService, (keys) =>
    keys.verify(token).pipe(
      Effect.map(({ principal }) => `ok:${principal.keyId}`),
      Effect.catch((error) => Effect.succeed(error._tag))
    ))

for (const database of testDatabases) {
  const config = AppConfigTest({
    // Far enough that the background flush never runs by itself while a test moves the clock.
    lastUsedFlushInterval: Duration.days(3650),
    sessionTtl: Duration.hours(12)
  })
  const services = Layer.mergeAll(KeyService.layer, AuthService.layer).pipe(
    // Registration queues a verification mail; these tests are about keys and sessions.
    Layer.provideMerge(
      Layer.succeed(Outbox, Outbox.of({ send: () => Effect.void, queueing: () => Effect.die("no note mail here") }))
    ),
    Layer.provideMerge(Layer.provideMerge(MigrationsLive, databaseLayer(database))),
    Layer.provideMerge(config)
  )

  layer(services, { timeout: 60_000 })(`key rotation and sessions with the TestClock (${database})`, (it) => {
    it.effect("grace 7 days: the old token works until 1 ms before expires_at, then api_key_expired", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const old = yield* newKey(owner)
        const rotated = yield* keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, 7)
        const expiresAt = rotated.previous.expires_at.getTime()
        expect(expiresAt).toBe(START + 7 * DAY)

        expect(yield* verifyTag(old.token)).toBe(`ok:${old.api_key.id}`)
        yield* TestClock.setTime(expiresAt - 1)
        expect(yield* verifyTag(old.token)).toBe(`ok:${old.api_key.id}`)
        yield* TestClock.setTime(expiresAt)
        expect(yield* verifyTag(old.token)).toBe("ApiKeyExpired")
        yield* TestClock.setTime(expiresAt + 1)
        expect(yield* verifyTag(old.token)).toBe("ApiKeyExpired")
        yield* TestClock.setTime(expiresAt + 365 * DAY)
        expect(yield* verifyTag(old.token)).toBe("ApiKeyExpired")
        // The replacement is unaffected throughout.
        expect(yield* verifyTag(rotated.token)).toBe(`ok:${rotated.api_key.id}`)

        const error = yield* Effect.flip(keys.verify(old.token))
        expect(error._tag).toBe("ApiKeyExpired")
        expect(error.message).toContain(new Date(expiresAt).toISOString())
        expect(error.code).toBe("api_key_expired")
      }))

    it.effect("the listed status goes active -> expiring -> expired at the same instant", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const old = yield* newKey(owner)
        const statusOf = Effect.map(
          keys.list(owner.tenantId, { limit: 10 }),
          (page) => page.data.find((key) => key.id === old.api_key.id)?.status
        )
        expect(yield* statusOf).toBe("active")
        const rotated = yield* keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, 2)
        expect(yield* statusOf).toBe("expiring")
        yield* TestClock.setTime(rotated.previous.expires_at.getTime() - 1)
        expect(yield* statusOf).toBe("expiring")
        yield* TestClock.setTime(rotated.previous.expires_at.getTime())
        expect(yield* statusOf).toBe("expired")
        // An expired key cannot be rotated again.
        const error = yield* Effect.flip(keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, undefined))
        expect(error._tag).toBe("InvalidState")
      }))

    it.effect("grace 0 expires the old token immediately", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const old = yield* newKey(owner, "test")
        const rotated = yield* keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, 0)
        expect(rotated.previous.expires_at.getTime()).toBe(START)
        expect(yield* verifyTag(old.token)).toBe("ApiKeyExpired")
        expect(yield* verifyTag(rotated.token)).toBe(`ok:${rotated.api_key.id}`)
      }))

    it.effect("grace 30 days, and a revocation inside the grace period wins at once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const old = yield* newKey(owner)
        const rotated = yield* keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, 30)
        expect(rotated.previous.expires_at.getTime()).toBe(START + 30 * DAY)
        yield* TestClock.adjust(Duration.days(29))
        expect(yield* verifyTag(old.token)).toBe(`ok:${old.api_key.id}`)
        yield* keys.revoke(owner.tenantId, keyIdOf(old))
        expect(yield* verifyTag(old.token)).toBe("ApiKeyRevoked")
        yield* TestClock.adjust(Duration.days(2))
        // Revoked stays revoked (not "expired") after the grace period too.
        expect(yield* verifyTag(old.token)).toBe("ApiKeyRevoked")
      }))

    it.effect("without grace_days the default is 7 days (the configured default)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const old = yield* newKey(owner)
        const rotated = yield* keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, undefined)
        expect(rotated.previous.expires_at.getTime()).toBe(START + 7 * DAY)
      }))

    it.effect("the default grace comes from keyRotationGraceDays in the configuration", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const owner = yield* tenantFixture
        // A KeyService of its own on the same database, configured with a 3-day default.
        const threeDays = KeyService.layer.pipe(
          Layer.provide(AppConfigTest({ keyRotationGraceDays: 3, lastUsedFlushInterval: Duration.days(3650) }))
        )
        yield* Effect.gen(function*() {
          const keys = yield* KeyService
          const old = yield* newKey(owner)
          const rotated = yield* keys.rotate(owner.tenantId, keyIdOf(old), owner.userId, undefined)
          expect(rotated.previous.expires_at.getTime()).toBe(START + 3 * DAY)
          // An explicit grace_days still wins over the configured default.
          const other = yield* newKey(owner)
          const explicit = yield* keys.rotate(owner.tenantId, keyIdOf(other), owner.userId, 10)
          expect(explicit.previous.expires_at.getTime()).toBe(START + 10 * DAY)
          yield* TestClock.setTime(START + 3 * DAY - 1)
          expect(yield* verifyTag(old.token)).toBe(`ok:${old.api_key.id}`)
          yield* TestClock.setTime(START + 3 * DAY)
          expect(yield* verifyTag(old.token)).toBe("ApiKeyExpired")
          // `local`: a service of its own, as v3's `provide` built (v4 reuses the suite's KeyService otherwise).
        }).pipe(Effect.provide(threeDays, { local: true }))
      }))

    it.effect("verify rejects unknown and malformed tokens with InvalidApiKey", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const owner = yield* tenantFixture
        const key = yield* newKey(owner)
        expect(yield* verifyTag(`etd_live_${"a".repeat(32)}`)).toBe("InvalidApiKey")
        expect(yield* verifyTag(key.token.replace("etd_live_", "etd_test_"))).toBe("InvalidApiKey")
        expect(yield* verifyTag(key.token.toUpperCase())).toBe("InvalidApiKey")
        expect(yield* verifyTag(`${key.token} `)).toBe("InvalidApiKey")
        expect(yield* verifyTag("")).toBe("InvalidApiKey")
        expect(yield* verifyTag(`etd_sess_${key.token.slice(9)}`)).toBe("InvalidApiKey")
      }))

    it.effect("last_used_at is written in batches: nothing per verify, one UPDATE per key per flush", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const a = yield* newKey(owner)
        const b = yield* newKey(owner, "test")
        const unused = yield* newKey(owner)
        // Start from a clean slate: earlier tests' verifications may still be pending.
        yield* keys.flushLastUsed
        const touchStatements = yield* installTouchCounter

        for (let i = 0; i < 25; i++) {
          yield* keys.verify(a.token)
          yield* TestClock.adjust(Duration.millis(10))
        }
        const lastUseOfA = START + 24 * 10
        yield* keys.verify(b.token)
        const lastUseOfB = START + 250

        // No write per request.
        expect(yield* lastUsedAt(a.api_key.id)).toBe(null)
        expect(yield* lastUsedAt(b.api_key.id)).toBe(null)
        expect(yield* touchStatements).toBe(0)

        yield* keys.flushLastUsed
        expect((yield* lastUsedAt(a.api_key.id))?.getTime()).toBe(lastUseOfA)
        expect((yield* lastUsedAt(b.api_key.id))?.getTime()).toBe(lastUseOfB)
        expect(yield* lastUsedAt(unused.api_key.id)).toBe(null)
        // 26 verifications of two keys: two statements.
        expect(yield* touchStatements).toBe(2)

        // A flush with nothing new writes nothing.
        yield* keys.flushLastUsed
        expect(yield* touchStatements).toBe(2)

        // The next round only touches the key used since.
        yield* TestClock.adjust(Duration.seconds(5))
        yield* keys.verify(b.token)
        yield* keys.verify(b.token)
        yield* keys.flushLastUsed
        expect(yield* touchStatements).toBe(3)
        expect((yield* lastUsedAt(b.api_key.id))?.getTime()).toBe(lastUseOfB + 5_000)
        expect((yield* lastUsedAt(a.api_key.id))?.getTime()).toBe(lastUseOfA)

        // The API shows it.
        const listed = yield* keys.list(owner.tenantId, { limit: 10 })
        expect(listed.data.find((key) => key.id === a.api_key.id)?.last_used_at?.getTime()).toBe(lastUseOfA)
      }))

    it.effect("a failed verification does not count as a use", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const keys = yield* KeyService
        const owner = yield* tenantFixture
        const key = yield* newKey(owner)
        yield* keys.revoke(owner.tenantId, keyIdOf(key))
        expect(yield* verifyTag(key.token)).toBe("ApiKeyRevoked")
        yield* keys.flushLastUsed
        expect(yield* lastUsedAt(key.api_key.id)).toBe(null)
      }))

    it.effect("the background loop flushes after lastUsedFlushInterval, and shutdown flushes what is left", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const owner = yield* tenantFixture
        const thirtySeconds = KeyService.layer.pipe(
          Layer.provide(AppConfigTest({ lastUsedFlushInterval: Duration.seconds(30) }))
        )
        const scope = yield* Scope.make()
        // A memo map of its own: a service of its own (v4 reuses the suite's KeyService otherwise).
        const context = yield* Layer.buildWithMemoMap(thirtySeconds, yield* Layer.makeMemoMap, scope)
        const inner = <A, E>(effect: Effect.Effect<A, E, KeyService>) => Effect.provide(effect, context)

        const key = yield* inner(newKey(owner))
        yield* inner(Effect.flatMap(KeyService, (keys) => keys.verify(key.token)))
        yield* TestClock.adjust(Duration.seconds(29))
        yield* realPause(50)
        expect(yield* lastUsedAt(key.api_key.id)).toBe(null)

        yield* TestClock.adjust(Duration.seconds(1))
        // The loop's write runs on its own fiber; wait (in real time) for it to land.
        let seen: Date | null = null
        for (let i = 0; i < 250 && seen === null; i++) {
          yield* realPause(20)
          seen = yield* lastUsedAt(key.api_key.id)
        }
        expect(seen?.getTime()).toBe(START)

        // Used again, then the service stops before the next tick: the finalizer writes it.
        yield* TestClock.adjust(Duration.seconds(3))
        yield* inner(Effect.flatMap(KeyService, (keys) => keys.verify(key.token)))
        yield* Scope.close(scope, Exit.void)
        expect((yield* lastUsedAt(key.api_key.id))?.getTime()).toBe(START + 33_000)
      }))

    it.effect("a session is valid until 1 ms before expires_at, then invalid_session", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const auth = yield* AuthService
        const owner = yield* tenantFixture
        const login = yield* auth.login(owner.email, Redacted.make(PASSWORD))
        expect(login.token).toMatch(/^etd_sess_[a-z2-7]{32}$/)
        expect(login.expires_at.getTime()).toBe(START + 12 * 60 * 60 * 1000)

        expect((yield* auth.verifySession(login.token)).userId).toBe(owner.userId)
        yield* TestClock.setTime(login.expires_at.getTime() - 1)
        expect((yield* auth.verifySession(login.token)).userId).toBe(owner.userId)
        yield* TestClock.setTime(login.expires_at.getTime())
        const expired = yield* Effect.flip(auth.verifySession(login.token))
        expect(expired._tag).toBe("InvalidSession")
        expect(expired.code).toBe("invalid_session")

        // A new login starts a new 12 hours; the old session stays dead.
        const again = yield* auth.login(owner.email, Redacted.make(PASSWORD))
        expect((yield* auth.verifySession(again.token)).userId).toBe(owner.userId)
        expect((yield* Effect.flip(auth.verifySession(login.token)))._tag).toBe("InvalidSession")
      }))

    it.effect("the session lifetime comes from sessionTtl in the configuration", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const owner = yield* tenantFixture
        const shortSessions = AuthService.layer.pipe(Layer.provide(AppConfigTest({ sessionTtl: Duration.seconds(1) })))
        yield* Effect.gen(function*() {
          const auth = yield* AuthService
          const login = yield* auth.login(owner.email, Redacted.make(PASSWORD))
          expect(login.expires_at.getTime()).toBe(START + 1_000)
          yield* TestClock.adjust(Duration.millis(999))
          expect((yield* auth.verifySession(login.token)).userId).toBe(owner.userId)
          yield* TestClock.adjust(Duration.millis(1))
          expect((yield* Effect.flip(auth.verifySession(login.token)))._tag).toBe("InvalidSession")
        }).pipe(Effect.provide(shortSessions, { local: true }))
      }))

    it.effect("logout ends a session before its expiry; unknown tokens are invalid", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const auth = yield* AuthService
        const owner = yield* tenantFixture
        const login = yield* auth.login(owner.email, Redacted.make(PASSWORD))
        const principal = yield* auth.verifySession(login.token)
        yield* auth.logout(principal.sessionId)
        expect((yield* Effect.flip(auth.verifySession(login.token)))._tag).toBe("InvalidSession")
        expect((yield* Effect.flip(auth.verifySession(`etd_sess_${"a".repeat(32)}`)))._tag).toBe("InvalidSession")
      }))
  })
}
