/**
 * An `effect/sql` client over PGlite, the embedded WASM PostgreSQL used when no DATABASE_URL is
 * set. It offers the same `PgClient` service as `@effect/sql-pg`, so repos, migrations and
 * LISTEN/NOTIFY work unchanged on both databases.
 *
 * PGlite is a single connection. Without care, two fibers that each run a transaction would
 * interleave their statements inside one BEGIN…COMMIT. A one-permit semaphore prevents that: a
 * transaction holds the permit from BEGIN to COMMIT/ROLLBACK, and a statement outside a
 * transaction holds it only while it runs, so it waits for any open transaction to finish.
 */
import { PgClient, type PgConnection } from "@effect/sql-pg"
import { PGlite } from "@electric-sql/pglite"
import { Context, Effect, Layer, Queue, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, type SqlConnection, SqlError, Statement } from "effect/sql"
import { existsSync } from "node:fs"
import { mkdir, readFile } from "node:fs/promises"
import { join } from "node:path"

export interface PgliteClientConfig {
  /** Directory for the database files; in memory when absent (tests). */
  readonly dataDir?: string | undefined
  /**
   * An in-memory database's starting cluster (a `dumpDataDir` archive): loading one takes about a
   * quarter of the time PGlite's own initdb takes, which tests that start many databases feel.
   */
  readonly memoryTemplate?: Blob | undefined
  readonly transformQueryNames?: ((name: string) => string) | undefined
  readonly transformResultNames?: ((name: string) => string) | undefined
  /** Whether the name transforms also apply inside JSON columns. */
  readonly transformJson?: boolean | undefined
}

type Rows = ReadonlyArray<Record<string, unknown>>
type RowTransform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/**
 * PGlite reports PostgreSQL's own error fields (`code`, `constraint`); classify them the way
 * `@effect/sql-pg` does, so callers match on the same `SqlError` reasons on both databases.
 */
const sqlError = (cause: unknown, message: string, operation: string) => {
  const fields = typeof cause === "object" && cause !== null ? cause as { code?: unknown; constraint?: unknown } : {}
  const props = { cause, message, operation }
  const code = typeof fields.code === "string" ? fields.code : undefined
  const reason = code === "23505"
    ? new SqlError.UniqueViolation({
      ...props,
      constraint: typeof fields.constraint === "string" ? fields.constraint : "unknown"
    })
    : code?.startsWith("23")
    ? new SqlError.ConstraintError(props)
    : code === "40P01"
    ? new SqlError.DeadlockError(props)
    : code === "40001"
    ? new SqlError.SerializationError(props)
    : code?.startsWith("42")
    ? new SqlError.SqlSyntaxError(props)
    : new SqlError.UnknownError(props)
  return new SqlError.SqlError({ reason })
}

/** Binds `sql.json(…)` as JSON text, which PGlite casts to json/jsonb like any text parameter. */
const PgJson = Statement.custom<Statement.Custom<"PgJson", unknown>>("PgJson")

const makeCompiler = (transform: ((name: string) => string) | undefined, transformJson: boolean) => {
  const escape = Statement.defaultEscape("\"")
  const transformValue = transformJson && transform ? Statement.defaultTransforms(transform).value : undefined
  return Statement.makeCompiler<Statement.Custom<"PgJson", unknown>>({
    dialect: "pg",
    placeholder: (index) => `$${index}`,
    onIdentifier: (value, withoutTransform) => escape(withoutTransform || !transform ? value : transform(value)),
    onRecordUpdate: (placeholders, alias, columns, values, returning) => [
      `(values ${placeholders}) AS ${alias}${columns}${returning ? ` RETURNING ${returning[0]}` : ""}`,
      returning ? values.flat().concat(returning[1]) : values.flat()
    ],
    onCustom: (type, placeholder, withoutTransform) => {
      const value = withoutTransform || transformValue === undefined ? type.paramA : transformValue(type.paramA)
      return [placeholder(undefined), [JSON.stringify(value)]]
    }
  })
}

/**
 * A new database's cluster, made once at install: scripts/build.mjs writes it beside the bundle.
 * Unpacking it takes about half of what PGlite's own initdb takes on a first start (1.3 s against
 * 2.7 s here). Only for a data directory that holds no cluster yet; run from the sources there is
 * no template, and PGlite creates the cluster itself.
 */
