/**
 * The databases a suite runs on: the embedded one always, and a fresh schema of a real
 * PostgreSQL when TEST_DATABASE_URL is set.
 */
import { PGlite } from "@electric-sql/pglite"
import { Clock, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { readFile, rename, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
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

const pgliteVersion = (JSON.parse(
  readFileSync(new URL("../../node_modules/@electric-sql/pglite/package.json", import.meta.url), "utf8")
) as { version: string }).version

/**
 * An empty PGlite cluster, made by initdb once per machine and PGlite version and kept in the
 * temporary directory: every embedded test database starts from it instead of running initdb
 * again (about 0.4 s against 1.6 s, and a run starts dozens). Written under a temporary name and
 * renamed, so two test processes making it at once never read half a file.
 */
const clusterTemplate = async (): Promise<Blob> => {
  const file = join(tmpdir(), `etd-test-pglite-${pgliteVersion}.tar.gz`)
  try {
    return new Blob([await readFile(file)])
  } catch {
    const fresh = await PGlite.create("memory://")
    const dump = await fresh.dumpDataDir("gzip")
    await fresh.close()
    const partial = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
    await writeFile(partial, new Uint8Array(await dump.arrayBuffer()))
    await rename(partial, file)
    return dump
  }
}

let template: Promise<Blob> | undefined

/** A new layer each call, as `embeddedLayer` gives: two calls are two databases, even in one build. */
const embeddedTestLayer = () =>
  Layer.unwrap(
    Effect.map(Effect.promise(() => (template ??= clusterTemplate())), (blob) => embeddedLayer(undefined, blob))
  )

export const databaseLayer = (database: TestDatabase, options: PostgresOptions = {}) =>
  database === "postgres" ? isolatedPostgres(options) : embeddedTestLayer()

/** A fresh schema of TEST_DATABASE_URL's server, reached through a proxy on `proxyPort`. */
export const postgresThroughProxy = (proxyPort: number, options: PostgresOptions = {}) =>
  isolatedPostgres(options, proxyPort)
