/**
 * KeyService alone, over a mocked KeyRepo (Layer.mock). Rotation.test.ts checks the same clock
 * boundaries against both databases; the HTTP suites cover the contract.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { AppConfigTest } from "../../src/Config.js"
import { Transaction } from "../../src/db/Repository.js"
import { asId } from "../../src/domain/Ids.js"
import { generateToken, hashToken } from "../../src/domain/Tokens.js"
import { type ApiKeyRecord, KeyRepo, type KeyWithTenant } from "../../src/keys/KeyRepo.js"
import { KeyService } from "../../src/keys/KeyService.js"

type Mock<S extends { readonly Service: object }> = Layer.PartialEffectful<S["Service"]>

const serviceWith = (repo: Mock<typeof KeyRepo>) =>
  KeyService.layerNoDeps.pipe(
    Layer.provide([
      Layer.mock(KeyRepo)(repo),
      Transaction.layerTest,
      // The background flush never runs by itself here; tests flush when they mean to.
      AppConfigTest({ lastUsedFlushInterval: Duration.days(3650) })
    ])
  )

const NOW = Date.parse("2026-11-01T12:00:00Z")
const token = generateToken("live")

const key = (fields: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: asId("apiKey", "key_1"),
  tenantId: asId("tenant", "ten_1"),
  name: "ci",
  environment: "live",
  scopes: ["documents:read"],
  hint: "etd_live_…abcd",
  createdAt: new Date(NOW - 1000),
  lastUsedAt: null,
  expiresAt: null,
  revokedAt: null,
  replacedBy: null,
  ...fields
})

/** The authentication's row of a stored key (its tenant's columns left out: KeyService never reads them). */
const withTenant = (stored: ApiKeyRecord): KeyWithTenant => ({
  keyId: stored.id,
  keyEnvironment: stored.environment,
  keyScopes: stored.scopes,
  keyExpiresAt: stored.expiresAt,
  keyRevokedAt: stored.revokedAt,
  id: stored.tenantId
})

/** A repository holding one key under `token`'s hash. */
const holding = (stored: ApiKeyRecord, touched: Array<ReadonlyArray<readonly [string, Date]>> = []) =>
  serviceWith({
    findWithTenant: (tokenHash) =>
      Effect.succeed(tokenHash === hashToken(token) ? Option.some(withTenant(stored)) : Option.none()),
    touch: (usage) => Effect.sync(() => void touched.push(usage))
  })

const outcome = (
  verify: Effect.Effect<{ readonly principal: { readonly keyId: string } }, { readonly _tag: string }>
) => Effect.match(verify, { onFailure: (error) => error._tag, onSuccess: ({ principal }) => principal.keyId })

describe("KeyService (repository mocked)", () => {
  it.effect("a malformed token is invalid_api_key without a lookup", () =>
    Effect.gen(function*() {
      const keys = yield* KeyService
      // No `findWithTenant` in this mock: a lookup would die.
      expect(yield* outcome(keys.verify("etd_live_short"))).toBe("InvalidApiKey")
      expect(yield* outcome(keys.verify(`etd_sess_${token.slice(-32)}`))).toBe("InvalidApiKey")
    }).pipe(Effect.provide(serviceWith({}))))

  it.effect("a revoked key is refused at once; a rotated one works until its expires_at, then is expired", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(NOW)
      const revoked = yield* KeyService.pipe(
        Effect.flatMap((keys) => outcome(keys.verify(token))),
        Effect.provide(holding(key({ revokedAt: new Date(NOW - 1), expiresAt: new Date(NOW + 60_000) })))
      )
      expect(revoked).toBe("ApiKeyRevoked")

      const rotated = holding(key({ expiresAt: new Date(NOW + 60_000), replacedBy: asId("apiKey", "key_2") }))
      const verifyAt = (millis: number) =>
        Effect.andThen(TestClock.setTime(millis), Effect.flatMap(KeyService, (keys) => outcome(keys.verify(token))))
      yield* Effect.gen(function*() {
        expect(yield* verifyAt(NOW + 59_999)).toBe("key_1")
        expect(yield* verifyAt(NOW + 60_000)).toBe("ApiKeyExpired")
      }).pipe(Effect.provide(rotated))
    }))

  it.effect("uses are written in one batch per flush, with each key's latest use", () => {
    const touched: Array<ReadonlyArray<readonly [string, Date]>> = []
    return Effect.gen(function*() {
      const keys = yield* KeyService
      yield* TestClock.setTime(NOW)
      yield* keys.verify(token)
      yield* TestClock.setTime(NOW + 5_000)
      yield* keys.verify(token)
      expect(touched).toEqual([])
      yield* keys.flushLastUsed
      yield* keys.flushLastUsed
      expect(touched).toEqual([[["key_1", new Date(NOW + 5_000)]]])
    }).pipe(Effect.provide(holding(key(), touched)))
  })
})
