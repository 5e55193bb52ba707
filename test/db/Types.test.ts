/**
 * What the two databases hand back must be the same JavaScript types, or code that works on one
 * breaks on the other. sql-pg 4 decodes int8 (and `count(*)`) as `bigint`, which `JSON.stringify`
 * refuses; PGlite decodes it as `number`. Both are configured to give numbers, and to refuse a
 * value that a number cannot hold exactly rather than round it.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { databaseLayer, testDatabases } from "../support/Databases.js"

for (const database of testDatabases) {
  layer(databaseLayer(database), { timeout: 60_000 })(`column types (${database})`, (it) => {
    it.effect("count(*) and int8 columns arrive as numbers that JSON can carry", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: unknown; big: unknown }>`
          SELECT count(*) AS n, 9007199254740991::int8 AS big FROM generate_series(1, 3)`
        expect(rows[0]).toEqual({ n: 3, big: Number.MAX_SAFE_INTEGER })
        expect(typeof rows[0]!.n).toBe("number")
        expect(JSON.stringify(rows[0])).toBe(`{"n":3,"big":${Number.MAX_SAFE_INTEGER}}`)
      }))

    it.effect("an int8 parameter binds from a number", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ doubled: unknown }>`SELECT (${21}::int8 * 2) AS doubled`
        expect(rows[0]!.doubled).toBe(42)
      }))

    it.effect("timestamps arrive as Date", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ at: unknown }>`SELECT '2026-11-01T12:00:00Z'::timestamptz AS at`
        expect(rows[0]!.at).toBeInstanceOf(Date)
        expect((rows[0]!.at as Date).toISOString()).toBe("2026-11-01T12:00:00.000Z")
      }))
  })
}

if (testDatabases.includes("postgres")) {
  layer(databaseLayer("postgres"), { timeout: 60_000 })("int8 beyond 2^53 (postgres)", (it) => {
    it.effect("fails instead of silently rounding", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const failed = yield* Effect.exit(sql`SELECT 9007199254740993::int8 AS big`)
        expect(failed._tag).toBe("Failure")
      }))
  })

  const preparedIn = (prepare: boolean) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // One connection for both statements, so the second sees what the first left prepared.
      return yield* sql.withTransaction(
        Effect.gen(function*() {
          yield* sql`SELECT ${1}::int AS one`
          const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM pg_prepared_statements`
          return rows[0]!.n
        })
      )
    }).pipe(Effect.provide(databaseLayer("postgres", { prepare })))

  layer(databaseLayer("postgres"), { timeout: 60_000 })("prepared statements (postgres)", (it) => {
    it.effect("are named and cached by default, and can be turned off for transaction-mode poolers", () =>
      Effect.gen(function*() {
        expect(yield* preparedIn(true)).toBeGreaterThan(0)
        expect(yield* preparedIn(false)).toBe(0)
      }))
  })
}
