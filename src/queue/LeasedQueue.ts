/**
 * The one leased job queue, over any table that has the queue's columns: an id, a state column
 * that reads 'pending' while the job waits or runs, a due-time column, `attempts`, `locked_by`,
 * `locked_until` and `updated_at`. The issuance jobs and the webhook deliveries are two such tables.
 *
 * A claim leases due jobs with `FOR UPDATE SKIP LOCKED`, so any number of workers on any number of
 * instances can claim side by side without taking the same job. It serves tenants in turn and never
 * leases more of one tenant's jobs (or of one finer group's, such as a webhook endpoint) than its
 * cap allows, counting the leases of every instance (SPEC §11 fairness). Every write after the claim is
 * fenced by the claim's token: a worker whose lease ran out (and whose job another worker took
 * over) writes nothing, it gets `LeaseLost`. Jobs are enqueued with a NOTIFY that PostgreSQL sends
 * at commit, which wakes the idle workers of every instance (WorkerPool).
 */
import { Array as Arr, Data, Duration, Effect, Ref, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../Config.js"
import { dieOnSqlError } from "../db/errors.js"
import { type QueuedJobs, repositorySpan } from "../db/Repository.js"
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
   * A write to other tables made by the claim's own statement, over the rows it claimed (the CTE
   * `claimed`, the table's columns as they are after the claim): what every claimed job needs done
   * before its work starts, in no round trip of its own.
   */
  readonly alsoOnClaim?: (sql: SqlClient.SqlClient, at: Date) => Statement.Fragment
  /**
   * Fairness between tenants. Jobs are grouped by tenant and, with `within`, by a finer key of the
   * tenant's (each value belongs to one tenant: a webhook endpoint). Claims walk the groups in turn,
   * round robin, each starting after the group the last one served, and take a group's oldest due
   * jobs; so a tenant with due work waits at most one claim per other group with due work, however
   * long their backlogs. At most `cap` jobs of a tenant, and of a `within` group, are leased at
   * once, counted over every instance: a tenant whose jobs hang (a receiver that never answers)
   * holds at most its cap of workers, never all of them. Pending jobs need an index on the tenant
   * column (then the `within` column), the due column and the id, and one on the same key columns
   * for the jobs that hold a lease (migration 0008); the key columns are text.
   */
  readonly fairness: {
    readonly tenant: QueueCap
    readonly within?: QueueCap
  }
}

export interface QueueCap {
  readonly column: string
  /** Jobs with one value of the column leased at once, by all instances together. */
  readonly cap: number
}

/** How a job's lease ends: in a final state, or due again at `runAt`. */
export type JobEnd = { readonly final: string } | { readonly runAt: Date }

export interface LeasedQueue<Job extends Lease, New> {
  readonly name: string
  readonly channel: string
  /** Inserts jobs and wakes the workers at commit; call inside the transaction that causes them. */
  readonly enqueue: (jobs: ReadonlyArray<New>) => Effect.Effect<void>
  /**
   * The enqueue of one job as parts of another repository's statement, so that the work and its job
   * are written in one round trip: the INSERT (to run as a data-modifying CTE, made only when a
   * condition holds) and the channel its statement must notify.
   */
  readonly enqueueing: (job: New, at: Date) => QueuedJobs
  /** Wakes the workers of every instance at commit (after jobs were made due by other means). */
  readonly wake: Effect.Effect<void>
  /** Leases up to `limit` due jobs for `lease`, counting the attempt. */
  readonly claim: (limit: number, lease: Duration.Duration) => Effect.Effect<ReadonlyArray<Job>>
  /** Ends the job in a final state, writing `fields` with it, if this claim still holds it. */
  readonly complete: (job: Job, state: string, fields?: Record<string, unknown>) => Effect.Effect<void, LeaseLost>
  /** Puts the job back, due at `runAt`, writing `fields` with it, if this claim still holds it. */
  readonly retryAt: (job: Job, runAt: Date, fields?: Record<string, unknown>) => Effect.Effect<void, LeaseLost>
  /**
   * `complete` (`final`) or `retryAt` (`runAt`) as an UPDATE another repository's statement can carry
   * (a CTE): it returns the job's id when this claim still held the job, else no row, and the
   * statement's other writes are made only when it returned one. The job's end and the outcome it
   * records are then one round trip, with no transaction around them. `fields` are written with it.
   */
  readonly ending: (job: Job, end: JobEnd, at: Date, fields?: Record<string, unknown>) => Statement.Fragment
  /** Extends the lease of a job that is still being worked on. */
  readonly renew: (job: Job, lease: Duration.Duration) => Effect.Effect<void, LeaseLost>
  /**
   * Makes these jobs due now, whatever their state, writing `fields` with them. Any lease is
   * dropped: a worker still on one finds it lost and writes nothing. Returns how many there were.
   */
  readonly requeue: (ids: ReadonlyArray<Job["id"]>, fields?: Record<string, unknown>) => Effect.Effect<number>
  /** Jobs waiting or in progress, and how long the oldest due one has waited (0 when none is due): for the metrics. */
  readonly backlog: Effect.Effect<{ readonly depth: number; readonly oldestAgeSeconds: number }>
  /** Ends those of these jobs that wait (pending, no live lease) in a final state; ones in flight settle on their own. */
  readonly cancelWaiting: (
    ids: ReadonlyArray<Job["id"]>,
    state: string,
    fields?: Record<string, unknown>
  ) => Effect.Effect<void>
}

