/**
 * The embedded database is one PGlite connection. These tests prove that concurrent fibers never
 * interleave their statements inside each other's transactions, first at the SqlClient level and
 * then through the HTTP API under concurrent load.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Redacted, Result } from "effect"
import { SqlClient } from "effect/sql"
import { embeddedLayer } from "../../src/db/Database.js"
import { cnpj, PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { client, makeTestApp, testDatabases } from "../support/TestApp.js"

class Boom {
  readonly _tag = "Boom"
}

layer(embeddedLayer(undefined), { timeout: 60_000, excludeTestServices: true })(
  "embedded SqlClient transactions",
  (it) => {
    it.effect("100 concurrent read-modify-write transactions lose no update", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE counter (id int PRIMARY KEY, value int NOT NULL)`
        yield* sql`INSERT INTO counter (id, value) VALUES (1, 0)`
        const increment = Effect.gen(function*() {
          const [row] = yield* sql<{ value: number }>`SELECT value FROM counter WHERE id = 1`
          // Give every other fiber the chance to run between the read and the write.
          yield* Effect.yieldNow
          yield* Effect.sleep("1 millis")
          yield* sql`UPDATE counter SET value = ${row!.value + 1} WHERE id = 1`
        }).pipe(sql.withTransaction)
        yield* Effect.all(Array.from({ length: 100 }, () => increment), { concurrency: "unbounded", discard: true })
        const [final] = yield* sql<{ value: number }>`SELECT value FROM counter WHERE id = 1`
        expect(final!.value).toBe(100)
      }))

    it.effect("a failing transaction rolls back only its own writes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE items (n int PRIMARY KEY)`
        const write = (n: number) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO items (n) VALUES (${n})`
            yield* Effect.sleep("2 millis")
            yield* sql`INSERT INTO items (n) VALUES (${n + 1000})`
            if (n % 2 === 1) return yield* Effect.fail(new Boom())
          }).pipe(sql.withTransaction, Effect.result)
        const results = yield* Effect.all(Array.from({ length: 30 }, (_, n) => write(n)), { concurrency: "unbounded" })
        expect(results.filter(Result.isFailure)).toHaveLength(15)
        const rows = yield* sql<{ n: number }>`SELECT n FROM items ORDER BY n`
        const even = Array.from({ length: 15 }, (_, i) => i * 2)
        expect(rows.map((row) => row.n)).toEqual([...even, ...even.map((n) => n + 1000)])
      }))

    it.effect("a statement outside any transaction never joins another fiber's open transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE marks (name text PRIMARY KEY)`
        const opened = yield* Deferred.make<void>()
        // Fiber A: BEGIN, insert X, wait while B acts, then fail: its transaction rolls back.
        const a = yield* Effect.forkChild(
          Effect.gen(function*() {
            yield* sql`INSERT INTO marks (name) VALUES ('x')`
            yield* Deferred.succeed(opened, undefined)
            yield* Effect.sleep("100 millis")
            return yield* Effect.fail(new Boom())
          }).pipe(sql.withTransaction)
        )
        yield* Deferred.await(opened)
        // Fiber B, during A's transaction: a plain insert and a plain read.
        const b = yield* Effect.forkChild(
          Effect.gen(function*() {
            yield* sql`INSERT INTO marks (name) VALUES ('y')`
            return yield* sql<{ name: string }>`SELECT name FROM marks ORDER BY name`
          })
        )
        const aResult = yield* Effect.result(Fiber.join(a))
        expect(Result.isFailure(aResult)).toBe(true)
        // B never saw A's uncommitted row, and its own row survived A's rollback.
        expect((yield* Fiber.join(b)).map((row) => row.name)).toEqual(["y"])
        const rows = yield* sql<{ name: string }>`SELECT name FROM marks ORDER BY name`
        expect(rows.map((row) => row.name)).toEqual(["y"])
      }))

    it.effect("nested transactions (savepoints) of concurrent fibers stay in their own transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE nested (n int PRIMARY KEY)`
        const job = (n: number) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO nested (n) VALUES (${n})`
            // The inner part fails and rolls back to its savepoint; the outer part commits.
            yield* Effect.result(
              Effect.gen(function*() {
                yield* sql`INSERT INTO nested (n) VALUES (${n + 100})`
                yield* Effect.sleep("1 millis")
                return yield* Effect.fail(new Boom())
              }).pipe(sql.withTransaction)
            )
            yield* Effect.sleep("1 millis")
          }).pipe(sql.withTransaction)
        yield* Effect.all(Array.from({ length: 20 }, (_, n) => job(n)), { concurrency: "unbounded", discard: true })
        const rows = yield* sql<{ n: number }>`SELECT n FROM nested ORDER BY n`
        expect(rows.map((row) => row.n)).toEqual(Array.from({ length: 20 }, (_, n) => n))
      }))
  }
)

for (const database of testDatabases) {
  // The per-address budget of registration would otherwise stop 40 registrations from one client.
  layer(makeTestApp(database, { loginRateLimit: { perMinute: 1000 } }), {
    timeout: 120_000,
    excludeTestServices: true
  })(
    `concurrent writes through the API (${database})`,
    (it) => {
      it.effect("40 registrations with tenants and 40 key creations at once keep every invariant", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owner = yield* registerOwner("keyowner")
          const count = (table: string) =>
            Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`, (rows) => rows[0]!.n)
          const before = {
            users: yield* count("users"),
            tenants: yield* count("tenants"),
            memberships: yield* count("memberships"),
            apiKeys: yield* count("api_keys")
          }

          const anonymous = yield* client()
          const dashboard = yield* client(owner.session)
          const registrations = Array.from({ length: 40 }, (_, i) =>
            anonymous.auth.register({
              payload: {
                email: uniqueEmail(`concurrent${i}`),
                password: Redacted.make(PASSWORD),
                tenant: { name: `Concurrent ${i} Ltda`, tax_id: cnpj() }
              }
            }).pipe(Effect.map((r) => ({ userId: r.user.id, tenantId: r.tenant?.id }))))
          const keys = Array.from({ length: 40 }, (_, i) =>
            dashboard.apiKeys.create({
              params: { tenantId: owner.tenantId },
              payload: { name: `key ${i}`, environment: i % 2 === 0 ? "test" : "live", scopes: ["documents:read"] }
            }).pipe(Effect.map((k) => ({ keyId: k.api_key.id, token: k.token }))))
          const all = <A, E>(requests: ReadonlyArray<Effect.Effect<A, E>>) =>
            Effect.all(requests.map((request) => Effect.result(request)), { concurrency: "unbounded" })
          // Both batches at once, every request in flight together.
          const [registered, issued] = yield* Effect.all([all(registrations), all(keys)], { concurrency: "unbounded" })

          // Nothing failed, least of all with a 500.
          const failures = [
            ...registered.filter(Result.isFailure).map((outcome) => outcome.failure._tag),
            ...issued.filter(Result.isFailure).map((outcome) => outcome.failure._tag)
          ]
          expect(failures).toEqual([])
          const users = registered.filter(Result.isSuccess).map((outcome) => outcome.success)
          const created = issued.filter(Result.isSuccess).map((outcome) => outcome.success)
          expect(users).toHaveLength(40)
          expect(created).toHaveLength(40)

          // Row counts match the successful requests exactly.
          expect(yield* count("users")).toBe(before.users + 40)
          expect(yield* count("tenants")).toBe(before.tenants + 40)
          expect(yield* count("memberships")).toBe(before.memberships + 40)
          expect(yield* count("api_keys")).toBe(before.apiKeys + 40)

          // All ids and tokens are distinct.
          const ids = [...users.flatMap((u) => [u.userId, u.tenantId]), ...created.map((k) => k.keyId)]
          expect(new Set(ids).size).toBe(120)
          expect(new Set(created.map((k) => k.token)).size).toBe(40)

          // Every registered user is the owner of exactly one tenant, the one it was answered.
          const userIds = users.map((u) => u.userId)
          const memberships = yield* sql<{ userId: string; tenantId: string; role: string }>`
            SELECT user_id, tenant_id, role FROM memberships WHERE ${sql.in("user_id", userIds)}`
          expect(memberships).toHaveLength(40)
          const byUser = new Map(memberships.map((m) => [m.userId, m]))
          for (const user of users) {
            expect(byUser.get(user.userId)).toEqual({ userId: user.userId, tenantId: user.tenantId, role: "owner" })
          }
          // And every one of those tenants has exactly that one member.
          const perTenant = yield* sql<{ tenantId: string; n: number }>`
            SELECT tenant_id, count(*)::int AS n FROM memberships
            WHERE ${sql.in("tenant_id", users.map((u) => u.tenantId ?? ""))} GROUP BY tenant_id`
          expect(perTenant).toHaveLength(40)
          for (const row of perTenant) expect(row.n).toBe(1)

          // Every key belongs to the owner's tenant, with a distinct hash.
          const keyRows = yield* sql<{ tenantId: string; tokenHash: string }>`
            SELECT tenant_id, token_hash FROM api_keys WHERE ${sql.in("id", created.map((k) => k.keyId))}`
          expect(keyRows).toHaveLength(40)
          expect(new Set(keyRows.map((row) => row.tenantId))).toEqual(new Set([owner.tenantId]))
          expect(new Set(keyRows.map((row) => row.tokenHash)).size).toBe(40)

          // And each key works.
          const tenantOf = yield* Effect.all(
            created.map((k) =>
              Effect.flatMap(client(k.token), (api) => api.tenants.get({ params: { tenantId: owner.tenantId } }))
            ),
            { concurrency: 10 }
          )
          expect(tenantOf.every((tenant) => tenant.id === owner.tenantId)).toBe(true)
        }))
    }
  )
}
