/**
 * API keys: creation, listing, rotation with a grace period, revocation, and the per-request
 * verification. Tokens are shown once; only their SHA-256 is stored.
 */
import { Context, Effect, Layer, Option, Schedule } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { ApiKeyExpired, ApiKeyRevoked, InvalidApiKey, InvalidState, NotFound } from "../domain/Errors.js"
import { type ApiKeyId, makeId, type TenantId, type UserId } from "../domain/Ids.js"
import { cursorOf, type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import type { ApiKeyPrincipal, Environment, Scope } from "../domain/Principal.js"
import { now, quotaPeriod } from "../domain/Time.js"
import { apiKeyTokenPattern, generateToken, hashToken, tokenHint } from "../domain/Tokens.js"
import { untraced } from "../telemetry/TraceContext.js"
import type { AuthenticatedTenant } from "../tenants/TenantService.js"
import { ApiKey, CreatedApiKey, RotatedApiKey } from "./Api.js"
import { type ApiKeyRecord, type ExposureRecord, KeyRepo } from "./KeyRepo.js"

const DAY = 24 * 60 * 60 * 1000

const keyStatus = (revokedAt: Date | null, expiresAt: Date | null, at: Date) =>
  revokedAt !== null ? "revoked" : expiresAt === null ? "active" : expiresAt <= at ? "expired" : "expiring"

/** A key's exposure alerts as the API shows them: null when none was raised. */
const toExposure = (exposure: ExposureRecord) =>
  exposure.exposureCount === 0 || exposure.exposureLastAt === null || exposure.exposureLastSource === null
    ? null
    : {
      count: exposure.exposureCount,
      last_detected_at: exposure.exposureLastAt,
      last_source: exposure.exposureLastSource
    }

const noExposure: ExposureRecord = { exposureCount: 0, exposureLastAt: null, exposureLastSource: null }

/** The one mapping from a stored key to the API's; its status depends on the time it is shown. */
const toApiKey = (row: ApiKeyRecord, at: Date, exposure: ExposureRecord = noExposure) =>
  new ApiKey({
    id: row.id,
    name: row.name,
    environment: row.environment,
    scopes: row.scopes,
    hint: row.hint,
    status: keyStatus(row.revokedAt, row.expiresAt, at),
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
    expires_at: row.expiresAt,
    revoked_at: row.revokedAt,
    replaced_by: row.replacedBy,
    exposure: toExposure(exposure)
  })

export class KeyService extends Context.Service<KeyService>()("etd/KeyService", {
  make: Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* KeyRepo
    const inTransaction = yield* makeTransaction

    const issue = (input: {
      tenantId: TenantId
      name: string
      environment: Environment
      scopes: ReadonlyArray<Scope>
      createdBy: UserId | null
    }) =>
      Effect.gen(function*() {
        const token = generateToken(input.environment)
        const row = {
          id: yield* makeId("apiKey"),
          tenantId: input.tenantId,
          name: input.name,
          environment: input.environment,
          scopes: [...new Set(input.scopes)],
          tokenHash: hashToken(token),
          hint: tokenHint(token),
          createdBy: input.createdBy,
          createdAt: yield* now
        }
        yield* repo.insert(row)
        const apiKey = toApiKey(
          { ...row, lastUsedAt: null, expiresAt: null, revokedAt: null, replacedBy: null },
          row.createdAt
        )
        return { id: row.id, apiKey, token }
      })

    const create = Effect.fn("KeyService.create")(function*(input: {
      tenantId: TenantId
      name: string
      environment: Environment
      scopes: ReadonlyArray<Scope>
      createdBy: UserId
    }) {
      const { apiKey, token } = yield* issue(input)
      return new CreatedApiKey({ api_key: apiKey, token })
    })

    const list = Effect.fn("KeyService.list")(function*(tenantId: TenantId, page: PageParams) {
      const cursor = cursorOf(page)
      const rows = yield* repo.list(tenantId, pageSize(page.limit), cursor)
      const at = yield* now
      const result = toPage(rows, pageSize(page.limit), cursor)
      return { ...result, data: result.data.map((row) => toApiKey(row, at, row)) }
    })

    const rotate = Effect.fn("KeyService.rotate")(function*(
      tenantId: TenantId,
      keyId: ApiKeyId,
      createdBy: UserId,
      graceDays: number | undefined
    ) {
      return yield* Effect.gen(function*() {
        const found = yield* repo.findForUpdate(tenantId, keyId)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such API key." })
        const old = found.value
        const at = yield* now
        const status = keyStatus(old.revokedAt, old.expiresAt, at)
        if (status !== "active") {
          return yield* new InvalidState({
            message: `Only an active key can be rotated; this one is ${status}${
              old.replacedBy ? ` and was replaced by ${old.replacedBy}` : ""
            }.`
          })
        }
        const { apiKey, id, token } = yield* issue({ ...old, createdBy })
        const expiresAt = new Date(at.getTime() + (graceDays ?? config.keyRotationGraceDays) * DAY)
        yield* repo.markRotated(old.id, expiresAt, id)
        return new RotatedApiKey({ api_key: apiKey, token, previous: { id: old.id, expires_at: expiresAt } })
      }).pipe(inTransaction)
    })

    const revoke = Effect.fn("KeyService.revoke")(function*(tenantId: TenantId, keyId: ApiKeyId) {
      return yield* Effect.gen(function*() {
        const found = yield* repo.findForUpdate(tenantId, keyId)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such API key." })
        const at = yield* now
        const exposure = yield* repo.exposureOf(keyId)
        if (found.value.revokedAt !== null) return toApiKey(found.value, at, exposure)
        yield* repo.revoke(keyId, at)
        return toApiKey({ ...found.value, revokedAt: at }, at, exposure)
      }).pipe(inTransaction)
    })

    // last_used_at is kept in memory and written in batches: a write per request would double
    // the database load of every authenticated call.
    const pendingUse = new Map<ApiKeyId, Date>()
    const flushLastUsed = Effect.suspend(() => {
      if (pendingUse.size === 0) return Effect.void
      const usage = [...pendingUse.entries()]
      pendingUse.clear()
      return repo.touch(usage)
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("Could not record API key usage", cause)))

    // Started at once, so the interval is counted from construction (a v4 fork otherwise waits for
    // the scheduler's next turn, and its first, empty, flush would come late).
    // Untraced: it runs whether or not there is usage to record (an idle instance makes no spans).
    yield* Effect.forkScoped(untraced(Effect.repeat(flushLastUsed, Schedule.spaced(config.lastUsedFlushInterval))), {
      startImmediately: true
    })
    yield* Effect.addFinalizer(() => flushLastUsed)

    /**
     * Every request: the key and its tenant in one indexed lookup (no cache), so a revocation is
     * seen at once by every instance. The tenant comes as read with the key, for a handler of that
     * tenant (`AuthenticatedTenant`), with `at`, the time its quota usage is for.
     */
    const verify = (token: string) => {
      if (!apiKeyTokenPattern.test(token)) return Effect.fail(new InvalidApiKey())
      return Effect.flatMap(
        now,
        (at) =>
          Effect.flatMap(repo.findWithTenant(hashToken(token), quotaPeriod(at)), (found): Effect.Effect<
            { readonly principal: ApiKeyPrincipal; readonly tenant: AuthenticatedTenant["Service"] },
            InvalidApiKey | ApiKeyRevoked | ApiKeyExpired
          > => {
            if (Option.isNone(found)) return Effect.fail(new InvalidApiKey())
            const row = found.value
            const status = keyStatus(row.keyRevokedAt, row.keyExpiresAt, at)
            if (status === "revoked") return Effect.fail(new ApiKeyRevoked())
            if (status === "expired") {
              return Effect.fail(
                new ApiKeyExpired({
                  message:
                    `This key was rotated and expired at ${row.keyExpiresAt?.toISOString()}. Use its replacement.`
                })
              )
            }
            pendingUse.set(row.keyId, at)
            const principal: ApiKeyPrincipal = {
              _tag: "ApiKey",
              keyId: row.keyId,
              tenantId: row.id,
              environment: row.keyEnvironment,
              scopes: row.keyScopes
            }
            return Effect.succeed({ principal, tenant: { at, row } })
          })
      )
    }

    /** Which key a leaked token belongs to, for the exposure alert (never returns the token). */
    const identify = Effect.fn("KeyService.identify")(function*(token: string) {
      const found = yield* repo.findWithTenant(hashToken(token), quotaPeriod(yield* now))
      return Option.map(found, (row) => ({ keyId: row.keyId, tenantId: row.id }))
    })

    return { create, list, rotate, revoke, verify, identify, flushLastUsed } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([KeyRepo.layer, Transaction.layer]))
}
