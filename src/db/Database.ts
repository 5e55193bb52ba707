/**
 * The database: PostgreSQL through `@effect/sql-pg` when DATABASE_URL is set, otherwise the
 * embedded PGlite in DATA_DIR. Migrations run at start-up with the SQL `Migrator` on either.
 */
import { PgClient, PgTypes } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted, Result, String as Str } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as path from "node:path"
import { AppConfig } from "../Config.js"
import { untraced } from "../telemetry/TraceContext.js"
import { migrations } from "./migrations/index.js"

export const MIGRATIONS_TABLE = "etd_migrations"

/**
 * Columns are snake_case in SQL and camelCase in code. JSON columns hold API-shaped (snake_case)
 * objects and are left as they are.
 */
const names = { transformQueryNames: Str.camelToSnake, transformResultNames: Str.snakeToCamel, transformJson: false }

/**
 * PostgreSQL's int8 (and `count(*)`) arrives as a `bigint` from sql-pg's binary protocol, as a
 * `number` from PGlite, and `JSON.stringify` throws on a `bigint`. Our int8 values are counters far
 * below 2^53, so both databases decode them to `number`; a value that would lose precision fails
 * loudly instead of being rounded.
 */
const int8AsNumber: PgTypes.Codec<number | bigint> = {
  decode: (bytes) => {
    const value = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigInt64(0)
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Result.succeed(Number(value))
      : Result.fail(new PgTypes.CodecError({ message: "int8 value outside the safe integer range" }))
  },
  encode: (value) => {
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      return Result.fail(new PgTypes.CodecError({ message: "int8 parameter must be a safe integer" }))
    }
    const bytes = new Uint8Array(8)
    new DataView(bytes.buffer).setBigInt64(0, BigInt(value))
    return Result.succeed(bytes)
  }
}

const pgTypes = (() => {
  const registry = PgTypes.makeRegistry()
  registry.register(PgTypes.OID.int8, int8AsNumber, { arrayOid: PgTypes.OID.int8Array })
  return registry
})()

export interface PostgresOptions {
  /**
   * Named prepared statements (sql-pg's default) save a parse per query; a transaction-mode
   * pooler such as PgBouncer cannot keep them between transactions, so they can be turned off.
   */
  readonly prepare?: boolean | undefined
  /** How long opening a connection may take; a request waits no longer for one when the database is down. */
  readonly connectTimeout?: Duration.Input | undefined
}

export const postgresLayer = (url: string, options: PostgresOptions = {}) =>
  PgClient.layer({
    url: Redacted.make(url),
    ...names,
    types: pgTypes,
    // 20 for the work, plus one each queue's LISTEN keeps for itself (src/queue/WorkerPool.ts):
    // issuance, webhooks and mail.
    maxConnections: 23,
    prepare: options.prepare ?? true,
    connectTimeout: options.connectTimeout ?? Duration.seconds(5)
  })

/** Loaded only without DATABASE_URL: an instance on PostgreSQL carries none of PGlite. */
export const embeddedLayer = (dataDir: string | undefined, memoryTemplate?: Blob) =>
  Layer.unwrap(
    Effect.map(
      Effect.promise(() => import("./PgliteClient.js")),
      (PgliteClient) => PgliteClient.layer({ dataDir, memoryTemplate, ...names })
    )
  )

export const SqlLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: (url) =>
        postgresLayer(url, {
          prepare: config.databasePreparedStatements,
          connectTimeout: config.databaseConnectTimeout
        }),
      onNone: () => embeddedLayer(path.resolve(config.dataDir, "pglite"))
    }))
)

/** Run at start-up, untraced: an instance's start makes no spans (SPEC §13); the log says what ran. */
export const MigrationsLive = Layer.effectDiscard(
  untraced(Migrator.make({})({ loader: migrations, table: MIGRATIONS_TABLE }))
)

/** The highest migration id this build knows, for the readiness check. */
export const latestMigrationId = Effect.map(migrations, (all) => Math.max(...all.map(([id]) => id)))

/** The database answers a trivial statement (readiness). */
export const ping = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)

/** The newest migration applied to the database, 0 when none (readiness). */
export const appliedMigration = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`SELECT max(migration_id) AS latest FROM ${sql(MIGRATIONS_TABLE)}`
).pipe(Effect.map((rows) => Number(rows[0]?.["latest"] ?? 0)))
