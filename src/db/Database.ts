/**
 * The database: PostgreSQL through `@effect/sql-pg` when DATABASE_URL is set, otherwise the
 * embedded PGlite in DATA_DIR. Migrations run at start-up with `PgMigrator` on either.
 */
import { NodeContext } from "@effect/platform-node"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option, Redacted, String as Str } from "effect"
import * as path from "node:path"
import pg from "pg"
import { AppConfig } from "../Config.js"
import * as PgliteClient from "./PgliteClient.js"
import { migrations } from "./migrations/index.js"

export const MIGRATIONS_TABLE = "etd_migrations"

/**
 * Columns are snake_case in SQL and camelCase in code. JSON columns hold API-shaped (snake_case)
 * objects and are left as they are.
 */
const names = { transformQueryNames: Str.camelToSnake, transformResultNames: Str.snakeToCamel, transformJson: false }

/**
 * node-postgres returns int8 and numeric as strings; PGlite returns int8 as a number. Parse int8
 * as a number on both so code sees one type (our int8 values are counters far below 2^53).
 */
const pgTypes = {
  getTypeParser: (oid: number, format?: "text" | "binary") =>
    oid === 20
      ? (value: string) => Number(value)
      : oid === 1184 || oid === 1114
      ? (value: string) => new Date(value)
      : pgTypeParser(oid, format)
}
const pgTypeParser = (oid: number, format?: "text" | "binary") =>
  // pg-types' overloads differ only by format; the boundary cast keeps one call site.
  pg.types.getTypeParser(oid, (format ?? "text") as "text")

export const postgresLayer = (url: string) =>
  PgClient.layer({ url: Redacted.make(url), ...names, types: pgTypes, maxConnections: 20 })

export const embeddedLayer = (dataDir: string | undefined) => PgliteClient.layer({ dataDir, ...names })

export const SqlLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.databaseUrl, {
      onSome: postgresLayer,
      onNone: () => embeddedLayer(path.resolve(config.dataDir, "pglite"))
    }))
)

export const MigrationsLive = PgMigrator.layer({ loader: migrations, table: MIGRATIONS_TABLE }).pipe(
  Layer.provide(NodeContext.layer)
)

/** The highest migration id this build knows, for the readiness check. */
export const latestMigrationId = Effect.map(migrations, (all) => Math.max(...all.map(([id]) => id)))

/** The database with its migrations applied. */
export const DatabaseLive = Layer.provideMerge(MigrationsLive, SqlLive)

export type Sql = SqlClient.SqlClient
