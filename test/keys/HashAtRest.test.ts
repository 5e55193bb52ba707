/**
 * Secrets at rest and in logs (SPEC §3, §13): after keys are created, rotated and used, sessions
 * opened and a token leaked into a URL and a log line, no token, session token or password is
 * found in any column of any table, nor in anything the process wrote to stdout.
 */
import { afterEach, expect, layer, vi } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { expectError } from "../support/accounts.js"
import { createKey, PASSWORD, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** Every row of every table of the current schema, as JSON text. */
const dumpDatabase = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = yield* sql<{ tableName: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
    ORDER BY table_name`
  const dump: Record<string, ReadonlyArray<unknown>> = {}
  for (const { tableName } of tables) {
    dump[tableName] = yield* sql`SELECT * FROM ${sql(tableName)}`
  }
  return dump
})

/** Everything written to process.stdout while `effect` runs (the spy passes every write through). */
const captureStdout = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => vi.spyOn(process.stdout, "write")),
    (spy) =>
      Effect.map(
        // The logger writes its lines once per turn of the event loop: let the last turn's out.
        Effect.tap(effect, () => Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))),
        (result) => ({
          result,
          output: spy.mock.calls.map((
            [chunk]
          ) => (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")))
        })
      ),
    (spy) => Effect.sync(() => spy.mockRestore())
  )

/** Polls in real time until `check` yields a value (the exposure worker runs on its own fiber). */
const eventually = <A, E, R>(check: Effect.Effect<A | undefined, E, R>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      const value = yield* check
      if (value !== undefined) return value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* Effect.die(new Error("condition never held"))
  })

afterEach(() => {
  vi.restoreAllMocks()
})

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `secrets at rest and in logs (${database})`,
    (it) => {
      it.effect("no token, session token or password is stored or logged; only SHA-256 hashes", () =>
        Effect.gen(function*() {
          const { output, result: secrets } = yield* captureStdout(Effect.gen(function*() {
            const owner = yield* registerOwner("hash")
            const live = yield* createKey(owner, "live", ["documents:read", "webhooks:read"])
            const test = yield* createKey(owner, "test", ["documents:read"])
            const leaked = yield* createKey(owner, "test", ["webhooks:read"])
            const api = yield* client(owner.session)
            const rotated = yield* api.apiKeys.rotate({
              params: { tenantId: owner.tenantId, keyId: live.api_key.id },
              payload: { grace_days: 3 }
            })
            const secondLogin = yield* client().pipe(
              Effect.flatMap((anonymous) =>
                anonymous.auth.login({ payload: { email: owner.email, password: Redacted.make(PASSWORD) } })
              )
            )

            // Use every key, including both halves of the rotation, and fail some logins.
            for (const token of [live.token, rotated.token, test.token]) {
              const response = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token })
              expect(response.status, response.text).toBe(200)
            }
            const wrong = yield* rawRequest("POST", "/v1/auth/login", {
              body: { email: owner.email, password: `${PASSWORD}!` }
            })
            expectError(wrong, 401, "invalid_credentials")

            // A token in the URL is refused and reported; the alert names the key, never the token.
            const inUrl = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}?api_key=${leaked.token}`)
            expectError(inUrl, 400, "api_key_in_url")
            const sql = yield* SqlClient.SqlClient
            yield* eventually(Effect.map(
              sql<{ apiKeyId: string }>`SELECT api_key_id FROM security_alerts WHERE api_key_id = ${leaked.api_key.id}`,
              (rows) => rows[0]
            ))
            // Our own code logging a token: the guard redacts it before it reaches stdout.
            yield* Effect.logWarning(`accidentally logging ${test.token} and ${secondLogin.token}`)

            return {
              owner,
              keyTokens: [live.token, test.token, leaked.token, rotated.token],
              keyIds: [live.api_key.id, test.api_key.id, leaked.api_key.id, rotated.api_key.id],
              sessionTokens: [owner.session, secondLogin.token]
            }
          }))

          const tokens = [...secrets.keyTokens, ...secrets.sessionTokens]
          // Every token differs, and the random part alone must not appear either.
          expect(new Set(tokens).size).toBe(tokens.length)
          const needles = [...tokens, ...tokens.map((token) => token.slice(token.lastIndexOf("_") + 1)), PASSWORD]

          const dump = yield* dumpDatabase
          expect(Object.keys(dump)).toEqual(
            expect.arrayContaining(["api_keys", "memberships", "security_alerts", "sessions", "tenants", "users"])
          )
          const stored = JSON.stringify(dump)
          for (const needle of needles) {
            expect(stored.includes(needle), `database contains ${needle.slice(0, 12)}…`).toBe(false)
          }
          // The dump is not vacuous: it does hold the keys' ids and hashes.
          for (const id of secrets.keyIds) expect(stored).toContain(id)

          const sql = yield* SqlClient.SqlClient
          for (const [index, token] of secrets.keyTokens.entries()) {
            const rows = yield* sql<{ tokenHash: string; hint: string }>`
            SELECT token_hash, hint FROM api_keys WHERE id = ${secrets.keyIds[index]!}`
            expect(rows).toEqual([{ tokenHash: sha256(token), hint: `${token.slice(0, 9)}…${token.slice(-4)}` }])
          }
          for (const token of secrets.sessionTokens) {
            const rows = yield* sql<{ userId: string }>`SELECT user_id FROM sessions WHERE token_hash = ${
              sha256(token)
            }`
            expect(rows).toEqual([{ userId: secrets.owner.userId }])
          }
          const users = yield* sql<
            { passwordHash: string }
          >`SELECT password_hash FROM users WHERE id = ${secrets.owner.userId}`
          expect(users[0]?.passwordHash).toMatch(/^scrypt\$/)

          const written = output.join("")
          for (const needle of needles) {
            expect(written.includes(needle), `stdout contains ${needle.slice(0, 12)}…`).toBe(false)
          }
          // The capture saw the service's logs: the redacted line and the alert naming the leaked key.
          expect(written).toContain("accidentally logging [REDACTED] and [REDACTED]")
          expect(written).toContain("api_key.exposed")
          expect(written).toContain(secrets.keyIds[2])
        }))

      it.effect("the login response carries the session token once; the database only its hash", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("session")
          const sql = yield* SqlClient.SqlClient
          const rows = yield* sql<{ tokenHash: string; expiresAt: Date; revokedAt: Date | null }>`
          SELECT token_hash, expires_at, revoked_at FROM sessions WHERE token_hash = ${sha256(owner.session)}`
          expect(rows).toHaveLength(1)
          expect(rows[0]!.revokedAt).toBe(null)
          const api = yield* client(owner.session)
          yield* api.auth.logout()
          const after = yield* sql<{ revokedAt: Date | null }>`
          SELECT revoked_at FROM sessions WHERE token_hash = ${sha256(owner.session)}`
          expect(after[0]?.revokedAt).toBeInstanceOf(Date)
        }))
    }
  )
}
