/**
 * An `@effect/sql` client over PGlite, the embedded WASM PostgreSQL used when no DATABASE_URL is
 * set. It offers the same `PgClient` service as `@effect/sql-pg`, so repos, `PgMigrator` and
 * LISTEN/NOTIFY work unchanged on both databases.
 *
 * PGlite is a single connection. Without care, two fibers that each run a transaction would
 * interleave their statements inside one BEGIN…COMMIT. A one-permit semaphore prevents that: a
 * transaction holds the permit from BEGIN to COMMIT/ROLLBACK, and a statement outside a
 * transaction holds it only while it runs, so it waits for any open transaction to finish.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { PGlite } from "@electric-sql/pglite"
import { Chunk, Context, Effect, Layer, Stream } from "effect"
import { mkdir } from "node:fs/promises"

export interface PgliteClientConfig {
  /** Directory for the database files; in memory when absent (tests). */
  readonly dataDir?: string | undefined
  readonly transformQueryNames?: ((name: string) => string) | undefined
  readonly transformResultNames?: ((name: string) => string) | undefined
  /** Whether the name transforms also apply inside JSON columns. */
  readonly transformJson?: boolean | undefined
}

type Rows = ReadonlyArray<Record<string, unknown>>
type RowTransform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

export const make = (config: PgliteClientConfig) =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          if (config.dataDir !== undefined) await mkdir(config.dataDir, { recursive: true })
          return PGlite.create(config.dataDir ?? "memory://")
        },
        catch: (cause) => new SqlError({ cause, message: "Failed to open the embedded database" })
      }),
      (db) => Effect.promise(() => db.close())
    )
    const permit = yield* Effect.makeSemaphore(1)

    const query = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
      Effect.tryPromise({
        // PGlite's parameter type is mutable; it does not modify the array.
        try: () => db.query<Record<string, unknown>>(sql, params as Array<unknown>, rowMode ? { rowMode } : undefined),
        catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
      })

    const execute = (sql: string, params: ReadonlyArray<unknown>, transformRows: RowTransform) =>
      Effect.map(query(sql, params), (result): Rows =>
        transformRows ? transformRows(result.rows as Rows) : (result.rows as Rows))

    const connection: Connection = {
      execute,
      executeRaw: (sql, params) => query(sql, params),
      executeValues: (sql, params) =>
        Effect.map(query(sql, params, "array"), (result) => result.rows as unknown as ReadonlyArray<ReadonlyArray<unknown>>),
      executeUnprepared: (sql, params, transformRows) =>
        params.length === 0
          ? Effect.map(
            Effect.tryPromise({
              try: () => db.exec(sql),
              catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
            }),
            (results): Rows => {
              const rows = (results.at(-1)?.rows ?? []) as Rows
              return transformRows ? transformRows(rows) : rows
            }
          )
          : execute(sql, params, transformRows),
      // PGlite has no cursors over the wire; results are already in memory, so stream the array.
      executeStream: (sql, params, transformRows) =>
        Stream.flatMap(Stream.fromEffect(execute(sql, params, transformRows)), (rows) =>
          Stream.fromChunk(Chunk.fromIterable(rows)))
    }

    const acquirer = Effect.as(Effect.acquireRelease(permit.take(1), () => permit.release(1)), connection)
    const transformJson = config.transformJson ?? true
    const compiler = PgClient.makeCompiler(config.transformQueryNames, transformJson)
    const transformRows = config.transformResultNames
      ? Statement.defaultTransforms(config.transformResultNames, transformJson).array
      : undefined

    const client = yield* Client.make({
      acquirer,
      compiler,
      spanAttributes: [["db.system", "postgresql"], ["db.embedded", "pglite"]],
      transformRows
    })

    const pgJson = Statement.custom<PgClient.PgCustom>("PgJson")
    const extras: Omit<PgClient.PgClient, keyof Client.SqlClient> = {
      [PgClient.TypeId]: PgClient.TypeId,
      config: {},
      json: (value: unknown) => pgJson(value, undefined, undefined),
      listen: (channel: string) =>
        Stream.asyncPush<string, SqlError>((emit) =>
          Effect.acquireRelease(
            Effect.tryPromise({
              try: () => db.listen(channel, (payload) => emit.single(payload)),
              catch: (cause) => new SqlError({ cause, message: "Failed to listen" })
            }),
            (unlisten) => Effect.promise(() => unlisten())
          )
        ),
      notify: (channel: string, payload: string) => Effect.asVoid(client`SELECT pg_notify(${channel}, ${payload})`)
    }
    return Object.assign(client, extras) as PgClient.PgClient
  })

export const layer = (config: PgliteClientConfig): Layer.Layer<PgClient.PgClient | Client.SqlClient, SqlError> =>
  Layer.scopedContext(
    Effect.map(make(config), (client) => Context.make(PgClient.PgClient, client).pipe(Context.add(Client.SqlClient, client)))
  ).pipe(Layer.provide(Reactivity.layer))
