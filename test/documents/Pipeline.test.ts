/**
 * The issuance pipeline with scripted authorities: retries on the Schedule (driven by TestClock),
 * reconciliation before every retry, final rejections, the bounded retry window, cancellation,
 * crash recovery through leases, two worker pools sharing one queue, and graceful shutdown.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Duration, Effect, Exit, Fiber, Layer, Option, Result, Scope } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { TestClock } from "effect/testing"
import {
  AuthorityRejected,
  AuthorityTimeout,
  AuthorityUnavailable,
  TaxAuthorities
} from "../../src/authority/TaxAuthority.js"
import { type AppConfigShape, AppConfigTest } from "../../src/Config.js"
import { OutboxLive } from "../../src/credentials/MailSealingLive.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import { makeAcceptance } from "../../src/documents/Acceptance.js"
import type { NewDocument } from "../../src/documents/Api.js"
import { DocumentRepo } from "../../src/documents/DocumentRepo.js"
import { DocumentService, type Issuer } from "../../src/documents/DocumentService.js"
import { Idempotency } from "../../src/documents/Idempotency.js"
import { IssuanceQueue } from "../../src/documents/IssuanceQueue.js"
import { IssuanceWorkersLive, makeIssuanceWorker } from "../../src/documents/IssuanceWorker.js"
import { NoteFileRepo } from "../../src/documents/NoteFileRepo.js"
import { asId } from "../../src/domain/Ids.js"
import { normalizeEmail } from "../../src/domain/User.js"
import { delayAfter, exponentialBackoff } from "../../src/queue/Backoff.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import { claimOne } from "../support/claimOne.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { uniqueEmail } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"
import { consultingService } from "../support/samples.js"
import { type CancelScript, makeScriptedAuthority, type SubmitScript } from "../support/ScriptedAuthority.js"
import { cnpj } from "../support/taxIds.js"
import { unusedGoodsAuthorities } from "../support/unusedGoodsAuthorities.js"

const START = Date.parse("2026-11-10T12:00:00Z")

const payload = (notes?: string, takerEmail?: string): NewDocument => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria Tomadora", ...(takerEmail === undefined ? {} : { email: takerEmail }) },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" },
  ...(notes ? { notes } : {})
})

const workerConfig = (instanceId: string, concurrency = 2): Partial<AppConfigShape> => ({
  queue: { instanceId, shutdownGrace: Duration.seconds(5) },
  issuance: { concurrency, pollInterval: Duration.millis(5), lease: Duration.seconds(60) }
})

/** The services of one instance, over a shared database, with scripted authorities. */
const instance = (
  scripts: { submit?: SubmitScript; cancel?: CancelScript } = {},
  overrides: Partial<AppConfigShape> = {},
  // The authority is a remote system: two instances of our service talk to the same one.
  shared?: { live: ReturnType<typeof makeScriptedAuthority>; sandbox: ReturnType<typeof makeScriptedAuthority> }
) => {
  const live = shared?.live ?? makeScriptedAuthority("production", scripts)
  const sandbox = shared?.sandbox ?? makeScriptedAuthority("homologation", scripts)
  const services = Layer.mergeAll(
    DocumentService.layer,
    DocumentRepo.layer,
    IssuanceQueue.layer,
    NoteFileRepo.layer,
    TenantService.layer,
    Readiness.layer
  ).pipe(
    Layer.provideMerge(EventLogLive),
    Layer.provideMerge(OutboxLive),
    Layer.provideMerge(Transaction.layer),
    Layer.provideMerge(
      Layer.succeed(TaxAuthorities, TaxAuthorities.fromEach({ live: live.authority, test: sandbox.authority }))
    ),
    Layer.provideMerge(unusedGoodsAuthorities),
    Layer.provideMerge(AppConfigTest({
      ...workerConfig("worker-a"),
      retry: { baseDelay: Duration.seconds(2), maxDelay: Duration.minutes(5), window: Duration.hours(1) },
      ...overrides
    }))
  )
  return { live, sandbox, services }
}

/** The next due issuance job, leased as the workers lease them. */
const nextJob = Effect.flatMap(IssuanceQueue, (queue: IssuanceQueue["Service"]) => claimOne(queue))

