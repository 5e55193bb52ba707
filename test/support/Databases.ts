/**
 * The databases a suite runs on: the embedded one always, and a fresh schema of a real
 * PostgreSQL when TEST_DATABASE_URL is set.
 */
import { Clock, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { embeddedLayer, postgresLayer, type PostgresOptions } from "../../src/db/Database.js"

export type TestDatabase = "embedded" | "postgres"

export const testDatabases: ReadonlyArray<TestDatabase> = process.env["TEST_DATABASE_URL"]
  ? ["embedded", "postgres"]
  : ["embedded"]

/** A PostgreSQL schema of its own, dropped afterwards, so parallel test files never meet. */
const isolatedPostgres = (options: PostgresOptions, proxyPort?: number) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const url = process.env["TEST_DATABASE_URL"]!
      const schema = `test_${randomBytes(6).toString("hex")}`
      const admin = async (statement: string) => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          await client.query(statement)
        } finally {
          await client.end()
        }
      }
      yield* Effect.acquireRelease(
        Effect.promise(() => admin(`CREATE SCHEMA ${schema}`)),
        () => Effect.promise(() => admin(`DROP SCHEMA ${schema} CASCADE`))
      )
      // The app may reach the server through a proxy (outage tests); the schema is managed directly.
      const appUrl = proxyPort === undefined
        ? url
        : Object.assign(new URL(url), { hostname: "127.0.0.1", port: String(proxyPort) }).href
      const separator = appUrl.includes("?") ? "&" : "?"
      // sql-pg's pool times its connections with the Clock; on a suite's TestClock a jump of years
      // would expire every connection mid-test, so the pool keeps the real clock.
      return postgresLayer(`${appUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`, options)
        .pipe(
          Layer.provide(Layer.succeed(Clock.Clock, Clock.Clock.defaultValue()))
        )
    })
  )

export const databaseLayer = (database: TestDatabase, options: PostgresOptions = {}) =>
  database === "postgres" ? isolatedPostgres(options) : embeddedLayer(undefined)

/** A fresh schema of TEST_DATABASE_URL's server, reached through a proxy on `proxyPort`. */
export const postgresThroughProxy = (proxyPort: number, options: PostgresOptions = {}) =>
  isolatedPostgres(options, proxyPort)