const clusterTemplateFor = async (dataDir: string): Promise<Blob | undefined> => {
  if (existsSync(join(dataDir, "PG_VERSION"))) return undefined
  const template = new URL("./pglite-cluster.tar.gz", import.meta.url)
  return existsSync(template) ? new Blob([await readFile(template)]) : undefined
}

export const make = (config: PgliteClientConfig) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (config.dataDir === undefined) {
            return config.memoryTemplate === undefined
              ? PGlite.create("memory://")
              : PGlite.create({ loadDataDir: config.memoryTemplate })
          }
          await mkdir(config.dataDir, { recursive: true })
          const template = await clusterTemplateFor(config.dataDir)
          return PGlite.create({
            dataDir: config.dataDir,
            ...(template === undefined ? {} : { loadDataDir: template })
          })
        },
        catch: (cause) => sqlError(cause, "Failed to open the embedded database", "connect")
      }),
      (db) => Effect.promise(() => db.close())
    )
    const permit = yield* Semaphore.make(1)

    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
      Effect.tryPromise({
        // PGlite's parameter type is mutable; it does not modify the array.
        try: () => db.query<Record<string, unknown>>(sql, params as Array<unknown>, rowMode ? { rowMode } : undefined),
        catch: (cause) => sqlError(cause, "Failed to execute statement", "query")
      })

    const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: RowTransform) =>
      Effect.map(
        query(sql, params),
        (result): Rows => transformRows ? transformRows(result.rows as Rows) : (result.rows as Rows)
      )

    const executeValues = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.map(
        query(sql, params, "array"),
        (result) => result.rows as unknown as ReadonlyArray<ReadonlyArray<unknown>>
      )

    const connection: SqlConnection.Connection = {
      execute,
      executeRaw: (sql, params) => query(sql, params),
      executeValues,
      executeValuesUnprepared: executeValues,
      executeUnprepared: (sql, params, transformRows) =>
        params.length === 0
          ? Effect.map(
            Effect.tryPromise({
              try: () => db.exec(sql),
              catch: (cause) => sqlError(cause, "Failed to execute statement", "query")
            }),
            (results): Rows => {
              const rows = (results.at(-1)?.rows ?? []) as Rows
              return transformRows ? transformRows(rows) : rows
            }
          )
          : execute(sql, params, transformRows),
      // PGlite has no cursors over the wire; results are already in memory, so stream the array.
      executeStream: (sql, params, transformRows) =>
        Stream.flatMap(Stream.fromEffect(execute(sql, params, transformRows)), (rows) => Stream.fromIterable(rows))
    }

    const acquirer = Effect.as(Effect.acquireRelease(permit.take(1), () => permit.release(1)), connection)
    const transformJson = config.transformJson ?? true
    const transformRows = config.transformResultNames
      ? Statement.defaultTransforms(config.transformResultNames, transformJson).array
      : undefined

    const client = yield* SqlClient.make({
      acquirer,
      compiler: makeCompiler(config.transformQueryNames, transformJson),
      driver: "pglite",
      spanAttributes: [["db.system.name", "postgresql"], ["db.embedded", "pglite"]],
      transformRows
    })

    const extras: Omit<PgClient.PgClient, keyof SqlClient.SqlClient> = {
      [PgClient.TypeId]: PgClient.TypeId,
      config: {},
      json: (value: unknown) => Statement.fragment([PgJson(value, undefined, undefined)]),
      listen: (channel: string) =>
        Effect.gen(function*() {
          const queue = yield* Queue.unbounded<PgConnection.Notification, SqlError.SqlError>()
          yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: () => db.listen(channel, (payload) => Queue.offerUnsafe(queue, { processId: 0, channel, payload })),
              catch: (cause) => sqlError(cause, "Failed to listen", "listen")
            }),
            (unlisten) => Effect.promise(() => unlisten())
          )
          return queue
        }),
      notify: (channel: string, payload: string) => Effect.asVoid(client`SELECT pg_notify(${channel}, ${payload})`)
    }
    return Object.assign(client, extras) as PgClient.PgClient
  })

export const layer = (
  config: PgliteClientConfig
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effectContext(
    Effect.map(make(config), (client) =>
      Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client)))
  ).pipe(Layer.provide(Reactivity.layer))