let tenantCounter = 0
const newTenant = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  tenantCounter += 1
  const id = asId(
    "tenant",
    `ten_pipeline${String(tenantCounter).padStart(6, "0")}${Math.random().toString(36).slice(2, 10)}`
  )
  yield* sql`
    INSERT INTO tenants (id, name, tax_id, monthly_quota, registration, created_at)
    VALUES (${id}, ${"Prestadora Ltda"}, ${cnpj()}, ${100}, ${JSON.stringify(completeRegistration)}::jsonb,
      ${new Date(START)})`
  return id
})

interface StatusRow {
  readonly status: string
  readonly attempts: number
  readonly lastError: unknown
  readonly rejection: unknown
  readonly cancellation: unknown
}

const documentStatus = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<StatusRow>`
      SELECT status, attempts, last_error, rejection, cancellation FROM documents WHERE id = ${id}`
    return row!
  })

const eventsOf = (documentId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ type: string }>`
      SELECT type FROM events WHERE data -> 'object' ->> 'id' = ${documentId} ORDER BY id`
    return rows.map((row) => row.type)
  })

/** The note mails queued for `email` (the queue groups mail by a hash of the address; the payload is sealed). */
const noteMailsTo = (email: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const recipientKey = bytesToHex(sha256(new TextEncoder().encode(normalizeEmail(email))))
    const [row] = yield* sql<{ count: number }>`
      SELECT count(*)::int AS count FROM mail_jobs WHERE template = 'taker_note' AND recipient_key = ${recipientKey}`
    return row!.count
  })

/** The text of every statement run where `recording` is the statement transformer. */
const statementRecorder = () => {
  const statements: Array<string> = []
  const recording = (statement: Statement.Statement<unknown>) =>
    Effect.sync(() => {
      statements.push(statement.compile()[0].replace(/\s+/g, " ").trim())
      return statement
    })
  return { recording, statements }
}

/**
 * A new tenant issuing with Idempotency-Keys at START: its issuer in `environment`, the replays
 * `onReplay` counts, and a statement recorder to provide where statements are counted.
 */
const keyedIssuing = (environment: Issuer["environment"]) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(START)
    const tenantId = yield* newTenant
    const replays = { count: 0 }
    return {
      tenantId,
      documents: yield* DocumentService,
      issuer: { tenantId, environment } satisfies Issuer,
      replays,
      onReplay: Effect.sync(() => void replays.count++),
      ...statementRecorder()
    }
  })

