/**
 * SQL of the authority simulator's own tables: `authority_sim_records` (one row per system, tenant
 * and submission id) and the `authority_sim_nfse_numbers` sequence. They stand for the remote
 * authority's database, so the simulator writes them on connections and in transactions of its own
 * (an id's first submit is one statement), never in one the caller has open. Storage failures are
 * defects here; the simulator decides what its caller sees.
 */
import { Context, Effect, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SubmissionDocument } from "../TaxAuthority.js"

const AuthoritySystem = Schema.Literals(["production", "homologation"])

/** One row of `authority_sim_records` (camelCase, as the SQL client maps result names). */
export const SimulatorRecord = Schema.Struct({
  system: AuthoritySystem,
  tenantId: Schema.String,
  submissionId: Schema.String,
  status: Schema.Literals(["received", "authorized", "cancelled"]),
  submitAttempts: Schema.Number,
  lookups: Schema.Number,
  lastOutcome: Schema.NullOr(Schema.String),
  document: Schema.Unknown,
  nfseNumber: Schema.NullOr(Schema.Number),
  accessKey: Schema.NullOr(Schema.String),
  protocol: Schema.NullOr(Schema.String),
  authorizedAt: Schema.NullOr(Schema.Date),
  cancelledAt: Schema.NullOr(Schema.Date),
  cancelProtocol: Schema.NullOr(Schema.String),
  cancelReasonCode: Schema.NullOr(Schema.String),
  cancelReason: Schema.NullOr(Schema.String),
  receivedAt: Schema.Date,
  updatedAt: Schema.Date
})
export type SimulatorRecord = typeof SimulatorRecord.Type

const RecordKey = Schema.Struct({ system: AuthoritySystem, tenantId: Schema.String, submissionId: Schema.String })
type RecordKey = typeof RecordKey.Type

/**
 * What a submission carries that the national system would receive: its record keeps these and no
 * more, whatever else the caller's object holds (a stored document passes its whole row).
 */
export const sentFields = (document: SubmissionDocument): SubmissionDocument => ({
  environment: document.environment,
  issuer: document.issuer,
  series: document.series,
  number: document.number,
  issueDate: document.issueDate,
  createdAt: document.createdAt,
  taker: document.taker,
  intermediary: document.intermediary,
  service: document.service,
  amounts: document.amounts,
  tax: document.tax,
  notes: document.notes
})

/** The record of an id the authority has not seen, at `at`: what a first submit is decided on. */
export const unseenRecord = (key: RecordKey, at: Date): SimulatorRecord => ({
  ...key,
  status: "received",
  submitAttempts: 0,
  lookups: 0,
  lastOutcome: null,
  document: null,
  nfseNumber: null,
  accessKey: null,
  protocol: null,
  authorizedAt: null,
  cancelledAt: null,
  cancelProtocol: null,
  cancelReasonCode: null,
  cancelReason: null,
  receivedAt: at,
  updatedAt: at
})

/**
 * Whether the client has a single connection (the embedded PGlite). There a second transaction
 * waits for the connection the caller's open transaction holds, so the simulator cannot run beside
 * one. The driver name is how `effect/sql` tells clients that share a dialect apart.
 */
const isSingleConnection = (sql: SqlClient.SqlClient): boolean => sql.driver === "pglite"

/**
 * Runs `effect` as if no transaction were open: the SQL client finds the current transaction's
 * connection in the Context under its `transactionService`, so without it the statements acquire a
 * connection (and a transaction) of their own.
 */