/** The queue depth metric counts up to this many jobs (a gauge at the cap means "at least"). */
const BACKLOG_COUNT_CAP = 100_000

const Backlog = Schema.Struct({ depth: Schema.Number, oldestDue: Schema.NullOr(Schema.Date) })

export const makeLeasedQueue = <Job extends Lease, New>(definition: QueueDefinition<Job, New>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { instanceId } = (yield* AppConfig).queue
    const table = sql(definition.table)
    const state = sql(definition.stateColumn)
    const due = sql(definition.dueColumn)
    const decode = Schema.decodeUnknownEffect(Schema.Array(definition.job))

    /** The group the last claim served, (tenant, within-key or ''): the next claim starts after it. */
    const cursor = yield* Ref.make<readonly [string, string]>(["", ""])

    const { tenant, within } = definition.fairness
    const tenantKey = sql(tenant.column)
    const pending = sql`${state} = 'pending'`
    /**
     * How many more jobs of the tenant `nx.g1`, or of its group `nx.g2` with `group`, may be leased
     * now, taking the tenant's lock as `lock` says (migration 0008).
     */
    const room = (at: Date, lock: Statement.Fragment, group?: QueueCap) =>
      sql`etd_queue_room(${definition.table}, ${definition.stateColumn}, ${tenant.column}, nx.g1, ${
        group === undefined ? sql`NULL, NULL` : sql`${group.column}, nx.g2`
      }, ${(group ?? tenant).cap}, ${at}, ${lock})`

    /**
     * The groups a claim visits, in index order from `prev` (the last group visited), each with the
     * ids it leased: one recursive CTE with the columns (g1: tenant, g2: within-key or '', n: step,
     * t_left: the room left for g1, total: the room left in the batch, first_left: the room left for
     * the cursor's tenant once the walk left it, ids). `bound` limits the walk to groups up to the
     * cursor (the wrapped part). Every step is an index probe for the next group with pending jobs,
     * however many jobs the group has; a group of a tenant without room takes nothing.
     */
    const walk = (
      name: string,
      seed: Statement.Fragment,
      bound: Statement.Fragment,
      from: readonly [string, string],
      at: Date
    ) => {
      const self = sql(name)
      const dueNow = sql`${pending} AND ${due} <= ${at} AND (locked_until IS NULL OR locked_until <= ${at})`
      const following = within === undefined
        ? sql`(SELECT ${tenantKey} AS g1, ''::text AS g2 FROM ${table}
            WHERE ${pending} AND ${tenantKey} > prev.g1 ${bound} ORDER BY ${tenantKey} LIMIT 1)`
        : sql`(SELECT ${tenantKey} AS g1, ${sql(within.column)} AS g2 FROM ${table}
            WHERE ${pending} AND (${tenantKey}, ${sql(within.column)}) > (prev.g1, prev.g2) ${bound}
            ORDER BY ${tenantKey}, ${sql(within.column)} LIMIT 1)`
      const inGroup = within === undefined
        ? sql`${tenantKey} = nx.g1`
        : sql`${tenantKey} = nx.g1 AND ${sql(within.column)} = nx.g2`
      // A group's cap binds only below its tenant's (the tenant's leases include the group's).
      const take = within === undefined || within.cap >= tenant.cap
        ? sql`LEAST(room.t_left, prev.total)`
        : sql`LEAST(room.t_left, prev.total, ${room(at, sql`'held'`, within)})`
      // A tenant's room is carried on while the walk stays in the tenant; otherwise it is asked,
      // waiting for the tenant's lock only for the claim's first tenant (the claim holds no lock
      // yet, so no two claims ever wait for each other) and trying it for the others. OFFSET 0
      // keeps the group's jobs one subquery: pulled up, it would be run once per use of `got`.
      return sql`${self}(g1, g2, n, t_left, total, first_left, ids) AS (
        ${seed}
        UNION ALL
        SELECT nx.g1, nx.g2, prev.n + 1, room.t_left - cardinality(got.ids), prev.total - cardinality(got.ids),
               CASE WHEN nx.g1 = ${from[0]} THEN room.t_left - cardinality(got.ids) ELSE prev.first_left END, got.ids
        FROM ${self} AS prev
        CROSS JOIN LATERAL ${following} AS nx
        CROSS JOIN LATERAL (SELECT CASE
          WHEN prev.n > 0 AND nx.g1 = prev.g1 THEN prev.t_left
          WHEN nx.g1 = ${from[0]} AND prev.first_left IS NOT NULL THEN prev.first_left
          ELSE ${room(at, sql`CASE WHEN prev.n = 0 THEN 'wait' ELSE 'try' END`)} END AS t_left) AS room
        CROSS JOIN LATERAL (SELECT ARRAY(
          SELECT id FROM ${table} WHERE ${inGroup} AND ${dueNow}
          ORDER BY ${due}, id
          LIMIT CASE WHEN room.t_left > 0 THEN ${take} ELSE 0 END
          FOR UPDATE SKIP LOCKED) AS ids OFFSET 0) AS got
        WHERE prev.total > 0)`
    }

    /**
     * `picked` (one row: the ids a claim leases, and the last group it served) of the walk from the
     * cursor to the last group, then from the first group back to the cursor, with the room the
     * first part left. A tenant is asked for its room once per claim (the cursor's tenant, visited
     * at both ends, carries it over), before any of its jobs is leased. One row of ids, not a row
     * per id: the update then finds its rows by primary key, where a join on an estimated row count
     * may (with a generic plan) hash the whole table.
     */
    const inTurn = (limit: number, from: readonly [string, string], at: Date) => {
      const noIds = sql`ARRAY(SELECT id FROM ${table} WHERE false)`
      const upToCursor = within === undefined
        ? sql`AND ${tenantKey} <= ${from[0]}`
        : sql`AND (${tenantKey}, ${sql(within.column)}) <= (${from[0]}::text, ${from[1]}::text)`
      const afterCursor = walk(
        "after_cursor",
        sql`SELECT ${from[0]}::text, ${from[1]}::text, 0, 1, ${limit}::int, NULL::int, ${noIds}`,
        sql``,
        from,
        at
      )
      const wrapped = walk(
        "wrapped",
        sql`(SELECT ''::text, ''::text, n, 1, total, first_left, ${noIds} FROM after_cursor ORDER BY n DESC LIMIT 1)`,
        upToCursor,
        from,
        at
      )
      return sql`RECURSIVE ${afterCursor}, ${wrapped}, picked AS MATERIALIZED (SELECT
        ARRAY(SELECT unnest(ids) FROM after_cursor UNION ALL SELECT unnest(ids) FROM wrapped) AS ids,
        (SELECT ARRAY[g1, g2] FROM (SELECT g1, g2, n, ids FROM after_cursor UNION ALL SELECT g1, g2, n, ids FROM wrapped) AS steps
          WHERE cardinality(ids) > 0 ORDER BY n DESC LIMIT 1) AS last)`
    }

    // PostgreSQL sends it at commit, so a worker never wakes before the rows exist.
    const wake = sql`SELECT pg_notify(${definition.channel}, 'queued')`.pipe(Effect.asVoid, Effect.orDie)

    const enqueueing = (job: New, at: Date): QueuedJobs => {
      const row = definition.row(job, at)
      const columns = Object.keys(row)
      return {
        // A SELECT rather than VALUES so that a WHERE can gate it; PostgreSQL types its parameters by
        // the columns they fill, as it does VALUES' (one row only: a UNION of rows would type them text).
        insertWhen: (condition) =>
          sql`INSERT INTO ${table} (${sql.csv(columns.map((column) => sql`${sql(column)}`))})
            SELECT ${sql.csv(columns.map((column) => sql`${row[column]}`))} WHERE ${condition}`,
        channel: definition.channel
      }
    }

    const enqueue = (jobs: ReadonlyArray<New>) =>
      Effect.gen(function*() {
        if (!Arr.isReadonlyArrayNonEmpty(jobs)) return
        const at = yield* now
        // One round trip: the insert and the wake-up (sent at commit) in a single statement.
        yield* sql`
          WITH queued AS (INSERT INTO ${table} ${
          sql.insert(Arr.map(jobs, (job) => definition.row(job, at)))
        } RETURNING 1)
          SELECT pg_notify(${definition.channel}, 'queued') FROM (SELECT 1 FROM queued LIMIT 1) AS one`
      }).pipe(Effect.orDie, repositorySpan(`Queue.enqueue`, { attributes: { "queue.name": definition.name } }))

    const claim = (limit: number, lease: Duration.Duration) =>
      Effect.gen(function*() {
        const at = yield* now
        const leaseUntil = new Date(at.getTime() + Duration.toMillis(lease))
        // Each claim gets its own token: a job re-claimed after its lease ran out must not pass
        // for the old claim, even on the same instance.
        const token = `${instanceId}:${randomUUID()}`
        const extra = definition.onClaim ? sql`, ${definition.onClaim(sql, at)}` : sql``
        const also = definition.alsoOnClaim ? sql`, also AS (${definition.alsoOnClaim(sql, at)})` : sql``
        const rows = yield* sql`
          WITH ${inTurn(limit, yield* Ref.get(cursor), at)}, claimed AS (
            UPDATE ${table} SET locked_by = ${token}, locked_until = ${leaseUntil}, attempts = attempts + 1,
                   updated_at = ${at} ${extra}
            FROM picked WHERE ${table}.id = ANY(picked.ids)
            RETURNING ${table}.*, picked.last[1] AS fair_g1, picked.last[2] AS fair_g2) ${also}
          SELECT * FROM claimed`
        // The next claim starts after the last group this one served.
        if (rows.length > 0) yield* Ref.set(cursor, [String(rows[0]!["fairG1"]), String(rows[0]!["fairG2"])])
        return yield* decode(rows)
      }).pipe(
        Effect.orDie,
        repositorySpan("Queue.claim", { attributes: { "queue.name": definition.name, "queue.batch": limit } })
      )

    /** The one fenced write: the job's row changes only while this claim holds it (then its id is returned). */
    const releasing = (job: Job, assignments: Record<string, unknown>, at: Date) =>
      sql`
        UPDATE ${table} SET ${sql.update({ ...assignments, lockedBy: null, lockedUntil: null, updatedAt: at })}
        WHERE id = ${job.id} AND locked_by = ${job.lockedBy} AND ${state} = 'pending'
        RETURNING id`

    const release = (job: Job, assignments: Record<string, unknown>) =>
      Effect.gen(function*() {
        const rows = yield* releasing(job, assignments, yield* now)
        if (rows.length !== 1) return yield* new LeaseLost()
      }).pipe(dieOnSqlError)

    const endState = (end: JobEnd) =>
      "final" in end ? { [definition.stateColumn]: end.final } : { [definition.dueColumn]: end.runAt }

    const complete = (job: Job, final: string, fields: Record<string, unknown> = {}) =>
      release(job, { ...fields, ...endState({ final }) })

    const retryAt = (job: Job, runAt: Date, fields: Record<string, unknown> = {}) =>
      release(job, { ...fields, ...endState({ runAt }) })

    const ending = (job: Job, end: JobEnd, at: Date, fields: Record<string, unknown> = {}) =>
      releasing(job, { ...fields, ...endState(end) }, at)

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
          SET ${
          sql.update({
            ...fields,
            [definition.stateColumn]: "pending",
            [definition.dueColumn]: at,
            lockedBy: null,
            lockedUntil: null,
            updatedAt: at
          })
        }
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

    const decodeBacklog = Schema.decodeUnknownEffect(Backlog)
    const backlog = Effect.gen(function*() {
      const at = yield* now
      // The oldest from the due index (one row, however long the backlog); the count reads the
      // pending rows' index, and is capped so a huge backlog (an outage's) costs a bounded scan.
      const [row] = yield* sql`
        SELECT
          (SELECT count(*)::int FROM (SELECT 1 FROM ${table} WHERE ${pending} LIMIT ${BACKLOG_COUNT_CAP}) AS capped) AS depth,
          (SELECT ${due} FROM ${table} WHERE ${pending} AND ${due} <= ${at} ORDER BY ${due} LIMIT 1) AS oldest_due`
      const { depth, oldestDue } = yield* Effect.orDie(decodeBacklog(row))
      return {
        depth,
        oldestAgeSeconds: oldestDue === null ? 0 : Math.max(0, (at.getTime() - oldestDue.getTime()) / 1000)
      }
    }).pipe(dieOnSqlError)

    return {
      name: definition.name,
      channel: definition.channel,
      backlog,
      enqueue,
      enqueueing,
      wake,
      claim,
      complete,
      retryAt,
      ending,
      renew,
      requeue,
      cancelWaiting
    } satisfies LeasedQueue<Job, New>
  })