/** The queue is shared by this file's tests: one that only accepts leaves no job for the next one's worker. */
const dropJobsOf = (tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM document_jobs WHERE tenant_id = ${tenantId}`)

/** Wall-clock wait while the TestClock stands still (the database answers in real time). */
const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

const slowly = (delay: Duration.Input): SubmitScript => (_, __, authorize) =>
  Effect.andThen(Effect.sleep(delay), authorize)

describe("retry schedule", () => {
  it.effect("grows exponentially with jitter and is capped", () =>
    Effect.gen(function*() {
      const schedule = exponentialBackoff({ baseDelay: Duration.seconds(2), maxDelay: Duration.seconds(30) })
      const delays = yield* Effect.forEach([1, 2, 3, 8], (attempt) =>
        Effect.map(delayAfter(schedule, attempt), (delay) => Duration.toMillis(Option.getOrThrow(delay))))
      // Jitter keeps each delay within 80–120 % of 2 s × 2^(attempt-1); the cap wins later on.
      expect(delays[0]).toBeGreaterThanOrEqual(1600)
      expect(delays[0]).toBeLessThanOrEqual(2400)
      expect(delays[1]).toBeGreaterThanOrEqual(3200)
      expect(delays[1]).toBeLessThanOrEqual(4800)
      expect(delays[2]).toBeGreaterThanOrEqual(6400)
      expect(delays[2]).toBeLessThanOrEqual(9600)
      expect(delays[3]).toBe(30_000)
    }))
})

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 60_000 })(
    `issuance pipeline (${database})`,
    (it) => {
      it.effect("retries transient failures on the schedule, reconciling before each retry", () => {
        const { live, services } = instance({
          submit: (_, attempt, authorize) =>
            attempt <= 2
              ? Effect.fail(new AuthorityUnavailable({ message: "503 from the authority", status: 503 }))
              : authorize
        })
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const documents = yield* DocumentService
          const worker = yield* makeIssuanceWorker
          const doc = yield* documents.issue({ tenantId, environment: "live" }, payload(), undefined)

          yield* worker.process(Option.getOrThrow(yield* nextJob))
          const afterFirst = yield* documentStatus(doc.id)
          expect(afterFirst.status).toBe("submitting")
          expect(afterFirst.lastError).toMatchObject({ code: "authority_unavailable" })

          // Not due yet: the first retry waits about 2 s (jittered).
          expect(Option.isNone(yield* nextJob)).toBe(true)
          yield* TestClock.adjust("3 seconds")
          yield* worker.process(Option.getOrThrow(yield* nextJob))
          expect(Option.isNone(yield* nextJob)).toBe(true)
          yield* TestClock.adjust("5 seconds")
          yield* worker.process(Option.getOrThrow(yield* nextJob))

          const final = yield* documentStatus(doc.id)
          expect(final.status).toBe("authorized")
          expect(final.attempts).toBe(3)
          expect(live.calls.map((c) => c.op)).toEqual(["submit", "lookup", "submit", "lookup", "submit"])
          expect(yield* eventsOf(doc.id)).toEqual(["document.authorized"])
          yield* TestClock.adjust("1 hour")
          expect(Option.isNone(yield* nextJob)).toBe(true)
        }).pipe(Effect.provide(services))
      })

      it.effect("a rejection is final and never retried", () => {
        const { sandbox, services } = instance({
          submit: () => Effect.fail(new AuthorityRejected({ code: "E0310", message: "Invalid taker" }))
        })
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const worker = yield* makeIssuanceWorker
          const doc = yield* (yield* DocumentService).issue({ tenantId, environment: "test" }, payload(), undefined)
          yield* worker.process(Option.getOrThrow(yield* nextJob))
          const row = yield* documentStatus(doc.id)
          expect(row.status).toBe("rejected")
          expect(row.rejection).toEqual({ code: "E0310", message: "Invalid taker" })
          yield* TestClock.adjust("1 day")
          expect(Option.isNone(yield* nextJob)).toBe(true)
          expect(sandbox.calls.map((c) => c.op)).toEqual(["submit"])
          expect(yield* eventsOf(doc.id)).toEqual(["document.rejected"])
        }).pipe(Effect.provide(services))
      })

      it.effect("fails the document when the retry window runs out", () => {
        const { services } = instance(
          { submit: () => Effect.fail(new AuthorityUnavailable({ message: "down", status: 503 })) },
          { retry: { baseDelay: Duration.seconds(2), maxDelay: Duration.seconds(10), window: Duration.minutes(1) } }
        )
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const worker = yield* makeIssuanceWorker
          const doc = yield* (yield* DocumentService).issue({ tenantId, environment: "test" }, payload(), undefined)
          let seconds = 0
          while ((yield* documentStatus(doc.id)).status !== "failed" && seconds < 120) {
            const job = yield* nextJob
            if (Option.isSome(job)) yield* worker.process(job.value)
            yield* TestClock.adjust("1 second")
            seconds++
          }
          const row = yield* documentStatus(doc.id)
          expect(row.status).toBe("failed")
          expect(row.lastError).toMatchObject({ code: "authority_unavailable", message: "down" })
          // Given up within the one-minute window (the last delay would have crossed it).
          expect(seconds).toBeLessThanOrEqual(61)
          expect(row.attempts).toBeGreaterThan(3)
          expect(yield* eventsOf(doc.id)).toEqual(["document.failed"])
        }).pipe(Effect.provide(services))
      })

      it.effect("a timeout after the authority authorized is reconciled without a second submission", () => {
        const { live, services } = instance({
          submit: (_, attempt, authorize) =>
            attempt === 1
              ? Effect.andThen(authorize, Effect.fail(new AuthorityTimeout({ message: "no answer" })))
              : authorize
        })
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const worker = yield* makeIssuanceWorker
          const doc = yield* (yield* DocumentService).issue({ tenantId, environment: "live" }, payload(), undefined)
          yield* worker.process(Option.getOrThrow(yield* nextJob))
          expect((yield* documentStatus(doc.id)).status).toBe("submitting")
          yield* TestClock.adjust("1 minute")
          yield* worker.process(Option.getOrThrow(yield* nextJob))
          expect((yield* documentStatus(doc.id)).status).toBe("authorized")
          expect(live.calls.map((c) => c.op)).toEqual(["submit", "lookup"])
        }).pipe(Effect.provide(services))
      })

      it.effect("crash mid-flight: the lease expires, another instance reconciles, issued exactly once", () => {
        // The authority authorizes, but the instance dies before it hears back.
        const crashed = instance({ submit: (_, __, authorize) => Effect.andThen(authorize, Effect.never) })
        const restarted = instance({}, { ...workerConfig("worker-b", 1) }, crashed)
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const takerEmail = uniqueEmail("crash")
          const doc = yield* Effect.provide(
            Effect.flatMap(
              DocumentService,
              (documents) =>
                documents.issue({ tenantId, environment: "live" }, payload(undefined, takerEmail), undefined)
            ),
            crashed.services
          )
          const inFlight = yield* Effect.provide(
            Effect.gen(function*() {
              const worker = yield* makeIssuanceWorker
              const job = Option.getOrThrow(yield* nextJob)
              return yield* Effect.forkChild(worker.process(job))
            }),
            crashed.services
          )
          for (let i = 0; i < 200 && crashed.live.authorizedCount() === 0; i++) yield* realPause
          expect(crashed.live.authorizedCount()).toBe(1)
          yield* Fiber.interrupt(inFlight)

          // The new instance talks to the same authority (it is a remote system) but shares nothing else.
          yield* Effect.gen(function*() {
            const worker = yield* makeIssuanceWorker
            expect(Option.isNone(yield* nextJob)).toBe(true) // still leased by the dead instance
            yield* TestClock.adjust("61 seconds")
            const job = Option.getOrThrow(yield* nextJob)
            expect(job.attempts).toBe(2)
            yield* worker.process(job)
          }).pipe(Effect.provide(restarted.services))
          expect((yield* documentStatus(doc.id)).status).toBe("authorized")
          const submissionId = crashed.live.calls[0]!.submissionId
          expect(crashed.live.submissionsOf(submissionId)).toBe(1)
          expect(crashed.live.authorizedCount()).toBe(1)
          expect(yield* eventsOf(doc.id)).toEqual(["document.authorized"])
          // The taker's mail was queued once, with the outcome that the new instance wrote.
          expect(yield* noteMailsTo(takerEmail)).toBe(1)
        })
      })

      it.effect("an acceptance whose Idempotency-Key was taken over meanwhile (it looked dead) stores nothing", () => {
        const { services } = instance({})
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const idempotency = yield* Idempotency
          const scope = { tenantId, environment: "test" as const, key: "stalled" }
          const stalled = yield* idempotency.claim(scope, "same body")
          yield* TestClock.adjust("61 seconds")
          expect((yield* idempotency.claim(scope, "same body"))._tag).toBe("Claimed")
          if (stalled._tag !== "Claimed") return expect.fail("the first request claims the key")
          const acceptance = yield* makeAcceptance
          const refused = yield* Effect.flip(
            acceptance.accept({ tenantId, environment: "test" }, payload(), {
              _tag: "Claimed",
              scope,
              token: stalled.token
            })
          )
          expect(refused._tag).toBe("IdempotencyConflict")
          const sql = yield* SqlClient.SqlClient
          // No number drawn either: the series' next document still gets the number 1.
          const [stored] = yield* sql<{ documents: number; jobs: number; series: number }>`
            SELECT (SELECT count(*)::int FROM documents WHERE tenant_id = ${tenantId}) AS documents,
                   (SELECT count(*)::int FROM document_jobs WHERE tenant_id = ${tenantId}) AS jobs,
                   (SELECT count(*)::int FROM document_series WHERE tenant_id = ${tenantId}) AS series`
          expect(stored).toEqual({ documents: 0, jobs: 0, series: 0 })
        }).pipe(Effect.provide(Layer.provideMerge(Idempotency.layer, services)))
      })

      it.effect("a submission's claim marks its document submitting and counts the attempt, in the claim's statement", () => {
        const { services } = instance({})
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const worker = yield* makeIssuanceWorker
          const doc = yield* (yield* DocumentService).issue({ tenantId, environment: "test" }, payload(), undefined)
          const { recording, statements } = statementRecorder()
          const job = Option.getOrThrow(
            yield* nextJob.pipe(Effect.provideService(Statement.CurrentTransformer, recording))
          )
          expect(statements).toHaveLength(1)
          expect(yield* documentStatus(doc.id)).toMatchObject({ status: "submitting", attempts: 1 })
          statements.length = 0
          yield* worker.process(job).pipe(Effect.provideService(Statement.CurrentTransformer, recording))
          // No statement of the worker's marks the document again before the authority is called.
          expect(statements.filter((text) => text.includes("SET status = 'submitting'"))).toEqual([])
          expect(yield* documentStatus(doc.id)).toMatchObject({ status: "authorized", attempts: 1 })
        }).pipe(Effect.provide(services))
      })

      it.effect("a new Idempotency-Key is taken by the statement that stores the document, and replayed after", () => {
        const { services } = instance({})
        return Effect.gen(function*() {
          const { documents, issuer, onReplay, recording, replays, statements, tenantId } = yield* keyedIssuing("test")
          const first = yield* documents.issue(issuer, payload(), "one-statement", onReplay).pipe(
            Effect.provideService(Statement.CurrentTransformer, recording)
          )
          // The key, the number, the document, its job and the key's answer: one statement, no claim of its own.
          const keyed = statements.filter((text) => text.includes("idempotency_keys"))
          expect(keyed).toHaveLength(1)
          expect(keyed[0]).toMatch(/^WITH .*INSERT INTO documents .*INSERT INTO idempotency_keys/)

          const again = yield* documents.issue(issuer, payload(), "one-statement", onReplay)
          expect(again).toEqual(first)
          expect(replays.count).toBe(1)
          expect((yield* Effect.flip(documents.issue(issuer, payload("another body"), "one-statement")))._tag)
            .toBe("IdempotencyKeyReused")
          const sql = yield* SqlClient.SqlClient
          const [stored] = yield* sql<{ documents: number; last: number }>`
            SELECT (SELECT count(*)::int FROM documents WHERE tenant_id = ${tenantId}) AS documents,
                   (SELECT last_number FROM document_series WHERE tenant_id = ${tenantId}) AS last`
          expect(stored).toEqual({ documents: 1, last: 1 })
          yield* dropJobsOf(tenantId)
        }).pipe(Effect.provide(Layer.provideMerge(Idempotency.layer, services)))
      })

      it.effect("a refusal with a new Idempotency-Key is stored as the key's answer, the work done once", () => {
        const { services } = instance({})
        return Effect.gen(function*() {
          const { documents, issuer, onReplay, recording, replays, statements, tenantId } = yield* keyedIssuing("live")
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE tenants SET monthly_quota = 0 WHERE id = ${tenantId}`
          const refused = yield* Effect.flip(
            documents.issue(issuer, payload(), "over-quota", onReplay).pipe(
              Effect.provideService(Statement.CurrentTransformer, recording)
            )
          )
          expect(refused._tag).toBe("QuotaExceeded")
          // The quota was tried once: the refusal is the claimed key's answer, not a reason to try again.
          expect(statements.filter((text) => text.includes("INSERT INTO quota_usage"))).toHaveLength(1)
          expect((yield* Effect.flip(documents.issue(issuer, payload(), "over-quota", onReplay)))._tag)
            .toBe("QuotaExceeded")
          expect(replays.count).toBe(1)
          const [key] = yield* sql<{ responseStatus: number }>`
            SELECT response_status FROM idempotency_keys WHERE tenant_id = ${tenantId} AND key = 'over-quota'`
          expect(key?.responseStatus).toBeGreaterThanOrEqual(400)
        }).pipe(Effect.provide(Layer.provideMerge(Idempotency.layer, services)))
      })

      it.effect("concurrent requests with one new Idempotency-Key store one document and all get its answer", () => {
        const { services } = instance({})
        return Effect.gen(function*() {
          const { documents, issuer, onReplay, replays, tenantId } = yield* keyedIssuing("test")
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, () => documents.issue(issuer, payload(), "raced", onReplay).pipe(Effect.result)),
            { concurrency: "unbounded" }
          )
          const ids = new Set(
            answers.map((answer) => Result.isSuccess(answer) ? answer.success.id : answer.failure._tag)
          )
          // A request still in flight after a whole lease would be a 409; none is here.
          expect([...ids]).toHaveLength(1)
          expect([...ids][0]).toMatch(/^doc_/)
          expect(replays.count).toBe(7)
          const sql = yield* SqlClient.SqlClient
          const [stored] = yield* sql<{ documents: number; jobs: number; last: number }>`
            SELECT (SELECT count(*)::int FROM documents WHERE tenant_id = ${tenantId}) AS documents,
                   (SELECT count(*)::int FROM document_jobs WHERE tenant_id = ${tenantId}) AS jobs,
                   (SELECT last_number FROM document_series WHERE tenant_id = ${tenantId}) AS last`
          // No number drawn by the requests that found the key taken: their statement wrote nothing.
          expect(stored).toEqual({ documents: 1, jobs: 1, last: 1 })
          yield* dropJobsOf(tenantId)
        }).pipe(Effect.provide(Layer.provideMerge(Idempotency.layer, services)))
      })

      it.effect("a worker that lost its lease writes nothing", () => {
        const slow = instance({ submit: slowly("2 minutes") })
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const worker = yield* makeIssuanceWorker
          const takerEmail = uniqueEmail("lost")
          const doc = yield* (yield* DocumentService).issue(
            { tenantId, environment: "live" },
            payload(undefined, takerEmail),
            undefined
          )
          const job = Option.getOrThrow(yield* nextJob)
          const slowFiber = yield* Effect.forkChild(worker.process(job))
          // v4's TestClock.adjust no longer waits (in real time) for forked fibers to settle: wait until
          // the slow worker is in its authority call, as v3's adjust did implicitly.
          for (let i = 0; i < 200 && slow.live.calls.length === 0; i++) yield* realPause
          yield* TestClock.adjust("61 seconds")
          // Another instance took the job over after the lease ran out.
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE document_jobs SET locked_by = 'worker-z' WHERE id = ${job.id}`
          yield* TestClock.adjust("2 minutes")
          yield* Fiber.join(slowFiber)
          expect((yield* documentStatus(doc.id)).status).toBe("submitting")
          expect(yield* eventsOf(doc.id)).toEqual([])
          // Nor the taker's mail: it is queued by the statement the lost lease kept from writing.
          expect(yield* noteMailsTo(takerEmail)).toBe(0)
        }).pipe(Effect.provide(slow.services))
      })

      it.effect("cancellation: accepted, refused, and given up after the window", () => {
        const { services } = instance(
          {
            cancel: (request) =>
              request.reason.includes("refuse")
                ? Effect.fail(new AuthorityRejected({ code: "E1235", message: "cancellation refused" }))
                : request.reason.includes("unavailable")
                ? Effect.fail(new AuthorityUnavailable({ message: "down", status: 503 }))
                : undefined
          },
          { retry: { baseDelay: Duration.seconds(2), maxDelay: Duration.seconds(5), window: Duration.seconds(20) } }
        )
        return Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const tenantId = yield* newTenant
          const worker = yield* makeIssuanceWorker
          const documents = yield* DocumentService
          const issuer: Issuer = { tenantId, environment: "test" }
          const drain = Effect.gen(function*() {
            for (let i = 0; i < 40; i++) {
              const job = yield* nextJob
              if (Option.isSome(job)) yield* worker.process(job.value)
              else yield* TestClock.adjust("1 second")
            }
          })
          const [ok, refused, down] = yield* Effect.forEach(
            [1, 2, 3],
            () => documents.issue(issuer, payload(), undefined)
          )
          yield* drain
          yield* documents.cancel(issuer, asId("document", ok!.id), {
            reason_code: "issue_error",
            reason: "Wrong amount on the invoice"
          })
          yield* documents.cancel(issuer, asId("document", refused!.id), {
            reason_code: "other",
            reason: "please refuse this one"
          })
          yield* documents.cancel(issuer, asId("document", down!.id), {
            reason_code: "other",
            reason: "authority unavailable case"
          })
          expect((yield* documentStatus(ok!.id)).status).toBe("cancel_requested")
          yield* drain

          const cancelled = yield* documentStatus(ok!.id)
          expect(cancelled.status).toBe("cancelled")
          expect(cancelled.cancellation).toMatchObject({ reason_code: "issue_error", protocol: "C1", error: null })
          const kept = yield* documentStatus(refused!.id)
          expect(kept.status).toBe("authorized")
          expect(kept.cancellation).toMatchObject({ error: { code: "E1235", message: "cancellation refused" } })
          const gaveUp = yield* documentStatus(down!.id)
          expect(gaveUp.status).toBe("authorized")
          expect(gaveUp.cancellation).toMatchObject({ error: { code: "authority_unavailable" } })
          expect(yield* eventsOf(ok!.id)).toEqual(["document.authorized", "document.cancelled"])
          expect(yield* eventsOf(refused!.id)).toEqual(["document.authorized", "document.cancellation_failed"])
          expect(yield* eventsOf(down!.id)).toEqual(["document.authorized", "document.cancellation_failed"])
        }).pipe(Effect.provide(services))
      })

      // Real time from here on: many fibers race on the queue.
      it.effect("two worker pools share the queue without submitting anything twice", () => {
        const a = instance({ submit: slowly("5 millis") }, { ...workerConfig("pool-a", 3) })
        const b = instance({}, { ...workerConfig("pool-b", 3) }, a)
        return Effect.gen(function*() {
          const tenantId = yield* newTenant
          yield* Effect.provide(
            Effect.flatMap(
              DocumentService,
              (documents) =>
                Effect.forEach(
                  Array.from({ length: 30 }),
                  () => documents.issue({ tenantId, environment: "live" }, payload(), undefined)
                )
            ),
            a.services
          )
          // Both pools talk to the same authority, as two instances of the service would.
          const scope = yield* Scope.make()
          yield* Layer.buildWithScope(IssuanceWorkersLive.pipe(Layer.provide(a.services)), scope)
          yield* Layer.buildWithScope(IssuanceWorkersLive.pipe(Layer.provide(b.services)), scope)
          const sql = yield* SqlClient.SqlClient
          for (let i = 0; i < 400; i++) {
            const [row] = yield* sql<{ pending: number }>`
              SELECT count(*)::int AS pending FROM documents WHERE tenant_id = ${tenantId} AND status <> 'authorized'`
            if (row!.pending === 0) break
            yield* Effect.sleep("25 millis")
          }
          yield* Scope.close(scope, Exit.void)
          const [settled] = yield* sql<{ authorized: number }>`
            SELECT count(*)::int AS authorized FROM documents WHERE tenant_id = ${tenantId} AND status = 'authorized'`
          expect(settled!.authorized).toBe(30)
          const submits = a.live.calls.filter((c) => c.op === "submit")
          expect(submits.length).toBe(30)
          expect(new Set(submits.map((c) => c.submissionId)).size).toBe(30)
          const owners = yield* sql<{ lockedBy: string | null }>`
            SELECT DISTINCT j.locked_by FROM document_jobs j JOIN documents d ON d.id = j.document_id
            WHERE d.tenant_id = ${tenantId}`
          // Finished jobs release their lock.
          expect(owners.map((o) => o.lockedBy)).toEqual([null])
        }).pipe(TestClock.withLive)
      })

      it.effect("graceful shutdown lets the job in hand finish", () => {
        const slow = instance({ submit: slowly("300 millis") }, { ...workerConfig("graceful", 1) })
        return Effect.gen(function*() {
          const tenantId = yield* newTenant
          const doc = yield* Effect.provide(
            Effect.flatMap(
              DocumentService,
              (documents) => documents.issue({ tenantId, environment: "test" }, payload(), undefined)
            ),
            slow.services
          )
          const scope = yield* Scope.make()
          yield* Layer.buildWithScope(IssuanceWorkersLive.pipe(Layer.provide(slow.services)), scope)
          for (let i = 0; i < 200 && slow.sandbox.calls.length === 0; i++) yield* Effect.sleep("5 millis")
          expect((yield* documentStatus(doc.id)).status).toBe("submitting")
          yield* Scope.close(scope, Exit.void)
          expect((yield* documentStatus(doc.id)).status).toBe("authorized")
        }).pipe(TestClock.withLive)
      })
    }
  )
}
