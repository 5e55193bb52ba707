/**
 * The issuance worker's "handle one job" alone: the queue, the repository, the tenants, the event
 * log and the authority are mocks, so each test states the outcome the worker must write.
 * Pipeline.test.ts covers the same rules against the real queue on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Option, References } from "effect"
import { Statement } from "effect/sql"
import { TestClock } from "effect/testing"
import {
  AuthorityUnavailable,
  RequestNotSent,
  TaxAuthorities,
  type TaxAuthority
} from "../../src/authority/TaxAuthority.js"
import { NFSE_NAMESPACE } from "../../src/authority/xml/XmlText.js"
import { AppConfigTest } from "../../src/Config.js"
import { Transaction } from "../../src/db/Repository.js"
import { type DocumentChange, DocumentRepo, type StoredDocument } from "../../src/documents/DocumentRepo.js"
import { type IssuanceJob, IssuanceQueue } from "../../src/documents/IssuanceQueue.js"
import { makeIssuanceWorker } from "../../src/documents/IssuanceWorker.js"
import { NoteFileRepo } from "../../src/documents/NoteFileRepo.js"
import type { IbsCbsFigures } from "../../src/domain/Money.js"
import type { NoteAmounts } from "../../src/domain/NoteAmounts.js"
import { EventLog } from "../../src/events/EventLog.js"
import { Outbox } from "../../src/mail/Outbox.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { plainAmounts } from "../support/amounts.js"
import { completeRegistration } from "../support/registration.js"
import { scriptedSubmissionIds } from "../support/ScriptedAuthority.js"
import { storedDocument } from "../support/storedDocument.js"
import { unusedGoodsAuthorities } from "../support/unusedGoodsAuthorities.js"

const START = Date.parse("2026-11-10T12:00:00Z")

// As the job's claim leaves it (IssuanceQueue): submitting, the attempt counted.
const stored = storedDocument({
  status: "submitting",
  attempts: 1,
  createdAt: new Date(START),
  updatedAt: new Date(START)
})

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
const workerWith = (authority: Partial<TaxAuthority>, document: StoredDocument = stored) => {
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
      enqueueing: () => {
        throw new Error("the worker enqueues nothing")
      },
      complete: (_, state) => Effect.sync(() => void queueWrites.push(`complete:${state}`)),
      retryAt: (_, runAt) => Effect.sync(() => void queueWrites.push(`retryAt:${runAt.toISOString()}`)),
      // The job's end within the outcome's statement: recorded when the statement is made.
      ending: (_, end) => {
        queueWrites.push("final" in end ? `complete:${end.final}` : `retryAt:${end.runAt.toISOString()}`)
        return Statement.fragment([])
      }
    }),
    Layer.mock(DocumentRepo, {
      findByIds: () => Effect.succeed([document]),
      settle: (_, change, _at, xml) =>
        Effect.sync(() => {
          changes.push(change)
          if (xml !== undefined) stored_xml.push(xml)
          return true
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
            noteMailEnabled: true,
            taxIdVerifiedByAnother: false
          }]])
        )
    }),
    Layer.mock(Outbox, {
      queueing: () => Effect.succeed(() => ({ ctes: Statement.fragment([]), select: Statement.fragment([]) }))
    }),
    Layer.mock(EventLog, {
      record: (event) =>
        Effect.sync(() => (events.push(event.type), objects.push(event.object))).pipe(Effect.as("evt")),
      recording: (event) =>
        Effect.sync(() => (events.push(event.type), objects.push(event.object))).pipe(
          Effect.as(() => ({ ctes: Statement.fragment([]), select: Statement.fragment([]) }))
        )
    }),
    Layer.succeed(
      TaxAuthorities,
      TaxAuthorities.fromEach({ live: { ...sandbox, system: "production" }, test: sandbox })
    ),
    unusedGoodsAuthorities,
    // Only a goods note issued offline reads its file: none here.
    Layer.mock(NoteFileRepo, {}),
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
        authority: { access_key: "3".repeat(50), nfse_number: "7", protocol: "P-1", authorized_at: authorizedAt },
        takerNotification: {
          kind: "authorized",
          status: "no_address",
          attempts: 0,
          sent_at: null,
          last_error: null,
          updated_at: new Date(START)
        }
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
    const note: NoteAmounts = {
      deductions: 0,
      base: 150_000,
      iss_rate: "5.00",
      iss_amount: 7_500,
      total_withheld: 0,
      net: 150_000
    }
    const authorization = (amounts: NoteAmounts) => ({
      accessKey: "3".repeat(50),
      protocol: "P-1",
      authorizedAt,
      nfseNumber: "7",
      nfseXml: "<NFSe/>",
      amounts
    })
    const warnings = (amounts: NoteAmounts) => {
      const { changes, layer } = workerWith({ submit: () => Effect.succeed(authorization(amounts)) })
      const lines: Array<{ readonly level: string; readonly message: string; readonly differences: unknown }> = []
      const capture = Logger.layer([
        Logger.make(({ fiber, logLevel, message }) =>
          void lines.push({
            level: logLevel,
            message: String(message),
            differences: fiber.getRef(References.CurrentLogAnnotations)["differences"]
          })
        )
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
      const same = { ...note, iss_rate: "2.00", iss_amount: 3_000 }
      const agreeing = yield* warnings(same)
      expect(agreeing.warnings).toEqual([])
      const stated = {
        ...same,
        unconditional_discount: 0,
        conditional_discount: 0,
        benefit_reduction: 0,
        iss_withheld: 0,
        federal_withheld: 0
      }
      expect((yield* warnings(stated)).warnings).toEqual([])
      // The note withholds what the computation did not: each withheld figure is named.
      const withholding = yield* warnings({ ...stated, iss_withheld: 3_000, federal_withheld: 1_500 })
      expect(withholding.warnings).toHaveLength(1)
      expect(JSON.parse(String(withholding.warnings[0]!.differences))).toEqual([
        { field: "iss_withheld", computed: 0, note: 3_000 },
        { field: "federal_withheld", computed: 0, note: 1_500 }
      ])
    })
  })

  it.effect("the note's IBS/CBS is kept as the note states it, and a difference from the estimate is a warning", () => {
    const estimate: IbsCbsFigures = {
      base: 147_000,
      cbs_rate: "0.90",
      state_ibs_rate: "0.10",
      municipal_ibs_rate: "0.00",
      cbs: 1_323,
      state_ibs: 147,
      municipal_ibs: 0,
      ibs_total: 147,
      note_total: 150_000
    }
    const withGroup = storedDocument({ amounts: { ...plainAmounts(150000, "2.00"), ibs_cbs: estimate } })
    // The ISS figures agree with the computation, so only the IBS/CBS can raise a warning.
    const valores = {
      deductions: 0,
      base: 150_000,
      iss_rate: "2.00",
      iss_amount: 3_000,
      total_withheld: 0,
      net: 150_000
    }
    const nfseOf = (cbs: string) =>
      `<NFSe xmlns="${NFSE_NAMESPACE}"><infNFSe><IBSCBS><cLocalidadeIncid>3550308</cLocalidadeIncid>` +
      "<xLocalidadeIncid>São Paulo</xLocalidadeIncid><valores><vBC>1470.00</vBC>" +
      "<uf><pIBSUF>0.10</pIBSUF><pAliqEfetUF>0.10</pAliqEfetUF></uf>" +
      "<mun><pIBSMun>0.00</pIBSMun><pAliqEfetMun>0.00</pAliqEfetMun></mun>" +
      "<fed><pCBS>0.90</pCBS><pAliqEfetCBS>0.90</pAliqEfetCBS></fed></valores>" +
      "<totCIBS><vTotNF>1500.00</vTotNF><gIBS><vIBSTot>1.47</vIBSTot><gIBSUFTot><vIBSUF>1.47</vIBSUF></gIBSUFTot>" +
      `<gIBSMunTot><vIBSMun>0.00</vIBSMun></gIBSMunTot></gIBS><gCBS><vCBS>${cbs}</vCBS></gCBS></totCIBS></IBSCBS>` +
      "</infNFSe></NFSe>"
    const run = (document: StoredDocument, cbs: string, handed?: { readonly ibsCbs: IbsCbsFigures | null }) => {
      const { changes, layer } = workerWith({
        submit: () =>
          Effect.succeed({
            accessKey: "3".repeat(50),
            protocol: "P-1",
            authorizedAt: new Date(START - 1000),
            nfseNumber: "7",
            nfseXml: nfseOf(cbs),
            amounts: valores,
            ...handed
          })
      }, document)
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
      const differing = yield* run(withGroup, "13.24")
      expect(differing.changes[0]).toMatchObject({
        status: "authorized",
        authority: { amounts: valores, ibs_cbs: { ...estimate, cbs: 1_324 } }
      })
      expect(differing.warnings.map((line) => line.message).join("\n")).toContain(
        "amounts differ from the service's computation"
      )
      const agreeing = yield* run(withGroup, "13.23")
      expect(agreeing.changes[0]).toMatchObject({ authority: { ibs_cbs: estimate } })
      expect(agreeing.warnings).toEqual([])
      // Without an estimate (a year whose rates are not published), the note's figures are the only ones.
      const unestimated = yield* run(storedDocument({ amounts: { ...withGroup.amounts, ibs_cbs: null } }), "13.24")
      expect(unestimated.changes[0]).toMatchObject({ authority: { ibs_cbs: { cbs: 1_324 } } })
      expect(unestimated.warnings).toEqual([])
      // An adapter that read the note already hands its figures over: the XML is not read again.
      const handed = yield* run(withGroup, "99.99", { ibsCbs: { ...estimate, cbs: 1_325 } })
      expect(handed.changes[0]).toMatchObject({ authority: { ibs_cbs: { cbs: 1_325 } } })
      const handedNone = yield* run(withGroup, "99.99", { ibsCbs: null })
      expect(handedNone.changes[0]!.authority).not.toHaveProperty("ibs_cbs")
    })
  })
})
