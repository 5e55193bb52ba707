/**
 * The issuance worker's "handle one job" alone: the queue, the repository, the tenants, the event
 * log and the authority are mocks, so each test states the outcome the worker must write.
 * Pipeline.test.ts covers the same rules against the real queue on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Option } from "effect"
import { Statement } from "effect/sql"
import { TestClock } from "effect/testing"
import {
  AuthorityUnavailable,
  RequestNotSent,
  TaxAuthorities,
  type TaxAuthority
} from "../../src/authority/TaxAuthority.js"
import { AppConfigTest } from "../../src/Config.js"
import { Transaction } from "../../src/db/Repository.js"
import { type DocumentChange, DocumentRepo } from "../../src/documents/DocumentRepo.js"
import { type IssuanceJob, IssuanceQueue } from "../../src/documents/IssuanceQueue.js"
import { makeIssuanceWorker } from "../../src/documents/IssuanceWorker.js"
import { EventLog } from "../../src/events/EventLog.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { completeRegistration } from "../support/registration.js"
import { scriptedSubmissionIds } from "../support/ScriptedAuthority.js"
import { storedDocument } from "../support/storedDocument.js"

const START = Date.parse("2026-11-10T12:00:00Z")

const stored = storedDocument({ createdAt: new Date(START), updatedAt: new Date(START) })

const job = (attempts: number): IssuanceJob => ({
  id: 1,
  documentId: stored.id,
  tenantId: stored.tenantId,
  kind: "submit",
  attempts,
  lockedBy: "test:claim",
  firstAttemptAt: new Date(START),
  traceparent: null
})

/** The worker over mocks; the arrays record what it wrote. */
const workerWith = (authority: Partial<TaxAuthority>) => {
  const queueWrites: Array<string> = []
  const changes: Array<DocumentChange> = []
  const events: Array<string> = []
  const objects: Array<unknown> = []
  const submitted: Array<string> = []
  const stored_xml: Array<string> = []
  const sandbox: TaxAuthority = {
    system: "homologation",
    submissionIdOf: scriptedSubmissionIds,
    requirementsFor: () => Effect.void,
    cancellationRequirementsFor: () => Effect.void,
    danfse: () => Effect.die("the authority's danfse was not expected"),
    submit: (submission) =>
      Effect.sync(() => submitted.push(submission.submissionId)).pipe(
        Effect.andThen(Effect.die("the authority's submit was not expected"))
      ),
    lookup: () => Effect.succeedNone,
    cancel: () => Effect.die("the authority's cancel was not expected"),
    analysisDecision: () => Effect.succeedNone,
    ...authority
  }
  const mocks = Layer.mergeAll(
    Layer.mock(IssuanceQueue, {
      name: "issuance",
      channel: "etd_document_jobs",
      holding: () => Statement.fragment([]),
      enqueueing: () => {
        throw new Error("the worker enqueues nothing")
      },
      complete: (_, state) => Effect.sync(() => void queueWrites.push(`complete:${state}`)),
      retryAt: (_, runAt) => Effect.sync(() => void queueWrites.push(`retryAt:${runAt.toISOString()}`))
    }),
    Layer.mock(DocumentRepo, {
      findByIds: () => Effect.succeed([stored]),
      markSubmitting: () => Effect.succeed(true),
      update: (_, change, _at, xml) =>
        Effect.sync(() => {
          changes.push(change)
          if (xml !== undefined) stored_xml.push(xml)
        })
    }),
    Layer.mock(TenantService, {
      issuers: () =>
        Effect.succeed(
          new Map([[stored.tenantId, {
            name: "Prestadora",
            taxId: "11222333000181",
            registration: completeRegistration,
            status: "active" as const,
            monthlyQuota: 100,
            verified: false,
            simplesNacional: "not_opted" as const,
            taxIdVerifiedByAnother: false
          }]])
        )
    }),
    Layer.mock(EventLog, {
      record: (event) => Effect.sync(() => (events.push(event.type), objects.push(event.object))).pipe(Effect.as("evt"))
    }),
    Layer.succeed(
      TaxAuthorities,
      TaxAuthorities.fromEach({ live: { ...sandbox, system: "production" }, test: sandbox })
    ),
    AppConfigTest({
      retry: { baseDelay: Duration.seconds(2), maxDelay: Duration.minutes(5), window: Duration.hours(1) }
    }),
    Transaction.layerTest
  )
  return { queueWrites, changes, events, objects, submitted, storedXml: stored_xml, layer: mocks }
}

