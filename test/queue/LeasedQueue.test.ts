/**
 * The shared leased queue (src/queue/) on its own, over a table of its own, on both databases:
 * batch claims, per-tenant fairness, caps per tenant and per group across instances, fencing by
 * the claim's token, lease renewal, and a worker pool that keeps a long job's lease while it runs.
 */
import { expect, layer } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { AppConfigTest } from "../../src/Config.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { LeaseFields, makeLeasedQueue } from "../../src/queue/LeasedQueue.js"
import { runWorkerPool } from "../../src/queue/WorkerPool.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"

const START = Date.parse("2026-11-10T12:00:00Z")
const LEASE = Duration.seconds(60)

// A table of its own per run, so no other test's jobs (nor these) are claimed by the wrong queue.
const table = `queue_test_${Math.random().toString(36).slice(2, 10)}`

const TestJob = Schema.Struct({ ...LeaseFields, id: Schema.Number, tenantId: Schema.String, payload: Schema.String })
type TestJob = typeof TestJob.Type
interface NewTestJob {
  readonly tenantId: string
  readonly payload: string
}

const testQueue = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS ${sql(table)} (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL,
      payload text NOT NULL,
      state text NOT NULL DEFAULT 'pending',
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      locked_by text,
      locked_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  return yield* makeLeasedQueue<TestJob, NewTestJob>({
    name: "test",
    table,
    stateColumn: "state",
    dueColumn: "run_at",
    job: TestJob,
    channel: "etd_test_jobs",
    row: (job, at) => ({ ...job, runAt: at, createdAt: at, updatedAt: at }),
    fairness: { tenant: { column: "tenant_id", cap: 100 } }
  })
})

let counter = 0
/** `count` jobs of a new tenant. */
const tenantWithJobs = (count: number) => {
  counter += 1
  // Zero-padded, so the tenants' text order is their creation order.
  const tenantId = `ten_${String(counter).padStart(4, "0")}`
  return { tenantId, jobs: Array.from({ length: count }, (_, i) => ({ tenantId, payload: `${tenantId}/${i}` })) }
}

