/**
 * The one leased job queue, over any table that has the queue's columns: an id, a state column
 * that reads 'pending' while the job waits or runs, a due-time column, `attempts`, `locked_by`,
 * `locked_until` and `updated_at`. The issuance jobs and the webhook deliveries are two such tables.
 *
 * A claim leases due jobs with `FOR UPDATE SKIP LOCKED`, so any number of workers on any number of
 * instances can claim side by side without taking the same job. Every write after the claim is
 * fenced by the claim's token: a worker whose lease ran out (and whose job another worker took
 * over) writes nothing, it gets `LeaseLost`. Jobs are enqueued with a NOTIFY that PostgreSQL sends
 * at commit, which wakes the idle workers of every instance (WorkerPool).
 */
import { randomUUID } from "node:crypto"
import { Array as Arr, Data, Duration, Effect, Ref, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { AppConfig } from "../Config.js"
import { dieOnSqlError } from "../db/errors.js"
import { repositorySpan } from "../db/Repository.js"
import { now } from "../domain/Time.js"

/** Another worker took the job over (our lease ran out): whatever we meant to write is not written. */
export class LeaseLost extends Data.TaggedError("LeaseLost") {}

/** The queue's own columns, as every claimed job carries them. */
export const LeaseFields = {
  /** The claim's token; the job's writes go through only while it still holds the job. */
  lockedBy: Schema.String,
  /** Attempts so far, this one included: counted when the job is claimed. */
  attempts: Schema.Number
}

export interface Lease {
  readonly id: string | number
  readonly lockedBy: string
  readonly attempts: number
}

export interface QueueDefinition<Job extends Lease, New> {
  /** Names the queue in spans and logs ("issuance", "webhooks"). */
  readonly name: string
  readonly table: string
  /** The column that holds 'pending' while a job waits or runs, and its final state after. */
  readonly stateColumn: string
  /** When the job is due. */
  readonly dueColumn: string
  /** Decodes a claimed row (all columns, camelCased); must include `LeaseFields` and the id. */
  readonly job: Schema.Decoder<Job>
  /** The NOTIFY channel that wakes the workers; its payload is never empty (sql-pg drops empty ones). */
  readonly channel: string
  /** The row written for a new job, given the time it is enqueued. */
  readonly row: (job: New, at: Date) => Record<string, unknown>
  /** Extra assignments made when a job is claimed (e.g. a per-run attempt counter). */
  readonly onClaim?: (sql: SqlClient.SqlClient, at: Date) => Statement.Fragment
  /**
   * Per-tenant fairness: the column that names a job's tenant (indexed with the due column for
   * pending jobs). Claims then serve tenants in turn, round robin: each claim starts with the
   * oldest due jobs of the tenant after the one served last, so a tenant with due work waits at
   * most one claim per other such tenant, however long their backlogs. Without it: oldest first.
   */
  readonly fairnessColumn?: string
}

export interface LeasedQueue<Job extends Lease, New> {
  readonly name: string
  readonly channel: string
  /** Inserts jobs and wakes the workers at commit; call inside the transaction that causes them. */
  readonly enqueue: (jobs: ReadonlyArray<New>) => Effect.Effect<void>
  /** Wakes the workers of every instance at commit (after jobs were made due by other means). */
  readonly wake: Effect.Effect<void>
  /** Leases up to `limit` due jobs for `lease`, counting the attempt. */
  readonly claim: (limit: number, lease: Duration.Duration) => Effect.Effect<ReadonlyArray<Job>>
  /** Ends the job in a final state, writing `fields` with it, if this claim still holds it. */
  readonly complete: (job: Job, state: string, fields?: Record<string, unknown>) => Effect.Effect<void, LeaseLost>
  /** Puts the job back, due at `runAt`, writing `fields` with it, if this claim still holds it. */
  readonly retryAt: (job: Job, runAt: Date, fields?: Record<string, unknown>) => Effect.Effect<void, LeaseLost>
  /** Locks the job row for the surrounding transaction, failing it unless this claim still holds the job. */
  readonly hold: (job: Job) => Effect.Effect<void, LeaseLost>
  /** Extends the lease of a job that is still being worked on. */
  readonly renew: (job: Job, lease: Duration.Duration) => Effect.Effect<void, LeaseLost>
  /**
   * Makes these jobs due now, whatever their state, writing `fields` with them. Any lease is
   * dropped: a worker still on one finds it lost and writes nothing. Returns how many there were.
   */
  readonly requeue: (ids: ReadonlyArray<Job["id"]>, fields?: Record<string, unknown>) => Effect.Effect<number>
  /** Ends those of these jobs that wait (pending, no live lease) in a final state; ones in flight settle on their own. */
  readonly cancelWaiting: (ids: ReadonlyArray<Job["id"]>, state: string, fields?: Record<string, unknown>) => Effect.Effect<void>
}

export const makeLeasedQueue = <Job extends Lease, New>(definition: QueueDefinition<Job, New>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { instanceId } = (yield* AppConfig).queue
    const table = sql(definition.table)
    const state = sql(definition.stateColumn)
    const due = sql(definition.dueColumn)
    const decode = Schema.decodeUnknownEffect(Schema.Array(definition.job))

    /** The tenant a fair queue served last: the next claim starts after it. */
    const cursor = yield* Ref.make("")

    /** The `picked` rows (id, tenant, turn) of a claim that takes the oldest due jobs. */
    const oldestFirst = (dueNow: Statement.Fragment, limit: number) =>
      sql`picked AS (
        SELECT id, NULL AS tenant, 0 AS turn FROM ${table} WHERE ${dueNow}
        ORDER BY ${due}, id LIMIT ${limit} FOR UPDATE SKIP LOCKED)`

    /**
     * The `picked` rows of a fair claim: the oldest due jobs of the first tenant after the cursor
     * (in the tenants' order, wrapping around), then of the next ones while the batch has room.
     * Each half is one scan of the (tenant, due) index.
     */
    const inTurn = (column: string, dueNow: Statement.Fragment, limit: number, from: string) => {
      const tenant = sql(column)
      const half = (after: boolean) =>
        sql`SELECT id, ${tenant} AS tenant, ${after ? 0 : 1} AS turn FROM (
          SELECT id, ${tenant}, ${due} FROM ${table} WHERE ${dueNow} AND ${tenant} ${after ? sql`>` : sql`<=`} ${from}
          ORDER BY ${tenant}, ${due}, id LIMIT ${limit} FOR UPDATE SKIP LOCKED) AS ${sql(after ? "after_cursor" : "wrapped")}`
      // No ORDER BY on top: PostgreSQL runs the halves of a UNION ALL in order and the LIMIT stops
      // pulling rows once it has enough, so the wrapped half is neither scanned nor locked when the
      // first one fills the batch (and each half's rows come in its own order).
      return sql`picked AS (SELECT id, tenant, turn FROM (${half(true)} UNION ALL ${half(false)}) AS turns LIMIT ${limit})`
    }

    // PostgreSQL sends it at commit, so a worker never wakes before the rows exist.
    const wake = sql`SELECT pg_notify(${definition.channel}, 'queued')`.pipe(Effect.asVoid, Effect.orDie)

    const enqueue = (jobs: ReadonlyArray<New>) =>
      Effect.gen(function*() {
        if (!Arr.isReadonlyArrayNonEmpty(jobs)) return
        const at = yield* now
        // One round trip: the insert and the wake-up (sent at commit) in a single statement.
        yield* sql`
          WITH queued AS (INSERT INTO ${table} ${sql.insert(Arr.map(jobs, (job) => definition.row(job, at)))} RETURNING 1)
          SELECT pg_notify(${definition.channel}, 'queued') FROM (SELECT 1 FROM queued LIMIT 1) AS one`
      }).pipe(Effect.orDie, repositorySpan(`Queue.enqueue`, { attributes: { "queue.name": definition.name } }))

    const claim = (limit: number, lease: Duration.Duration) =>
      Effect.gen(function*() {
        const at = yield* now
        const leaseUntil = new Date(at.getTime() + Duration.toMillis(lease))
        // Each claim gets its own token: a job re-claimed after its lease ran out must not pass
        // for the old claim, even on the same instance.
        const token = `${instanceId}:${randomUUID()}`
        const dueNow = sql`${state} = 'pending' AND ${due} <= ${at} AND (locked_until IS NULL OR locked_until <= ${at})`
        const extra = definition.onClaim ? sql`, ${definition.onClaim(sql, at)}` : sql``
        const rows = yield* sql`
          WITH ${definition.fairnessColumn === undefined ? oldestFirst(dueNow, limit) : inTurn(definition.fairnessColumn, dueNow, limit, yield* Ref.get(cursor))}
          UPDATE ${table} SET locked_by = ${token}, locked_until = ${leaseUntil}, attempts = attempts + 1,
                 updated_at = ${at} ${extra}
          FROM picked WHERE ${table}.id = picked.id
          RETURNING ${table}.*, picked.tenant AS fair_tenant, picked.turn AS fair_turn`
        // The next claim starts after the last tenant this one served, in the circular order it
        // walked: the wrapped part (turn 1), if any, came after the rest (turn 0).
        if (definition.fairnessColumn !== undefined && rows.length > 0) {
          const lastTurn = Math.max(...rows.map((row) => Number(row["fairTurn"])))
          const lastTenants = rows.filter((row) => Number(row["fairTurn"]) === lastTurn).map((row) => String(row["fairTenant"]))
          yield* Ref.set(cursor, lastTenants.reduce((a, b) => (b > a ? b : a)))
        }
        return yield* decode(rows)
      }).pipe(
        Effect.orDie,
        repositorySpan("Queue.claim", { attributes: { "queue.name": definition.name, "queue.batch": limit } })
      )

    /** The one fenced write: the job's row changes only while this claim holds it. */
    const release = (job: Job, assignments: Record<string, unknown>) =>
      Effect.gen(function*() {
        const at = yield* now
        const rows = yield* sql`
          UPDATE ${table} SET ${sql.update({ ...assignments, lockedBy: null, lockedUntil: null, updatedAt: at })}
          WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND ${state} = 'pending'
          RETURNING id`
        if (rows.length !== 1) return yield* new LeaseLost()
      }).pipe(dieOnSqlError)

    const complete = (job: Job, final: string, fields: Record<string, unknown> = {}) =>
      release(job, { ...fields, [definition.stateColumn]: final })

    const retryAt = (job: Job, runAt: Date, fields: Record<string, unknown> = {}) =>
      release(job, { ...fields, [definition.dueColumn]: runAt })

    const hold = (job: Job) =>
      Effect.gen(function*() {
        const rows = yield* sql`
          SELECT id FROM ${table}
          WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND ${state} = 'pending'
          FOR UPDATE`
        if (rows.length !== 1) return yield* new LeaseLost()
      }).pipe(dieOnSqlError)

    const renew = (job: Job, lease: Duration.Duration) =>
      Effect.gen(function*() {
        const at = yield* now
        const rows = yield* sql`
          UPDATE ${table} SET locked_until = ${new Date(at.getTime() + Duration.toMillis(lease))}
          WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND ${state} = 'pending'
          RETURNING id`
        if (rows.length !== 1) return yield* new LeaseLost()
      }).pipe(dieOnSqlError)

    const requeue = (ids: ReadonlyArray<Job["id"]>, fields: Record<string, unknown> = {}) =>
      Effect.gen(function*() {
        if (ids.length === 0) return 0
        const at = yield* now
        const rows = yield* sql`
          UPDATE ${table}
          SET ${sql.update({ ...fields, [definition.stateColumn]: "pending", [definition.dueColumn]: at, lockedBy: null, lockedUntil: null, updatedAt: at })}
          WHERE id IN ${sql.in(ids)}
          RETURNING id`
        return rows.length
      }).pipe(dieOnSqlError, repositorySpan("Queue.requeue", { attributes: { "queue.name": definition.name } }))

    const cancelWaiting = (ids: ReadonlyArray<Job["id"]>, final: string, fields: Record<string, unknown> = {}) =>
      Effect.gen(function*() {
        if (ids.length === 0) return
        const at = yield* now
        yield* sql`
          UPDATE ${table} SET ${sql.update({ ...fields, [definition.stateColumn]: final, updatedAt: at })}
          WHERE id IN ${sql.in(ids)} AND ${state} = 'pending' AND (locked_until IS NULL OR locked_until <= ${at})`
      }).pipe(dieOnSqlError, repositorySpan("Queue.cancelWaiting", { attributes: { "queue.name": definition.name } }))

    return {
      name: definition.name,
      channel: definition.channel,
      enqueue,
      wake,
      claim,
      complete,
      retryAt,
      hold,
      renew,
      requeue,
      cancelWaiting
    } satisfies LeasedQueue<Job, New>
  })
