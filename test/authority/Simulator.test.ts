/**
 * The authority simulator (SPEC §7): authorization with a national 50-digit access key, duplicate
 * detection, the magic values, lookups, cancellations, latency and failure rate, and records kept
 * in the simulator's own transactions, on every test database.
 */
import { expect, layer } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber, Layer, Option, Result, Tracer } from "effect"
import { SqlClient, Statement } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomBytes } from "node:crypto"
import { makeSimulator, type SimulatorOptions } from "../../src/authority/simulator/Simulator.js"
import type { Submission, SubmissionDocument, TaxAuthority } from "../../src/authority/TaxAuthority.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { asId } from "../../src/domain/Ids.js"
import { plainAmounts } from "../support/amounts.js"
import { registeredIssuer } from "../support/registration.js"
import { databaseLayer, testDatabases } from "../support/TestApp.js"

const NOW = Date.parse("2026-11-10T12:00:00Z")
const ISSUER_CNPJ = "11222333000181"
const TENANT = asId("tenant", "ten_simulator")

const document = (notes: string | null = null, overrides: Partial<SubmissionDocument> = {}): SubmissionDocument => ({
  environment: "test",
  issuer: registeredIssuer(ISSUER_CNPJ, "Acme Serviços Ltda"),
  series: "1",
  number: 42,
  issueDate: "2026-11-10",
  createdAt: new Date(NOW),
  taker: { tax_id: "52998224725", name: "Maria da Silva", email: "maria@example.com" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  intermediary: null,
  tax: {},
  amounts: plainAmounts(100_000, "2.00"),
  notes,
  ...overrides
})

const submission = (notes: string | null = null, overrides: Partial<SubmissionDocument> = {}): Submission => ({
  tenantId: TENANT,
  submissionId: `DPS-${randomBytes(8).toString("hex")}`,
  document: document(notes, overrides)
})

/** Independent of the implementation: weights 2..9 from the right, remainders 0 and 1 give 0. */
const hasValidCheckDigit = (key: string): boolean => {
  const body = key.slice(0, 49)
  let sum = 0
  for (let i = 0; i < body.length; i++) sum += Number(body[body.length - 1 - i]) * (2 + (i % 8))
  const r = sum % 11
  return Number(key[49]) === (r < 2 ? 0 : 11 - r)
}

/** Real time passing, so database I/O (promises) can progress while the TestClock stands still. */
const realPause = (millis = 5) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/** Waits in real time until `check` holds, so a test never adjusts the clock before a sleep began. */
const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, attempts = 400) =>
  Effect.gen(function*() {
    for (let i = 0; i < attempts; i++) {
      if (yield* check) return
      yield* realPause()
    }
    return yield* Effect.die(new Error("condition not reached"))
  })

const simulator = (options: Partial<SimulatorOptions> = {}) => makeSimulator({ system: "homologation", ...options })

const recordOf = (system: string, submissionId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{
      readonly status: string
      readonly submitAttempts: number
      readonly lookups: number
      readonly accessKey: string | null
    }>`SELECT status, submit_attempts, lookups, access_key FROM authority_sim_records
       WHERE system = ${system} AND submission_id = ${submissionId}`
    return Option.fromNullishOr(rows[0])
  })

const attemptsOf = (submissionId: string) =>
  Effect.map(recordOf("homologation", submissionId), Option.match({ onNone: () => 0, onSome: (r) => r.submitAttempts }))

const leftTag = <A, E extends { readonly _tag: string }>(result: Result.Result<A, E>) =>
  Result.isFailure(result) ? result.failure._tag : "Right"