/** Finishes every job left by an earlier test of the file. */
const drained = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE ${sql(table)} SET state = 'done'`)

/** The queue with no job left from earlier tests, the test clock at START. */
const freshQueue = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  const queue = yield* testQueue
  yield* drained
  return queue
})

const config = AppConfigTest({ queue: { instanceId: "queue-test", shutdownGrace: Duration.seconds(5) } })

// Caps: a table whose jobs of a tenant fall into groups (as deliveries fall into endpoints).
const cappedTable = `queue_caps_${Math.random().toString(36).slice(2, 10)}`
const TENANT_CAP = 3
const GROUP_CAP = 2
const CappedJob = Schema.Struct({ ...LeaseFields, id: Schema.Number, tenantId: Schema.String, groupKey: Schema.String })
type CappedJob = typeof CappedJob.Type

/** One instance's view of the capped queue: each call is another instance (a cursor of its own). */
const cappedQueue = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS ${sql(cappedTable)} (
      id bigserial PRIMARY KEY,
      tenant_id text NOT NULL,
      group_key text NOT NULL,
      state text NOT NULL DEFAULT 'pending',
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      locked_by text,
      locked_until timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  return yield* makeLeasedQueue<CappedJob, { readonly tenantId: string; readonly groupKey: string }>({
    name: "capped",
    table: cappedTable,
    stateColumn: "state",
    dueColumn: "run_at",
    job: CappedJob,
    channel: "etd_test_capped_jobs",
    row: (job, at) => ({ ...job, runAt: at, createdAt: at, updatedAt: at }),
    fairness: { tenant: { column: "tenant_id", cap: TENANT_CAP }, within: { column: "group_key", cap: GROUP_CAP } }
  })
})

/** A new tenant with `perGroup` jobs in each of `groups` groups. */
const cappedTenant = (groups: number, perGroup: number) => {
  const { tenantId } = tenantWithJobs(0)
  const jobs = Array.from(
    { length: groups * perGroup },
    (_, i) => ({ tenantId, groupKey: `${tenantId}/g${i % groups}` })
  )
  return { tenantId, jobs }
}

/** The leases held now, per tenant and per group, as the database counts them. */
const leasesNow = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const at = new Date(yield* Clock.currentTimeMillis)
  const rows = yield* sql<{ tenantId: string; groupKey: string }>`
    SELECT tenant_id, group_key FROM ${sql(cappedTable)} WHERE state = 'pending' AND locked_until > ${at}`
  const count = (key: (row: { tenantId: string; groupKey: string }) => string) =>
    rows.reduce((counts, row) => counts.set(key(row), (counts.get(key(row)) ?? 0) + 1), new Map<string, number>())
  return { perTenant: count((row) => row.tenantId), perGroup: count((row) => row.groupKey) }
})

const expectWithinCaps = (leases: Effect.Success<typeof leasesNow>) => {
  expect(Math.max(0, ...leases.perTenant.values())).toBeLessThanOrEqual(TENANT_CAP)
  expect(Math.max(0, ...leases.perGroup.values())).toBeLessThanOrEqual(GROUP_CAP)
}

/** Two instances on a capped queue with no job left from earlier tests, the test clock at START. */
const twoInstances = Effect.gen(function*() {
  yield* TestClock.setTime(START)
  const first = yield* cappedQueue
  const second = yield* cappedQueue
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE ${sql(cappedTable)} SET state = 'done'`
  return [first, second] as const
})

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `leased queue (${database})`,
    (it) => {
      it.effect("claims in batches, counting the attempt, and never hands a leased job out twice", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          const { jobs } = tenantWithJobs(5)
          yield* queue.enqueue(jobs)
          const first = yield* queue.claim(3, LEASE)
          const second = yield* queue.claim(3, LEASE)
          expect(first).toHaveLength(3)
          expect(second).toHaveLength(2)
          expect(new Set([...first, ...second].map((job) => job.payload)).size).toBe(5)
          expect([...first, ...second].every((job) => job.attempts === 1)).toBe(true)
          expect(yield* queue.claim(3, LEASE)).toEqual([])
          // Once the lease runs out, the jobs are due again and the attempt is counted again.
          yield* TestClock.adjust(Duration.sum(LEASE, Duration.seconds(1)))
          const retaken = yield* queue.claim(10, LEASE)
          expect(retaken).toHaveLength(5)
          expect(retaken.every((job) => job.attempts === 2)).toBe(true)
        }).pipe(Effect.provide(config)))

      it.effect("batches claimed at the same time never share a job; settles in one statement are fenced per job", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          yield* queue.enqueue(tenantWithJobs(12).jobs)
          // On PostgreSQL these run on two connections at once (SKIP LOCKED keeps them apart).
          const batches = yield* Effect.all(Array.from({ length: 4 }, () => queue.claim(5, LEASE)), {
            concurrency: "unbounded"
          })
          const ids = batches.flat().map((job) => job.id)
          expect(ids).toHaveLength(12)
          expect(new Set(ids).size).toBe(12)
          const sql = yield* SqlClient.SqlClient
          const [first, second] = batches.flat()
          const ended = yield* sql`${queue.ending(first!, { final: "done" }, new Date(START))}`
          expect(ended).toEqual([{ id: first!.id }])
          // Ended once: the same claim's second end finds no job, as does a retry after it.
          expect(yield* sql`${queue.ending(first!, { runAt: new Date(START) }, new Date(START))}`).toEqual([])
          expect(yield* sql`${queue.ending(second!, { runAt: new Date(START + 5_000) }, new Date(START))}`).toEqual([
            { id: second!.id }
          ])
          const stateOf = (id: number) =>
            Effect.map(
              sql<{ state: string; lockedBy: string | null }>`SELECT state, locked_by FROM ${
                sql(table)
              } WHERE id = ${id}`,
              (rows) => rows[0]
            )
          expect(yield* stateOf(first!.id)).toEqual({ state: "done", lockedBy: null })
          expect(yield* stateOf(second!.id)).toEqual({ state: "pending", lockedBy: null })
        }).pipe(Effect.provide(config)))

      it.effect("its backlog for the metrics: jobs waiting or in hand, and how long the oldest due one has waited", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          expect(yield* queue.backlog).toEqual({ depth: 0, oldestAgeSeconds: 0 })
          yield* queue.enqueue(tenantWithJobs(2).jobs)
          yield* TestClock.adjust("30 seconds")
          yield* queue.enqueue(tenantWithJobs(1).jobs)
          yield* TestClock.adjust("10 seconds")
          expect(yield* queue.backlog).toEqual({ depth: 3, oldestAgeSeconds: 40 })
          // A job in hand still counts (it is not done); one completed does not.
          const [claimed] = yield* queue.claim(1, LEASE)
          expect((yield* queue.backlog).depth).toBe(3)
          yield* queue.complete(claimed!, "done")
          expect((yield* queue.backlog).depth).toBe(2)
        }).pipe(Effect.provide(config)))

      it.effect("a tenant behind another's long backlog is served by the next claim", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          const busy = tenantWithJobs(40)
          const quiet = tenantWithJobs(1)
          yield* queue.enqueue(busy.jobs)
          yield* TestClock.adjust("1 second")
          // Queued behind the busy tenant's whole backlog: oldest-first would reach it 41st.
          yield* queue.enqueue(quiet.jobs)
          yield* TestClock.adjust("1 second")
          const first = yield* queue.claim(4, LEASE)
          const second = yield* queue.claim(4, LEASE)
          const tenantsOf = (jobs: ReadonlyArray<TestJob>) => jobs.map((job) => job.tenantId)
          expect(tenantsOf(first)).toEqual(Array(4).fill(busy.tenantId))
          // The next claim starts with the quiet tenant, and fills the batch with the busy one's oldest.
          expect(tenantsOf(second).sort()).toEqual([busy.tenantId, busy.tenantId, busy.tenantId, quiet.tenantId])
          expect([...first, ...second].filter((job) => job.tenantId === busy.tenantId).map((job) => job.payload).sort())
            .toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `${busy.tenantId}/${i}`).sort())
        }).pipe(Effect.provide(config)))

      it.effect("single claims serve the tenants in turn", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          const tenants = [tenantWithJobs(5), tenantWithJobs(5), tenantWithJobs(5)]
          for (const { jobs } of tenants) yield* queue.enqueue(jobs)
          yield* TestClock.adjust("1 second")
          const served: Array<string> = []
          for (let i = 0; i < 6; i++) served.push(...(yield* queue.claim(1, LEASE)).map((job) => job.tenantId))
          // Round robin: each tenant once before any twice, twice before any thrice.
          expect(new Set(served.slice(0, 3)).size).toBe(3)
          expect(new Set(served.slice(3, 6)).size).toBe(3)
        }).pipe(Effect.provide(config)))

      it.effect("writes are fenced by the claim: a worker whose lease was taken over gets LeaseLost and changes nothing", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          const { jobs } = tenantWithJobs(1)
          yield* queue.enqueue(jobs)
          const [stale] = yield* queue.claim(1, LEASE)
          yield* TestClock.adjust(Duration.sum(LEASE, Duration.seconds(1)))
          const [current] = yield* queue.claim(1, LEASE)
          expect(current!.id).toBe(stale!.id)
          for (
            const write of [
              queue.complete(stale!, "done"),
              queue.retryAt(stale!, new Date(START)),
              queue.renew(stale!, LEASE)
            ]
          ) {
            expect((yield* Effect.flip(write))._tag).toBe("LeaseLost")
          }
          const sql = yield* SqlClient.SqlClient
          // The end another repository's statement carries: nothing for the stale claim, so the
          // statement's other writes (gated on it) are not made either.
          expect(yield* sql`${queue.ending(stale!, { final: "done" }, new Date(START))}`).toEqual([])
          const [kept] = yield* sql`SELECT state, locked_by FROM ${sql(table)} WHERE id = ${current!.id}`
          expect(kept).toEqual({ state: "pending", lockedBy: current!.lockedBy })
          yield* queue.complete(current!, "done")
          const [row] = yield* sql`SELECT state, locked_by FROM ${sql(table)} WHERE id = ${current!.id}`
          expect(row).toEqual({ state: "done", lockedBy: null })
        }).pipe(Effect.provide(config)))

      it.effect("renewing the lease keeps the job from being taken over; retryAt makes it due later", () =>
        Effect.gen(function*() {
          const queue = yield* freshQueue
          const { jobs } = tenantWithJobs(1)
          yield* queue.enqueue(jobs)
          const [job] = yield* queue.claim(1, LEASE)
          yield* TestClock.adjust("50 seconds")
          yield* queue.renew(job!, LEASE)
          yield* TestClock.adjust("50 seconds")
          expect(yield* queue.claim(1, LEASE)).toEqual([])
          yield* queue.retryAt(job!, new Date(START + 200_000))
          expect(yield* queue.claim(1, LEASE)).toEqual([])
          yield* TestClock.adjust("101 seconds")
          const [again] = yield* queue.claim(1, LEASE)
          expect(again!.attempts).toBe(2)
        }).pipe(Effect.provide(config)))
    }
  )

  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `leased queue caps (${database})`,
    (it) => {
      it.effect("two instances never lease more of a tenant, or of a group, than its cap, and serve the other tenants meanwhile", () =>
        Effect.gen(function*() {
          const [first, second] = yield* twoInstances
          const busy = cappedTenant(3, 10)
          const quiet = cappedTenant(1, 1)
          yield* first.enqueue(busy.jobs)
          yield* first.enqueue(quiet.jobs)
          yield* TestClock.adjust("1 second")
          // Two of the first group (its cap), one of the second (the tenant's cap), then the other tenant.
          const claimed = yield* first.claim(8, LEASE)
          expect(claimed.filter((job) => job.tenantId === busy.tenantId).map((job) => job.groupKey).sort())
            .toEqual([`${busy.tenantId}/g0`, `${busy.tenantId}/g0`, `${busy.tenantId}/g1`])
          expect(claimed.filter((job) => job.tenantId === quiet.tenantId)).toHaveLength(1)
          // The other instance counts the first one's leases: the busy tenant has no room left.
          expect(yield* second.claim(8, LEASE)).toEqual([])
          expectWithinCaps(yield* leasesNow)
          // A job that ends frees one place, which either instance may fill, once.
          yield* first.complete(claimed.find((job) => job.groupKey === `${busy.tenantId}/g0`)!, "done")
          const refill = yield* second.claim(8, LEASE)
          expect(refill.map((job) => job.tenantId)).toEqual([busy.tenantId])
          expect(yield* first.claim(8, LEASE)).toEqual([])
          expectWithinCaps(yield* leasesNow)
          // The leases of an instance that died stop counting once they run out.
          yield* TestClock.adjust(Duration.sum(LEASE, Duration.seconds(1)))
          const retaken = yield* second.claim(8, LEASE)
          expect(retaken.filter((job) => job.tenantId === busy.tenantId)).toHaveLength(TENANT_CAP)
          expectWithinCaps(yield* leasesNow)
        }).pipe(Effect.provide(config)))

      it.effect("claims racing on two instances hold the caps (each tenant's room is counted under its lock)", () =>
        Effect.gen(function*() {
          const [first, second] = yield* twoInstances
          const tenants = [cappedTenant(3, 10), cappedTenant(2, 10)]
          for (const { jobs } of tenants) yield* first.enqueue(jobs)
          yield* TestClock.adjust("1 second")
          // On PostgreSQL each claim runs on a connection of its own, at the same time as the others.
          for (let round = 0; round < 5; round++) {
            const claims = Array.from(
              { length: 16 },
              (_, i) => (i % 2 === 0 ? first : second).claim(1 + (i % 3), LEASE)
            )
            yield* Effect.all(claims, { concurrency: "unbounded" })
            const leases = yield* leasesNow
            expectWithinCaps(leases)
            // Every tenant filled its cap: the claims did take jobs, they only did not take too many.
            for (const { tenantId } of tenants) expect(leases.perTenant.get(tenantId)).toBe(TENANT_CAP)
            yield* TestClock.adjust(Duration.sum(LEASE, Duration.seconds(1)))
          }
        }).pipe(Effect.provide(config)))
    }
  )

  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `worker pool (${database})`,
    (it) => {
      it.effect("an idle pool claims once per poll interval, not once per slot, and the poll finds jobs queued without a notification", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const queue = yield* testQueue
          yield* drained
          let claims = 0
          const counted = {
            ...queue,
            claim: (limit: number, lease: Duration.Duration) =>
              Effect.suspend(() => (claims++, queue.claim(limit, lease)))
          }
          const handled: Array<string> = []
          const pool = yield* Effect.forkChild(
            Effect.scoped(Effect.gen(function*() {
              yield* runWorkerPool({
                queue: counted,
                concurrency: 4,
                pollInterval: Duration.millis(50),
                lease: LEASE,
                grace: Duration.seconds(1),
                handle: (job) => Effect.sync(() => handled.push(job.payload))
              })
              return yield* Effect.never
            })).pipe(Effect.provide(Readiness.layer))
          )
          yield* Effect.sleep("525 millis")
          // One claim at start, then one per interval (about ten, fewer on a busy machine); a poll
          // per slot would make about forty.
          expect(claims).toBeGreaterThanOrEqual(5)
          expect(claims).toBeLessThanOrEqual(1 + 10 + 3)
          // Written straight into the table: no NOTIFY, so only the poll can find it.
          const { tenantId } = tenantWithJobs(0)
          yield* sql`INSERT INTO ${sql(table)} (tenant_id, payload, run_at, created_at, updated_at)
          VALUES (${tenantId}, 'unannounced', now(), now(), now())`
          for (let i = 0; i < 40 && handled.length === 0; i++) yield* Effect.sleep("25 millis")
          yield* Fiber.interrupt(pool)
          expect(handled).toEqual(["unannounced"])
        }).pipe(TestClock.withLive, Effect.provide(config)))

      it.effect("a pool prefetches once per claim for all its jobs; a failed prefetch leaves each job to read for itself", () =>
        Effect.gen(function*() {
          const queue = yield* testQueue
          yield* drained
          const runPool = (prefetch: (jobs: ReadonlyArray<TestJob>) => Effect.Effect<ReadonlyMap<number, string>>) =>
            Effect.gen(function*() {
              const { jobs } = tenantWithJobs(6)
              yield* queue.enqueue(jobs)
              const batches: Array<number> = []
              const handled: Array<string> = []
              const pool = yield* Effect.forkChild(
                Effect.scoped(Effect.gen(function*() {
                  yield* runWorkerPool({
                    queue,
                    concurrency: 8,
                    pollInterval: Duration.millis(50),
                    lease: LEASE,
                    grace: Duration.seconds(1),
                    prefetch: (claimed) => Effect.suspend(() => (batches.push(claimed.length), prefetch(claimed))),
                    handle: (job, prefetched) =>
                      Effect.andThen(
                        Effect.sync(() =>
                          handled.push(prefetched === undefined ? "read itself" : prefetched.get(job.id)!)
                        ),
                        queue.complete(job, "done")
                      )
                  })
                  return yield* Effect.never
                })).pipe(Effect.provide(Readiness.layer))
              )
              for (let i = 0; i < 100 && handled.length < 6; i++) yield* Effect.sleep("20 millis")
              yield* Fiber.interrupt(pool)
              return { batches, handled, payloads: jobs.map((job) => job.payload) }
            })

          // Enqueued before the pool starts: its first claim takes all six, and one prefetch serves them.
          const served = yield* runPool((claimed) =>
            Effect.succeed(new Map(claimed.map((job) => [job.id, `prefetched ${job.payload}`])))
          )
          expect(served.batches).toEqual([6])
          expect(served.handled.sort()).toEqual(served.payloads.map((payload) => `prefetched ${payload}`).sort())

          const fallback = yield* runPool(() => Effect.die("the database went away"))
          expect(fallback.handled).toEqual(Array.from({ length: 6 }, () => "read itself"))
        }).pipe(TestClock.withLive, Effect.provide(config)))

      it.effect("a job's end wakes the pool: work held back by a cap is taken at once, not at the next poll", () =>
        Effect.gen(function*() {
          const queue = yield* cappedQueue
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ${sql(cappedTable)} SET state = 'done'`
          // One group: two of its five jobs at a time (its cap), though the pool has four slots.
          const { jobs } = cappedTenant(1, 5)
          yield* queue.enqueue(jobs)
          const started = Date.now()
          const handled: Array<number> = []
          let running = 0
          let mostRunning = 0
          const pool = yield* Effect.forkChild(
            Effect.scoped(Effect.gen(function*() {
              yield* runWorkerPool({
                queue,
                concurrency: 4,
                // Far beyond the test: only a wake-up can start the jobs that wait for a place.
                pollInterval: Duration.seconds(30),
                lease: LEASE,
                grace: Duration.seconds(1),
                handle: (job) =>
                  Effect.sync(() => (running++, mostRunning = Math.max(mostRunning, running))).pipe(
                    Effect.andThen(Effect.sleep("100 millis")),
                    // Counted out before its lease is given back: the cap is on leases, and a job claimed
                    // the moment this one completes must not overlap it in the count.
                    Effect.andThen(Effect.sync(() => running--)),
                    Effect.andThen(queue.complete(job, "done")),
                    Effect.ensuring(Effect.sync(() => handled.push(Date.now() - started)))
                  )
              })
              return yield* Effect.never
            })).pipe(Effect.provide(Readiness.layer))
          )
          for (let i = 0; i < 100 && handled.length < 5; i++) yield* Effect.sleep("20 millis")
          yield* Fiber.interrupt(pool)
          expect(handled).toHaveLength(5)
          expect(mostRunning).toBe(GROUP_CAP)
          expect(Math.max(...handled)).toBeLessThan(2000)
        }).pipe(TestClock.withLive, Effect.provide(config)))

      it.effect("a job whose handler fails gives its lease back: its tenant's other jobs do not wait for the lease to run out", () =>
        Effect.gen(function*() {
          const queue = yield* cappedQueue
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ${sql(cappedTable)} SET state = 'done'`
          // One group of three jobs, two at a time (its cap); the first two fail on their first attempt.
          const { jobs } = cappedTenant(1, 3)
          yield* queue.enqueue(jobs)
          let failures = 0
          const done: Array<number> = []
          const pool = yield* Effect.forkChild(
            Effect.scoped(Effect.gen(function*() {
              yield* runWorkerPool({
                queue,
                concurrency: 4,
                pollInterval: Duration.millis(50),
                lease: LEASE,
                grace: Duration.seconds(1),
                handle: (job) =>
                  failures < 2 && job.attempts === 1
                    ? Effect.andThen(Effect.sync(() => failures++), Effect.die("the database went away"))
                    : Effect.andThen(queue.complete(job, "done"), Effect.sync(() => done.push(job.attempts)))
              })
              return yield* Effect.never
            })).pipe(Effect.provide(Readiness.layer))
          )
          for (let i = 0; i < 150 && done.length < 3; i++) yield* Effect.sleep("20 millis")
          yield* Fiber.interrupt(pool)
          // The failed two again after a pause of a second (their first attempt), the third at once:
          // holding their leases (a minute), they would have kept it waiting.
          expect(failures).toBe(2)
          expect(done.sort()).toEqual([1, 2, 2])
        }).pipe(TestClock.withLive, Effect.provide(config)))

      it.effect("a job that runs longer than its lease keeps it: no other worker takes it over meanwhile", () =>
        Effect.gen(function*() {
          const queue = yield* testQueue
          yield* drained
          const { jobs } = tenantWithJobs(1)
          yield* queue.enqueue(jobs)
          const lease = Duration.millis(600)
          const handled: Array<number> = []
          const pool = yield* Effect.forkChild(
            Effect.scoped(Effect.gen(function*() {
              yield* runWorkerPool({
                queue,
                concurrency: 1,
                pollInterval: Duration.millis(20),
                lease,
                grace: Duration.seconds(1),
                // Three leases long: without renewal the job would be claimable again after the first.
                handle: (job) =>
                  Effect.sync(() => handled.push(job.attempts)).pipe(Effect.andThen(Effect.sleep("1800 millis")))
              })
              return yield* Effect.never
            })).pipe(Effect.provide(Readiness.layer))
          )
          // Another instance polling the same queue meanwhile.
          let stolen = Option.none<TestJob>()
          for (let i = 0; i < 12 && Option.isNone(stolen); i++) {
            yield* Effect.sleep("150 millis")
            stolen = Option.fromNullishOr((yield* queue.claim(1, lease))[0])
          }
          yield* Fiber.interrupt(pool)
          expect(handled).toEqual([1])
          expect(Option.isNone(stolen)).toBe(true)
          // Real time: the lease is renewed by the pool's own clock, against the database's rows.
        }).pipe(TestClock.withLive, Effect.provide(config)))
    }
  )
}