describe("IssuanceWorker (neighbours mocked)", () => {
  it.effect("a transient failure puts the job back on the schedule and records the error, nothing final", () => {
    const { queueWrites, changes, events, layer } = workerWith({
      submit: () => Effect.fail(new AuthorityUnavailable({ message: "503 from the authority", status: 503 }))
    })
    return Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const worker = yield* makeIssuanceWorker
      yield* worker.process(job(1))
      expect(queueWrites).toHaveLength(1)
      const runAt = Date.parse(queueWrites[0]!.slice("retryAt:".length))
      // The first retry waits the schedule's first delay: 2 s, jittered.
      expect(runAt - START).toBeGreaterThanOrEqual(1600)
      expect(runAt - START).toBeLessThanOrEqual(2400)
      expect(changes).toEqual([{
        lastError: { code: "authority_unavailable", message: "503 from the authority", at: new Date(START) }
      }])
      expect(events).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a request that never left (a certificate that cannot sign) fails the document at once: no retry, nothing sent", () => {
    const { changes, events, queueWrites, layer } = workerWith({
      submit: () =>
        Effect.fail(
          new RequestNotSent({ code: "credential_unusable", message: "The tenant's certificate cannot sign" })
        )
    })
    return Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const worker = yield* makeIssuanceWorker
      yield* worker.process(job(1))
      expect(queueWrites).toEqual(["complete:done"])
      expect(changes).toEqual([{
        status: "failed",
        lastError: { code: "credential_unusable", message: "The tenant's certificate cannot sign", at: new Date(START) }
      }])
      expect(events).toEqual(["document.failed"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a retry that cannot ask whether the first attempt was authorized (no certificate any more) keeps retrying, never fails", () => {
    const { changes, events, queueWrites, submitted, layer } = workerWith({
      lookup: () =>
        Effect.fail(
          new RequestNotSent({ code: "credential_required", message: "The tenant's A1 certificate has expired" })
        )
    })
    return Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const worker = yield* makeIssuanceWorker
      yield* worker.process(job(2))
      expect(submitted).toEqual([])
      expect(queueWrites).toHaveLength(1)
      expect(queueWrites[0]).toMatch(/^retryAt:/)
      expect(changes).toHaveLength(1)
      expect(changes[0]!.status).toBeUndefined()
      expect(changes[0]!.lastError?.message).toContain("cannot be checked")
      expect(events).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a retry adopts the authorization the authority already holds instead of submitting again", () => {
    const authorizedAt = new Date(START - 1000)
    const { queueWrites, changes, events, objects, storedXml, submitted, layer } = workerWith({
      lookup: () =>
        Effect.succeed(Option.some({
          status: "authorized" as const,
          authorization: {
            accessKey: "3".repeat(50),
            protocol: "P-1",
            authorizedAt,
            nfseNumber: "7",
            nfseXml: "<NFSe/>"
          },
          cancelledAt: null
        }))
    })
    return Effect.gen(function*() {
      yield* TestClock.setTime(START)
      const worker = yield* makeIssuanceWorker
      yield* worker.process(job(2))
      expect(submitted).toEqual([])
      expect(queueWrites).toEqual(["complete:done"])
      expect(changes).toEqual([{
        status: "authorized",
        authority: { access_key: "3".repeat(50), nfse_number: "7", protocol: "P-1", authorized_at: authorizedAt }
      }])
      // The note's XML is kept with the outcome, for the document's files.
      expect(storedXml).toEqual(["<NFSe/>"])
      expect(events).toEqual(["document.authorized"])
      // The event carries the document as the job left it: this attempt counted, the authorization in.
      expect(objects[0]).toMatchObject({
        id: stored.id,
        status: "authorized",
        attempts: 1,
        authority: { access_key: "3".repeat(50), nfse_number: "7", protocol: "P-1", authorized_at: authorizedAt },
        updated_at: new Date(START)
      })
    }).pipe(Effect.provide(layer))
  })
  it.effect("a note whose figures differ from the service's computation is shown as it is, and a warning says so", () => {
    const authorizedAt = new Date(START - 1000)
    // The municipality applied 5 % where the document expected 2 %.
    const note = { deductions: 0, base: 150_000, iss_rate: "5.00", iss_amount: 7_500, total_withheld: 0, net: 150_000 }
    const authorization = (amounts: typeof note) => ({
      accessKey: "3".repeat(50),
      protocol: "P-1",
      authorizedAt,
      nfseNumber: "7",
      nfseXml: "<NFSe/>",
      amounts
    })
    const warnings = (amounts: typeof note) => {
      const { changes, layer } = workerWith({ submit: () => Effect.succeed(authorization(amounts)) })
      const lines: Array<{ readonly level: string; readonly message: string }> = []
      const capture = Logger.layer([
        Logger.make(({ logLevel, message }) => void lines.push({ level: logLevel, message: String(message) }))
      ])
      return Effect.gen(function*() {
        yield* TestClock.setTime(START)
        const worker = yield* makeIssuanceWorker
        yield* worker.process(job(1))
        return { changes, warnings: lines.filter((line) => line.level === "Warn") }
      }).pipe(Effect.provide(layer), Effect.provide(capture))
    }
    return Effect.gen(function*() {
      const differing = yield* warnings(note)
      expect(differing.changes[0]).toMatchObject({ status: "authorized", authority: { amounts: note } })
      expect(differing.warnings.map((line) => line.message).join("\n")).toContain(
        "amounts differ from the service's computation"
      )
      // The same figures as the computation (plainAmounts(150000, "2.00")): nothing to say.
      const agreeing = yield* warnings({ ...note, iss_rate: "2.00", iss_amount: 3_000 })
      expect(agreeing.warnings).toEqual([])
    })
  })
})