for (const database of testDatabases) {
  const Database = Layer.provideMerge(MigrationsLive, databaseLayer(database))

  layer(Database, { timeout: 120_000 })(`authority simulator (${database})`, (it) => {
    it.effect("authorizes with a national 50-digit access key, a protocol and the clock's time", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission()
        const authorization = yield* authority.submit(sub)

        expect(authorization.accessKey).toMatch(/^[0-9]{50}$/)
        expect(hasValidCheckDigit(authorization.accessKey)).toBe(true)
        // cMun, ambiente gerador 2 (national system), CNPJ (2), the issuer's CNPJ, then nNFSe.
        expect(authorization.accessKey.slice(0, 7)).toBe("3550308")
        expect(authorization.accessKey.slice(7, 9)).toBe("22")
        expect(authorization.accessKey.slice(9, 23)).toBe(ISSUER_CNPJ)
        expect(authorization.accessKey.slice(36, 40)).toBe("2611")
        // Homologation protocols start with tpAmb 2, then the processing date.
        expect(authorization.protocol).toMatch(/^2261110[0-9]{8}$/)
        expect(authorization.authorizedAt.getTime()).toBe(NOW)

        const record = yield* recordOf("homologation", sub.submissionId)
        expect(Option.getOrThrow(record)).toMatchObject({
          status: "authorized",
          submitAttempts: 1,
          accessKey: authorization.accessKey
        })
        const found = Option.getOrThrow(yield* authority.lookup(sub))
        expect(found.status).toBe("authorized")
        expect(found.authorization).toEqual(authorization)
        expect(found.cancelledAt).toBeNull()
      }))

    it.effect("records what a submission sends, not the rest of the caller's object (a stored row)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission()
        // The issuance worker passes a stored document, whose row carries more than the port's fields.
        const row = { ...sub.document, id: "doc_x", tenantId: "ten_x", status: "submitting", lastError: null }
        yield* authority.submit({ ...sub, document: row })
        const sql = yield* SqlClient.SqlClient
        const [stored] = yield* sql<{ readonly document: unknown }>`
          SELECT document FROM authority_sim_records WHERE submission_id = ${sub.submissionId}`
        const document = typeof stored!.document === "string" ? JSON.parse(stored!.document) : stored!.document
        expect(Object.keys(document).sort()).toEqual(Object.keys(sub.document).sort())
      }))

    it.effect("builds CPF and alphanumeric-CNPJ keys that are still 50 digits with a valid check digit", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const cpf = yield* authority.submit(submission(null, { issuer: registeredIssuer("529.982.247-25", "Maria") }))
        expect(cpf.accessKey).toMatch(/^[0-9]{50}$/)
        expect(hasValidCheckDigit(cpf.accessKey)).toBe(true)
        expect(cpf.accessKey.slice(8, 23)).toBe("100052998224725")

        const alphanumeric = yield* authority.submit(
          submission(null, { issuer: registeredIssuer("12ABC34501DE35", "Nova") })
        )
        expect(alphanumeric.accessKey).toMatch(/^[0-9]{50}$/)
        expect(hasValidCheckDigit(alphanumeric.accessKey)).toBe(true)
        // Letters valued charCode - 48, last decimal digit kept: A→7, B→8, C→9, D→0, E→1.
        expect(alphanumeric.accessKey.slice(8, 23)).toBe("212789345010135")
      }))

    it.effect("detects a duplicate submission id and answers with the existing authorization", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission()
        const first = yield* authority.submit(sub)
        yield* TestClock.adjust(Duration.minutes(5))
        const second = yield* Effect.flip(authority.submit(sub))
        expect(second._tag).toBe("AlreadyAuthorized")
        if (second._tag !== "AlreadyAuthorized") return
        expect(second.accessKey).toBe(first.accessKey)
        expect(second.protocol).toBe(first.protocol)
        expect(second.authorizedAt.getTime()).toBe(NOW)
        expect(yield* attemptsOf(sub.submissionId)).toBe(2)
      }))

    it.effect("stores an id's first submit in one statement after drawing its number; a resubmit decides under the lock", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission()
        const statements: Array<string> = []
        const recording: Statement.Transformer = (statement) =>
          Effect.sync(() => {
            statements.push(statement.compile()[0].replace(/\s+/g, " ").trim())
            return statement
          })
        const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.provideService(effect, Statement.CurrentTransformer, recording)

        yield* counted(authority.submit(sub))
        expect(statements).toHaveLength(2)
        expect(statements[0]).toMatch(/^SELECT nextval\('authority_sim_nfse_numbers'\)/)
        expect(statements[1]).toMatch(/^INSERT INTO authority_sim_records .* ON CONFLICT .* DO NOTHING RETURNING 1/)

        statements.length = 0
        expect((yield* Effect.flip(counted(authority.submit(sub))))._tag).toBe("AlreadyAuthorized")
        // The first-submit try finds the record, then the locked path: lock (or create), then save.
        expect(statements.slice(2).map((text) => text.slice(0, 40))).toEqual([
          expect.stringMatching(/^INSERT INTO authority_sim_records AS r/),
          expect.stringMatching(/^INSERT INTO authority_sim_records/)
        ])
        expect(yield* attemptsOf(sub.submissionId)).toBe(2)
      }))

    it.effect("authorizes concurrent submits of one id exactly once", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission()
        const results = yield* Effect.all(Array.from({ length: 8 }, () => Effect.result(authority.submit(sub))), {
          concurrency: "unbounded"
        })
        const winners = results.filter(Result.isSuccess)
        expect(winners).toHaveLength(1)
        const key = winners[0]!.success.accessKey
        for (const result of results) {
          if (Result.isFailure(result)) {
            expect(result.failure._tag).toBe("AlreadyAuthorized")
            if (result.failure._tag === "AlreadyAuthorized") expect(result.failure.accessKey).toBe(key)
          }
        }
        expect(yield* attemptsOf(sub.submissionId)).toBe(8)
      }))

    it.effect("simulate:reject is rejected with code E0310 and no NFS-e", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission("please simulate:reject this one")
        const error = yield* Effect.flip(authority.submit(sub))
        expect(error._tag).toBe("AuthorityRejected")
        if (error._tag === "AuthorityRejected") {
          expect(error.code).toBe("E0310")
          expect(error.message.length).toBeGreaterThan(10)
        }
        expect(Option.isNone(yield* authority.lookup(sub))).toBe(true)
        // A business rejection is final: the same document is rejected again.
        expect((yield* Effect.flip(authority.submit(sub)))._tag).toBe("AuthorityRejected")
        expect(yield* attemptsOf(sub.submissionId)).toBe(2)
      }))

    it.effect("simulate:unavailable fails with 503 exactly unavailableTimes times, then authorizes", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        for (const unavailableTimes of [2, 3]) {
          const authority = yield* simulator(unavailableTimes === 2 ? {} : { unavailableTimes })
          const sub = submission("simulate:unavailable")
          for (let attempt = 1; attempt <= unavailableTimes; attempt++) {
            const error = yield* Effect.flip(authority.submit(sub))
            expect(error._tag).toBe("AuthorityUnavailable")
            if (error._tag === "AuthorityUnavailable") expect(error.status).toBe(503)
            expect(Option.isNone(yield* authority.lookup(sub))).toBe(true)
          }
          const authorization = yield* authority.submit(sub)
          expect(authorization.accessKey).toMatch(/^[0-9]{50}$/)
          expect(yield* attemptsOf(sub.submissionId)).toBe(unavailableTimes + 1)
        }
      }))

    it.effect("simulate:timeout authorizes, then times out; lookup finds it and a resubmit is a duplicate", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator({ timeoutAfter: Duration.seconds(30) })
        const sub = submission("simulate:timeout")
        const fiber = yield* Effect.forkChild(authority.submit(sub))
        // The authority records it first; the caller is still waiting for an answer.
        yield* eventually(Effect.map(authority.lookup(sub), Option.isSome))
        yield* TestClock.adjust(Duration.seconds(29))
        yield* realPause(20)
        expect(fiber.pollUnsafe() === undefined).toBe(true)
        yield* TestClock.adjust(Duration.seconds(1))
        const exit = yield* Fiber.await(fiber)
        // A failure whose cause is that one error, and nothing else.
        const onlyError =
          Exit.isFailure(exit) && exit.cause.reasons.length === 1 && Cause.isFailReason(exit.cause.reasons[0]!)
            ? exit.cause.reasons[0].error
            : undefined
        expect(onlyError !== undefined ? onlyError._tag : exit._tag).toBe("AuthorityTimeout")

        const found = Option.getOrThrow(yield* authority.lookup(sub))
        expect(found.status).toBe("authorized")
        expect(found.authorization.accessKey).toMatch(/^[0-9]{50}$/)
        const duplicate = yield* Effect.flip(authority.submit(sub))
        expect(duplicate._tag).toBe("AlreadyAuthorized")
        if (duplicate._tag === "AlreadyAuthorized") expect(duplicate.accessKey).toBe(found.authorization.accessKey)
        const record = Option.getOrThrow(yield* recordOf("homologation", sub.submissionId))
        expect(record.submitAttempts).toBe(2)
        expect(record.lookups).toBe(2)
      }))

    it.effect("lookup of an unknown submission id is None", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        expect(Option.isNone(yield* authority.lookup({ tenantId: TENANT, submissionId: "DPS-never-submitted" }))).toBe(
          true
        )
        expect(Option.isNone(yield* recordOf("homologation", "DPS-never-submitted"))).toBe(true)
      }))

    it.effect("cancels with a protocol at the clock's time, idempotently", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission()
        const authorization = yield* authority.submit(sub)
        yield* TestClock.adjust(Duration.hours(1))
        const request = {
          tenantId: sub.tenantId,
          submissionId: sub.submissionId,
          environment: "test",
          issuerTaxId: "11222333000181",
          accessKey: authorization.accessKey,
          reasonCode: "issue_error",
          reason: "Issued with the wrong amount by mistake",
          requestedAt: new Date(NOW)
        } as const
        const cancellation = yield* authority.cancel(request)
        expect(cancellation.protocol).toMatch(/^2[0-9]{14}$/)
        expect(cancellation.cancelledAt.getTime()).toBe(NOW + 3_600_000)

        const found = Option.getOrThrow(yield* authority.lookup(sub))
        expect(found.status).toBe("cancelled")
        expect(found.cancelledAt?.getTime()).toBe(NOW + 3_600_000)
        expect(found.authorization).toEqual(authorization)

        yield* TestClock.adjust(Duration.hours(1))
        const again = yield* authority.cancel(request)
        expect(again.protocol).toBe(cancellation.protocol)
        expect(again.cancelledAt.getTime()).toBe(cancellation.cancelledAt.getTime())
        // A cancelled NFS-e is still a duplicate for its submission id.
        expect((yield* Effect.flip(authority.submit(sub)))._tag).toBe("AlreadyAuthorized")
      }))

    it.effect("takes the analysis of a late cancellation and decides it when asked: granted, or refused", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        for (
          const [notes, granted] of [["simulate:cancel-reject", true], [
            "simulate:cancel-reject simulate:analysis-refuse",
            false
          ]] as const
        ) {
          const sub = submission(notes)
          const authorization = yield* authority.submit(sub)
          const ref = { tenantId: sub.tenantId, submissionId: sub.submissionId, accessKey: authorization.accessKey }
          expect(yield* authority.analysisDecision(ref)).toEqual(Option.none())
          const asked = yield* authority.cancel({
            ...ref,
            environment: "test",
            issuerTaxId: "11222333000181",
            reasonCode: "issue_error",
            reason: "Nota emitida com o tomador errado",
            requestedAt: new Date(NOW),
            analysis: true
          })
          expect(asked.status).toBe("in_analysis")
          const decision = Option.getOrThrow(yield* authority.analysisDecision(ref))
          expect(decision).toMatchObject({ granted, code: granted ? "E105104" : "E105105" })
          expect(Option.getOrThrow(yield* authority.lookup(sub)).status).toBe(granted ? "cancelled" : "authorized")
          // Decided once: asked again, nothing new.
          expect(yield* authority.analysisDecision(ref)).toEqual(Option.none())
        }
      }))

    it.effect("refuses simulate:cancel-reject (E0822, past the deadline), unknown ids (E1200) and foreign access keys (E1201)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        const sub = submission("simulate:cancel-reject")
        const authorization = yield* authority.submit(sub)
        const refused = yield* Effect.flip(authority.cancel({
          tenantId: sub.tenantId,
          submissionId: sub.submissionId,
          environment: "test",
          issuerTaxId: "11222333000181",
          accessKey: authorization.accessKey,
          reasonCode: "other",
          reason: "The customer changed their mind",
          requestedAt: new Date(NOW)
        }))
        expect(refused._tag).toBe("AuthorityRejected")
        if (refused._tag === "AuthorityRejected") {
          expect(refused.code).toBe("E0822")
          expect(refused.message.toLowerCase()).toContain("cancellation refused")
        }
        expect(Option.getOrThrow(yield* authority.lookup(sub)).status).toBe("authorized")

        const unknown = yield* Effect.flip(authority.cancel({
          tenantId: TENANT,
          submissionId: "DPS-unknown",
          environment: "test",
          issuerTaxId: "11222333000181",
          accessKey: "1".repeat(50),
          reasonCode: "other",
          reason: "The customer changed their mind",
          requestedAt: new Date(NOW)
        }))
        expect(unknown._tag === "AuthorityRejected" ? [unknown.code, unknown.message.includes("not found")] : [])
          .toEqual(["E1200", true])

        const rejected = submission("simulate:reject")
        yield* Effect.flip(authority.submit(rejected))
        const neverAuthorized = yield* Effect.flip(authority.cancel({
          tenantId: rejected.tenantId,
          submissionId: rejected.submissionId,
          environment: "test",
          issuerTaxId: "11222333000181",
          accessKey: "1".repeat(50),
          reasonCode: "other",
          reason: "The customer changed their mind",
          requestedAt: new Date(NOW)
        }))
        expect(neverAuthorized._tag === "AuthorityRejected" ? neverAuthorized.code : "").toBe("E1200")

        const other = submission()
        yield* authority.submit(other)
        const foreign = yield* Effect.flip(authority.cancel({
          tenantId: other.tenantId,
          submissionId: other.submissionId,
          environment: "test",
          issuerTaxId: "11222333000181",
          accessKey: authorization.accessKey,
          reasonCode: "other",
          reason: "The customer changed their mind",
          requestedAt: new Date(NOW)
        }))
        expect(foreign._tag === "AuthorityRejected" ? foreign.code : "").toBe("E1201")
      }))

    it.effect("honours latency: nothing is answered (or recorded) until the clock has moved", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator({ latency: Duration.seconds(5) })
        const sub = submission()
        const fiber = yield* Effect.forkChild(authority.submit(sub))
        yield* realPause(20)
        yield* TestClock.adjust(Duration.millis(4_999))
        yield* realPause(50)
        expect(fiber.pollUnsafe() === undefined).toBe(true)
        expect(yield* attemptsOf(sub.submissionId)).toBe(0)
        yield* TestClock.adjust(Duration.millis(1))
        const authorization = yield* Fiber.join(fiber)
        expect(authorization.authorizedAt.getTime()).toBe(NOW + 5_000)
      }))

    it.effect("failureRate 1 makes every call a transient 503, still counted", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const healthy = yield* simulator()
        const failing = yield* simulator({ failureRate: 1 })
        const authorized = submission()
        const authorization = yield* healthy.submit(authorized)

        const sub = submission()
        for (let i = 0; i < 5; i++) {
          const error = yield* Effect.flip(failing.submit(sub))
          expect(error._tag === "AuthorityUnavailable" ? error.status : error._tag).toBe(503)
        }
        expect(yield* attemptsOf(sub.submissionId)).toBe(5)
        expect(leftTag(yield* Effect.result(failing.lookup(authorized)))).toBe("AuthorityUnavailable")
        expect(
          leftTag(
            yield* Effect.result(failing.cancel({
              tenantId: authorized.tenantId,
              submissionId: authorized.submissionId,
              environment: "test",
              issuerTaxId: "11222333000181",
              accessKey: authorization.accessKey,
              reasonCode: "other",
              reason: "The customer changed their mind",
              requestedAt: new Date(NOW)
            }))
          )
        ).toBe("AuthorityUnavailable")
        // Even the duplicate check is behind the outage.
        expect(leftTag(yield* Effect.result(failing.submit(authorized)))).toBe("AuthorityUnavailable")
        expect(Option.getOrThrow(yield* healthy.lookup(authorized)).status).toBe("authorized")
      }))

    // Each database has its own answer to a call from inside a caller's transaction, so each of the
    // two tests below is registered for its database only (both run in CI, on both databases).
    // A pool gives the simulator a connection of its own; the embedded database has only one.
    if (database !== "embedded") {
      it.effect(
        "keeps its records when the caller's transaction rolls back, without deadlocking",
        () =>
          Effect.gen(function*() {
            yield* TestClock.setTime(NOW)
            const sql = yield* SqlClient.SqlClient
            const authority = yield* simulator()
            const sub = submission()
            const twin = submission()

            yield* sql`CREATE TABLE IF NOT EXISTS caller_scratch (id text PRIMARY KEY)`
            const inCallerTransaction = Effect.gen(function*() {
              // The caller's own work, which the rollback must undo.
              yield* sql`INSERT INTO caller_scratch (id) VALUES (${sub.submissionId})`
              const authorization = yield* authority.submit(sub)
              // Concurrent calls inside one transaction still authorize an id once.
              const twins = yield* Effect.all([1, 2, 3].map(() => Effect.result(authority.submit(twin))), {
                concurrency: "unbounded"
              })
              expect(twins.filter(Result.isSuccess)).toHaveLength(1)
              // Visible to the simulator at once, before the caller's transaction has ended.
              expect(Option.isSome(yield* authority.lookup(sub))).toBe(true)
              return yield* Effect.fail({ _tag: "CallerFailed" as const, authorization })
            })
            const outcome = yield* Effect.flip(sql.withTransaction(inCallerTransaction))
            expect(outcome._tag).toBe("CallerFailed")
            if (outcome._tag !== "CallerFailed") return

            const scratch = yield* sql<{ readonly n: number }>`
          SELECT count(*)::int AS n FROM caller_scratch WHERE id = ${sub.submissionId}`
            expect(scratch[0]!.n).toBe(0)

            // The simulator's records outlive the caller's rollback.
            const found = Option.getOrThrow(yield* authority.lookup(sub))
            expect(found.authorization.accessKey).toBe(outcome.authorization.accessKey)
            yield* eventually(Effect.map(recordOf("homologation", sub.submissionId), Option.isSome))
            yield* eventually(Effect.map(recordOf("homologation", twin.submissionId), Option.isSome))
            const stored = Option.getOrThrow(yield* recordOf("homologation", sub.submissionId))
            expect(stored.status).toBe("authorized")
            expect(stored.accessKey).toBe(outcome.authorization.accessKey)
            yield* eventually(Effect.map(attemptsOf(twin.submissionId), (n) => n === 3))

            const duplicate = yield* Effect.flip(authority.submit(sub))
            expect(duplicate._tag === "AlreadyAuthorized" ? duplicate.accessKey : duplicate._tag)
              .toBe(outcome.authorization.accessKey)
            yield* sql`DROP TABLE caller_scratch`
          }),
        { timeout: 30_000 }
      )
    }

    if (database === "embedded") {
      it.effect(
        "on the single-connection database, refuses a call from inside a caller's transaction instead of deadlocking",
        () =>
          Effect.gen(function*() {
            yield* TestClock.setTime(NOW)
            const sql = yield* SqlClient.SqlClient
            const authority = yield* simulator()
            const sub = submission()
            const calls: ReadonlyArray<Effect.Effect<unknown, unknown>> = [
              authority.submit(sub),
              authority.lookup(sub)
            ]
            for (const call of calls) {
              const exit = yield* Effect.exit(sql.withTransaction(call))
              const defect = Exit.isFailure(exit) ? Cause.findDefect(exit.cause) : undefined
              expect(defect !== undefined && Result.isSuccess(defect) ? String(defect.success) : exit._tag)
                .toContain("inside a caller's transaction")
            }
            expect(Option.isNone(yield* recordOf("homologation", sub.submissionId))).toBe(true)
            // Outside the transaction the same call goes through.
            expect((yield* authority.submit(sub)).accessKey).toMatch(/^[0-9]{50}$/)
          }),
        { timeout: 30_000 }
      )
    }

    it.effect("answers a storage failure as the authority's internal error (500, transient)", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const sql = yield* SqlClient.SqlClient
        const authority = yield* simulator()
        const sub = submission()
        yield* sql`ALTER TABLE authority_sim_records RENAME TO authority_sim_records_away`
        const error = yield* Effect.flip(authority.submit(sub)).pipe(
          Effect.ensuring(Effect.orDie(sql`ALTER TABLE authority_sim_records_away RENAME TO authority_sim_records`))
        )
        expect(error._tag === "AuthorityUnavailable" ? error.status : error._tag).toBe(500)
        expect((yield* authority.submit(sub)).accessKey).toMatch(/^[0-9]{50}$/)
      }))

    it.effect("keeps production and homologation records apart", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const production = yield* makeSimulator({ system: "production" })
        const homologation = yield* simulator()
        const sub = submission()
        const inSandbox = yield* homologation.submit(sub)
        expect(Option.isNone(yield* production.lookup(sub))).toBe(true)
        const inProduction = yield* production.submit(sub)
        expect(inProduction.accessKey).not.toBe(inSandbox.accessKey)
        expect(inProduction.protocol.startsWith("1")).toBe(true)
        expect(Option.isSome(yield* recordOf("production", sub.submissionId))).toBe(true)
      }))

    it.effect("keeps each tenant's records apart: one DPS id from two tenants is two submissions", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* simulator()
        // Two tenants that name the same tax id number their documents alike: the DPS ids coincide.
        const ours = submission()
        const theirs: Submission = { ...ours, tenantId: asId("tenant", "ten_other") }
        const first = yield* authority.submit(ours)
        const second = yield* authority.submit(theirs)
        expect(second.accessKey).not.toBe(first.accessKey)
        expect(Option.getOrThrow(yield* authority.lookup(ours)).authorization).toEqual(first)
        expect(Option.getOrThrow(yield* authority.lookup(theirs)).authorization).toEqual(second)
        // Cancelling one leaves the other authorized.
        yield* authority.cancel({
          ...theirs,
          environment: "test",
          issuerTaxId: "11222333000181",
          accessKey: second.accessKey,
          reasonCode: "other",
          reason: "x".repeat(20),
          requestedAt: new Date(NOW)
        })
        expect(Option.getOrThrow(yield* authority.lookup(ours)).status).toBe("authorized")
        expect(Option.isNone(yield* authority.lookup({ ...ours, tenantId: asId("tenant", "ten_third") }))).toBe(true)
      }))

    it.effect("never puts document content in its spans", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority: TaxAuthority = yield* simulator()
        const sub = submission("private note")
        const spans: Array<{ name: string; attributes: ReadonlyMap<string, unknown> }> = []
        yield* authority.submit(sub).pipe(
          Effect.withSpan("test.root"),
          Effect.withTracer(recordingTracer(spans))
        )
        const span = spans.find((s) => s.name === "TaxAuthoritySimulator.submit")
        expect(span?.attributes.get("authority.system")).toBe("homologation")
        expect(span?.attributes.get("authority.submission_id")).toBe(sub.submissionId)
        const everything = JSON.stringify(spans.map((s) => [...s.attributes.values()]))
        expect(everything).not.toContain("Maria")
        expect(everything).not.toContain("private note")
      }))
  })
}

/** A tracer that remembers the name and attributes of every span it creates. */
const recordingTracer = (spans: Array<{ name: string; attributes: ReadonlyMap<string, unknown> }>) =>
  Tracer.make({
    span: ({ annotations, kind, links, name, parent, startTime }) => {
      const attributes = new Map<string, unknown>()
      spans.push({ name, attributes })
      let status: Tracer.SpanStatus = { _tag: "Started", startTime }
      const span: Tracer.Span = {
        _tag: "Span",
        name,
        spanId: randomBytes(8).toString("hex"),
        traceId: parent._tag === "Some" ? parent.value.traceId : randomBytes(16).toString("hex"),
        parent,
        annotations,
        get status() {
          return status
        },
        attributes,
        links: [...links],
        sampled: true,
        kind,
        end: (endTime, exit) => {
          status = { _tag: "Ended", startTime, endTime, exit }
        },
        attribute: (key, value) => {
          attributes.set(key, value)
        },
        event: () => {},
        addLinks: () => {}
      }
      return span
    }
  })
