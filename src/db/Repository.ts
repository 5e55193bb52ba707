/**
 * The repository boundary. A repository's statements fail with `SqlError` only when the database
 * itself fails, which no caller can act on: such a failure becomes a defect here, once per
 * repository, instead of an `orDie` in every service. Failures a caller can act on (a taken
 * reference, a duplicate email) are mapped to typed errors inside the repository, before this.
 */
import { Context, Effect, Layer, Option, Schema, type Tracer } from "effect"
import { SqlClient, type SqlError, type Statement } from "effect/sql"
import { dieOnSqlError } from "./errors.js"

type WithoutSqlError<T> = T extends (...args: infer Args) => Effect.Effect<infer A, infer E, infer R>
  ? (...args: Args) => Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
  : T extends Effect.Effect<infer A, infer E, infer R> ? Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
  : T

export type Repository<T> = { readonly [K in keyof T]: WithoutSqlError<T[K]> }

/**
 * Wraps a repository's methods: each runs in a span named `<repository>.<method>` (around its
 * `sql.execute` spans), and a `SqlError` becomes a defect.
 */
export const repository = <T extends Record<string, unknown>>(repositoryName: string, methods: T): Repository<T> =>
  Object.fromEntries(
    Object.entries(methods).map(([name, method]) => {
      const span = repositorySpan(`${repositoryName}.${name}`)
      const boundary = <A, E, R>(effect: Effect.Effect<A, E, R>) => span(dieOnSqlError(effect))
      return [
        name,
        Effect.isEffect(method)
          ? boundary(method)
          : typeof method === "function"
          ? (...args: ReadonlyArray<unknown>) => {
            const result: unknown = method(...args)
            return Effect.isEffect(result) ? boundary(result) : result
          }
          : method
      ]
    })
    // The mapped object has exactly the keys of `methods`, each transformed as `Repository` says.
  ) as Repository<T>

/**
 * Makes a service's writes atomic: `effect.pipe(inTransaction)` runs `effect` in a transaction (a
 * savepoint inside an outer one). Beginning or committing can only fail with the database, so that
 * failure is a defect too. A service takes the runner when it is built
 * (`const inTransaction = yield* makeTransaction`), so its methods need no SqlClient, and a unit
 * test over mocked repositories provides `Transaction.layerTest` instead of a database.
 */
export class Transaction extends Context.Service<Transaction, {
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
  /**
   * Atomic with the caller's transaction when one is open (no savepoint: a failure there rolls the
   * whole of it back, and two statements fewer per call), in a transaction of its own otherwise.
   */
  readonly atomic: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, Exclude<E, SqlError.SqlError>, R>
}>()("etd/Transaction") {
  static readonly layer = Layer.effect(
    this,
    Effect.map(SqlClient.SqlClient, (sql) => ({
      run: (effect) => dieOnSqlError(sql.withTransaction(effect)),
      atomic: (effect) =>
        Effect.flatMap(
          Effect.serviceOption(sql.transactionService),
          (open) => dieOnSqlError(Option.isSome(open) ? effect : sql.withTransaction(effect))
        )
    }))
  )
  /** Mocked repositories have nothing to make atomic. */
  static readonly layerTest = Layer.succeed(this, { run: dieOnSqlError, atomic: dieOnSqlError })
}

export const makeTransaction = Effect.map(Transaction, (transaction) => transaction.run)

/** Decodes a statement's rows with `schema`; our own rows failing it would be a bug, so a defect. */
export const decodeRows = <A>(schema: Schema.Decoder<A>) => {
  const decode = Schema.decodeUnknownEffect(Schema.Array(schema))
  return <E, R>(statement: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
    Effect.flatMap(statement, (rows) => Effect.orDie(decode(rows)))
}

/**
 * A repository or queue operation's span. Without a captured stack: the caller's own span already
 * says where in the service it was made, and a stack per statement cost more CPU on the webhook
 * delivery path than encoding the statement.
 */
export const repositorySpan = (name: string, options?: Tracer.SpanOptionsNoTrace) =>
  Effect.withSpan(name, options, { captureStackTrace: false })

/**
 * A job to insert within another repository's statement (`LeasedQueue.enqueueing`), so that work and
 * its job are written in one round trip: the INSERT, to run as a data-modifying CTE gated on the
 * work, and the channel the statement must notify.
 */
export interface QueuedJobs {
  /** The INSERT, made only when `condition` (an SQL boolean, e.g. `EXISTS (SELECT 1 FROM a_cte)`) holds. */
  readonly insertWhen: (condition: Statement.Fragment) => Statement.Fragment
  readonly channel: string
}

/**
 * Writes another repository's statement carries (the outbox's event and its deliveries, written
 * with the outcome that caused them): data-modifying CTE definitions, each written only where the
 * statement's gate holds, and an expression for the statement's select list (a NOTIFY).
 */
export interface StatementParts {
  readonly ctes: Statement.Fragment
  readonly select: Statement.Fragment
}
