/**
 * DocumentService alone: its neighbours are mocks (Layer.mock), so each test states exactly what the
 * service asks of them. The HTTP suite (Documents.test.ts) covers the same rules end to end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Statement } from "effect/sql"
import { TaxAuthorities, type TaxAuthority } from "../../src/authority/TaxAuthority.js"
import { Transaction } from "../../src/db/Repository.js"
import type { NewDocument } from "../../src/documents/Api.js"
import { DocumentRepo } from "../../src/documents/DocumentRepo.js"
import { DocumentService } from "../../src/documents/DocumentService.js"
import { Idempotency } from "../../src/documents/Idempotency.js"
import { IssuanceQueue, type NewIssuanceJob } from "../../src/documents/IssuanceQueue.js"
import { NoteFileRepo } from "../../src/documents/NoteFileRepo.js"
import { asId } from "../../src/domain/Ids.js"
import { EventLog } from "../../src/events/EventLog.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { completeRegistration } from "../support/registration.js"
import { consultingService } from "../support/samples.js"
import { scriptedSubmissionIds } from "../support/ScriptedAuthority.js"
import { unusedGoodsAuthorities } from "../support/unusedGoodsAuthorities.js"

const payload: NewDocument = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria Tomadora" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
}

/** An authority that requires nothing at acceptance (as the simulator); nothing is sent in these tests. */
const acceptingAll = (system: TaxAuthority["system"]): TaxAuthority => ({
  system,
  submissionIdOf: scriptedSubmissionIds,
  requirementsFor: () => Effect.void,
  cancellationRequirementsFor: () => Effect.void,
  submit: () => Effect.die("not expected"),
  lookup: () => Effect.die("not expected"),
  cancel: () => Effect.die("not expected"),
  analysisDecision: () => Effect.die("not expected"),
  danfse: () => Effect.die("not expected")
})

/** The service over mocks; `calls` records what it asked of them. */
const serviceWith = (tenant: { status: "active" | "suspended"; monthlyQuota: number }) => {
  const calls: Array<string> = []
  const enqueued: Array<NewIssuanceJob> = []
  const mocks = Layer.mergeAll(
    Layer.mock(TenantService, {
      issuer: () =>
        Effect.succeed(
          Option.some({
            name: "Prestadora Ltda",
            taxId: "11222333000181",
            verified: false,
            registration: completeRegistration,
            simplesNacional: "not_opted" as const,
            noteMailEnabled: true,
            taxIdVerifiedByAnother: false,
            ...tenant
          })
        )
    }),
    Layer.mock(DocumentRepo, {
      takeQuota: () => Effect.sync(() => calls.push("takeQuota")).pipe(Effect.as(Option.some(1))),
      // The number, the document and its jobs: one statement.
      accept: () =>
        Effect.sync(() => calls.push("accept")).pipe(Effect.as(Option.some({ number: 42, submissionId: "SUB-42" })))
    }),
    Layer.mock(NoteFileRepo, {}),
    Layer.mock(IssuanceQueue, {
      name: "issuance",
      channel: "etd_document_jobs",
      ending: () => Statement.fragment([]),
      enqueueing: (job) => {
        enqueued.push(job)
        return {
          insert: Statement.fragment([]),
          insertWhen: () => Statement.fragment([]),
          channel: "etd_document_jobs"
        }
      }
    }),
    // Both environments on the simulator: no certificate needed.
    Layer.succeed(
      TaxAuthorities,
      TaxAuthorities.fromEach({ live: acceptingAll("production"), test: acceptingAll("homologation") })
    ),
    unusedGoodsAuthorities,
    // These tests send no Idempotency-Key.
    Layer.mock(Idempotency, {
      hold: () => (effect) => effect,
      answering: () => {
        throw new Error("no Idempotency-Key, no stored answer")
      },
      storing: () => {
        throw new Error("no Idempotency-Key, no stored answer")
      }
    }),
    Layer.mock(EventLog, { record: () => Effect.sync(() => calls.push("event")).pipe(Effect.as("evt")) })
  )
  const layer = DocumentService.layerNoDeps.pipe(Layer.provide([mocks, Transaction.layerTest]))
  return { calls, enqueued, layer }
}

describe("DocumentService (neighbours mocked)", () => {
  it.effect("refuses a suspended tenant's live document before taking quota or a number", () => {
    const { calls, enqueued, layer } = serviceWith({ status: "suspended", monthlyQuota: 100 })
    return Effect.gen(function*() {
      const service = yield* DocumentService
      const error = yield* Effect.flip(
        service.issue({ tenantId: asId("tenant", "ten_x"), environment: "live" }, payload, undefined)
      )
      expect(error._tag).toBe("TenantSuspended")
      expect(calls).toEqual([])
      expect(enqueued).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("queues exactly one submission for the document it accepts, numbered by the repository", () => {
    const { calls, enqueued, layer } = serviceWith({ status: "suspended", monthlyQuota: 100 })
    return Effect.gen(function*() {
      const service = yield* DocumentService
      // A suspended tenant can still issue test documents, and they take no quota.
      const document = yield* service.issue(
        { tenantId: asId("tenant", "ten_x"), environment: "test" },
        payload,
        undefined
      )
      expect(document.status).toBe("queued")
      expect(document.number).toBe(42)
      expect(calls).toEqual(["accept"])
      // The job carries the accepting request's trace, so the worker's span continues it.
      expect(enqueued).toEqual([{
        documentId: document.id,
        tenantId: "ten_x",
        kind: "submit",
        traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
      }])
    }).pipe(Effect.provide(layer))
  })
})