const outsideTransaction =
  (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.updateContext(
      effect,
      // `omit` narrows the type to "R without TransactionConnection", which R never names (the tag is
      // optional context): the cast only restores the type parameter.
      (context: Context.Context<R>) => Context.omit(sql.transactionService)(context) as Context.Context<R>
    )

export class SimulatorRepo extends Context.Service<SimulatorRepo>()("etd/authority/SimulatorRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const singleConnection = isSingleConnection(sql)

    /**
     * Runs `effect` on a connection of its own, whatever transaction the caller has open: what the
     * simulator records never depends on the caller's commit. On the single-connection database a
     * call from inside a transaction would wait for itself forever, so it dies at once instead.
     */
    const onOwnConnection = <A, R>(effect: Effect.Effect<A, never, R>): Effect.Effect<A, never, R> =>
      Effect.flatMap(
        Effect.serviceOption(sql.transactionService),
        (ambient) =>
          singleConnection && Option.isSome(ambient)
            ? Effect.die(
              new Error(
                "The authority simulator cannot run inside a caller's transaction on the embedded database " +
                  "(it has one connection); call it outside the transaction."
              )
            )
            : outsideTransaction(sql)(effect)
      )

    /** Runs `effect` in a transaction of its own, on a connection of its own (`onOwnConnection`). */
    const inOwnTransaction = <A, R>(effect: Effect.Effect<A, never, R>): Effect.Effect<A, never, R> =>
      onOwnConnection(effect.pipe(sql.withTransaction, Effect.orDie))

    const findForUpdate = (key: RecordKey) =>
      sql`SELECT * FROM authority_sim_records
          WHERE system = ${key.system} AND tenant_id = ${key.tenantId} AND submission_id = ${key.submissionId} FOR UPDATE`

    /**
     * The record, locked until the transaction ends (so use it inside `inOwnTransaction`): the lock
     * serializes calls for one id.
     */
    const lock = SqlSchema.findOneOption({ Request: RecordKey, Result: SimulatorRecord, execute: findForUpdate })

    /**
     * As `lock`, with a `received` record created first if there is none, in one statement: the
     * upsert's no-op update takes the row lock on an existing record (a concurrent first call for
     * the id waits until our transaction ends). It also draws the NFS-e number an authorization
     * would take, so that a submit needs no second round trip for it: a submit that does not
     * authorize leaves a gap in the simulator's numbers, as a number is never handed out twice.
     */
    const lockOrCreate = SqlSchema.findOne({
      Request: Schema.Struct({ ...RecordKey.fields, at: Schema.Date }),
      Result: Schema.Struct({ ...SimulatorRecord.fields, nextNfseNumber: Schema.Number }),
      execute: ({ at, ...key }) =>
        sql`
          INSERT INTO authority_sim_records AS r (system, tenant_id, submission_id, status, received_at, updated_at)
          VALUES (${key.system}, ${key.tenantId}, ${key.submissionId}, 'received', ${at}, ${at})
          ON CONFLICT (system, tenant_id, submission_id) DO UPDATE SET updated_at = r.updated_at
          RETURNING r.*, nextval('authority_sim_nfse_numbers') AS next_nfse_number`
    })

    /** As `lockOrCreate`, drawing no NFS-e number (the goods notes' records: their numbers are the emitter's). */
    const lockOrCreateRecord = SqlSchema.findOne({
      Request: Schema.Struct({ ...RecordKey.fields, at: Schema.Date }),
      Result: SimulatorRecord,
      execute: ({ at, ...key }) =>
        sql`
          INSERT INTO authority_sim_records AS r (system, tenant_id, submission_id, status, received_at, updated_at)
          VALUES (${key.system}, ${key.tenantId}, ${key.submissionId}, 'received', ${at}, ${at})
          ON CONFLICT (system, tenant_id, submission_id) DO UPDATE SET updated_at = r.updated_at
          RETURNING r.*`
    })

    const save = SqlSchema.void({
      Request: SimulatorRecord,
      execute: (record) =>
        sql`
          INSERT INTO authority_sim_records ${
          sql.insert({
            ...record,
            // Both drivers infer jsonb for the column from this text.
            document: record.document === null ? null : JSON.stringify(record.document)
          })
        }
          ON CONFLICT (system, tenant_id, submission_id) DO UPDATE SET
            status = EXCLUDED.status,
            submit_attempts = EXCLUDED.submit_attempts,
            lookups = EXCLUDED.lookups,
            last_outcome = EXCLUDED.last_outcome,
            document = EXCLUDED.document,
            nfse_number = EXCLUDED.nfse_number,
            access_key = EXCLUDED.access_key,
            protocol = EXCLUDED.protocol,
            authorized_at = EXCLUDED.authorized_at,
            cancelled_at = EXCLUDED.cancelled_at,
            cancel_protocol = EXCLUDED.cancel_protocol,
            cancel_reason_code = EXCLUDED.cancel_reason_code,
            cancel_reason = EXCLUDED.cancel_reason,
            updated_at = EXCLUDED.updated_at`
    })

    /** An NFS-e number for the next authorization; one that is not used stays a gap. */
    const drawNumber = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ nfseNumber: Schema.Number }),
      execute: () => sql`SELECT nextval('authority_sim_nfse_numbers') AS nfse_number`
    })

    /**
     * Stores the record of an id's first submission, its outcome decided: false, and nothing
     * written, when the id has a record already (the caller then decides again under its lock).
     * One statement, without a transaction: a first submission needs neither the lock nor a
     * `received` row before its decision.
     */
    const createIfAbsent = SqlSchema.findAll({
      Request: SimulatorRecord,
      Result: Schema.Struct({ created: Schema.Number }),
      execute: (record) =>
        sql`
          INSERT INTO authority_sim_records ${
          sql.insert({ ...record, document: record.document === null ? null : JSON.stringify(record.document) })
        }
          ON CONFLICT (system, tenant_id, submission_id) DO NOTHING
          RETURNING 1 AS created`
    })

    // A row that does not decode means the table was changed behind the simulator's back: a defect too.
    return {
      inOwnTransaction,
      drawNumber: onOwnConnection(Effect.orDie(Effect.map(drawNumber(undefined), ({ nfseNumber }) => nfseNumber))),
      createIfAbsent: (record: SimulatorRecord) =>
        onOwnConnection(Effect.orDie(Effect.map(createIfAbsent(record), (rows) => rows.length > 0))),
      lock: (key: RecordKey) => Effect.orDie(lock(key)),
      lockOrCreate: (key: RecordKey, at: Date) =>
        Effect.orDie(lockOrCreate({ ...key, at })).pipe(
          Effect.map(({ nextNfseNumber, ...record }) => ({ record, nextNfseNumber }))
        ),
      lockOrCreateRecord: (key: RecordKey, at: Date) => Effect.orDie(lockOrCreateRecord({ ...key, at })),
      save: (record: SimulatorRecord) => Effect.orDie(save(record))
    }
  })
}) {}
