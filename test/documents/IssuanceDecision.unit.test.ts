/**
 * What each outcome of an issuance job writes, decided without a database or an authority: every
 * branch of `decideIssuance`, the retry window's edges included. IssuanceWorker.unit.test.ts checks
 * that the worker writes these decisions; Pipeline.test.ts runs the whole pipeline on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import type { DocumentChange, StoredDocument } from "../../src/documents/DocumentRepo.js"
import {
  decideIssuance,
  IssuanceDecision,
  type IssuanceFacts,
  IssuanceOutcome,
  takerNotificationOn
} from "../../src/documents/IssuanceDecision.js"
import type { EventType } from "../../src/domain/Events.js"
import { storedDocument } from "../support/storedDocument.js"

const FIRST = new Date("2026-11-10T12:00:00Z")
const AT = new Date("2026-11-10T12:10:00Z")
const WINDOW = Duration.hours(1)

const submitting = storedDocument({ status: "submitting", attempts: 2, createdAt: FIRST, updatedAt: FIRST })

const authority = {
  access_key: "3".repeat(50),
  nfse_number: "7",
  protocol: "P-1",
  authorized_at: new Date("2026-11-10T12:00:05Z")
}
const requested = {
  reason_code: "issue_error" as const,
  reason: "Wrong amount on the invoice",
  requested_at: new Date("2026-11-10T12:05:00Z"),
  cancelled_at: null,
  protocol: null,
  error: null
}
const cancelRequested: StoredDocument = {
  ...submitting,
  status: "cancel_requested",
  authority,
  cancellation: requested
}

const submit = { kind: "submit" as const, firstAttemptAt: FIRST }
const cancel = { kind: "cancel" as const, firstAttemptAt: FIRST }

const facts = (overrides: Partial<IssuanceFacts> = {}): IssuanceFacts => ({
  at: AT,
  retryDelay: Option.some(Duration.seconds(30)),
  retryWindow: WINDOW,
  ...overrides
})

const problem = { code: "authority_unavailable", message: "503 from the authority" }
const lastError = (code: string, message: string) => ({ code, message, at: AT })

/** The job ends with `change` written over `document`; the event carries the document as it then stands. */
const settled = (document: StoredDocument, change: DocumentChange, event: EventType) =>
  IssuanceDecision.Settle({
    at: AT,
    change,
    nfseXml: undefined,
    event,
    document: { ...document, ...change, updatedAt: AT } as StoredDocument
  })

/** The notification of a taker without an e-mail address. */
const noMail = (kind: "authorized" | "cancelled") => ({
  kind,
  status: "no_address" as const,
  attempts: 0,
  sent_at: null,
  last_error: null,
  updated_at: AT
})

describe("takerNotificationOn", () => {
  const withEmail = { taker: { tax_id: "52998224725", name: "Ana", email: "ana@example.com" } }
  it("an authorization or a cancellation queues the taker's mail when the taker has an e-mail and the tenant's switch is on", () => {
    expect(takerNotificationOn("document.authorized", withEmail, true, AT)).toEqual({
      takerNotification: { ...noMail("authorized"), status: "pending" }
    })
    expect(takerNotificationOn("document.cancelled", withEmail, true, AT)).toEqual({
      takerNotification: { ...noMail("cancelled"), status: "pending" }
    })
  })

  it("a test note to no verified member of the tenant: test_recipient, unless the switch is off or there is no address", () => {
    const status = (...args: Parameters<typeof takerNotificationOn>) =>
      takerNotificationOn(...args).takerNotification?.status
    expect(status("document.authorized", withEmail, true, AT, true)).toBe("test_recipient")
    expect(status("document.cancelled", withEmail, true, AT, true)).toBe("test_recipient")
    expect(status("document.authorized", withEmail, false, AT, true)).toBe("disabled")
    expect(status("document.authorized", { taker: null }, true, AT, true)).toBe("no_address")
    expect(status("document.authorized", withEmail, true, AT, false)).toBe("pending")
  })

  it("the switch off: disabled; no address: no_address (whatever the switch)", () => {
    expect(takerNotificationOn("document.authorized", withEmail, false, AT).takerNotification?.status).toBe(
      "disabled"
    )
    expect(takerNotificationOn("document.authorized", { taker: null }, true, AT).takerNotification?.status).toBe(
      "no_address"
    )
    expect(
      takerNotificationOn("document.cancelled", { taker: { tax_id: "52998224725", name: "Ana" } }, false, AT)
        .takerNotification?.status
    ).toBe("no_address")
  })

  it("the other outcomes leave the taker's mail as it was", () => {
    for (
      const event of [
        "document.rejected",
        "document.failed",
        "document.cancellation_failed",
        "document.cancellation_in_analysis",
        "document.substituted"
      ] as const
    ) {
      expect(takerNotificationOn(event, withEmail, true, AT)).toEqual({})
    }
  })
})

describe("decideIssuance", () => {
  it("a document an earlier owner of the job settled: the job ends, nothing else is written", () => {
    expect(decideIssuance(IssuanceOutcome.AlreadySettled(), submit, submitting, facts())).toEqual(
      IssuanceDecision.Complete()
    )
  })

  it("an authorization settles the document as authorized and keeps the note's XML; the event carries the document as it now stands", () => {
    const decision = decideIssuance(
      IssuanceOutcome.Authorized({
        authorization: {
          accessKey: authority.access_key,
          protocol: authority.protocol,
          authorizedAt: authority.authorized_at,
          nfseNumber: authority.nfse_number,
          nfseXml: "<NFSe/>"
        }
      }),
      submit,
      submitting,
      facts()
    )
    // The taker has no e-mail address: no mail, and the document says why.
    const takerNotification = noMail("authorized")
    expect(decision).toEqual(IssuanceDecision.Settle({
      at: AT,
      change: { status: "authorized", authority, takerNotification },
      nfseXml: "<NFSe/>",
      event: "document.authorized",
      // This attempt counted (by the worker, before the call), the authorization in.
      document: { ...submitting, status: "authorized", attempts: 2, authority, takerNotification, updatedAt: AT }
    }))
  })

  it("a rejection is final: the document is rejected with the authority's code and message", () => {
    const decision = decideIssuance(
      IssuanceOutcome.Rejected({ code: "E0310", message: "Invalid taker" }),
      submit,
      submitting,
      facts()
    )
    const change: DocumentChange = { status: "rejected", rejection: { code: "E0310", message: "Invalid taker" } }
    expect(decision).toEqual(settled(submitting, change, "document.rejected"))
  })

  it("a cancellation keeps the request's reason and records when and under which protocol it was cancelled", () => {
    const cancelledAt = new Date("2026-11-10T12:09:00Z")
    const decision = decideIssuance(
      IssuanceOutcome.Cancelled({ protocol: "C1", cancelledAt }),
      cancel,
      cancelRequested,
      facts()
    )
    const change: DocumentChange = {
      status: "cancelled",
      cancellation: { ...requested, cancelled_at: cancelledAt, protocol: "C1", error: null },
      takerNotification: noMail("cancelled")
    }
    expect(decision).toEqual(settled(cancelRequested, change, "document.cancelled"))
  })

  it("a cancellation an earlier attempt already made (found, no protocol of ours) clears an earlier error", () => {
    const cancelledAt = new Date("2026-11-10T12:06:00Z")
    const earlier = { ...cancelRequested, cancellation: { ...requested, error: { code: "E1", message: "earlier" } } }
    const decision = decideIssuance(
      IssuanceOutcome.Cancelled({ protocol: null, cancelledAt }),
      cancel,
      earlier,
      facts()
    )
    expect(decision).toMatchObject({
      _tag: "Settle",
      event: "document.cancelled",
      change: {
        status: "cancelled",
        cancellation: { ...requested, cancelled_at: cancelledAt, protocol: null, error: null }
      }
    })
  })

  it("a refused cancellation leaves the note authorized, the refusal on its cancellation, no last error", () => {
    const decision = decideIssuance(
      IssuanceOutcome.CancellationRefused({ code: "E1235", message: "cancellation refused" }),
      cancel,
      cancelRequested,
      facts()
    )
    const change: DocumentChange = {
      status: "authorized",
      cancellation: { ...requested, error: { code: "E1235", message: "cancellation refused" } }
    }
    expect(decision).toEqual(settled(cancelRequested, change, "document.cancellation_failed"))
  })

  describe("a late cancellation's analysis", () => {
    const analysed = { ...cancelRequested, cancellation: { ...requested, analysis: true } }

    it("registered: cancellation_in_analysis, its event, and the job goes on after the poll interval", () => {
      const decision = decideIssuance(
        IssuanceOutcome.AnalysisRequested({ protocol: "EVT1" }),
        cancel,
        analysed,
        facts({ analysisPoll: Duration.minutes(5) })
      )
      expect(decision).toMatchObject({
        _tag: "Settle",
        event: "document.cancellation_in_analysis",
        change: { status: "cancellation_in_analysis", cancellation: { analysis: true, protocol: "EVT1", error: null } },
        continueAt: new Date(AT.getTime() + 5 * 60_000)
      })
    })

    it("undecided: asked again after the poll interval, whatever the retry window, nothing written", () => {
      const inAnalysis = { ...analysed, status: "cancellation_in_analysis" as const }
      const long = { ...cancel, firstAttemptAt: new Date(AT.getTime() - 30 * 24 * 3_600_000) }
      expect(decideIssuance(IssuanceOutcome.AnalysisPending(), long, inAnalysis, facts())).toEqual(
        IssuanceDecision.Poll({ runAt: new Date(AT.getTime() + 5 * 60_000) })
      )
    })
  })

  describe("a request that never left", () => {
    const notSent = IssuanceOutcome.NotSent({
      code: "credential_unusable",
      message: "The tenant's certificate cannot sign"
    })

    it("fails a submission at once, however early in the window", () => {
      const decision = decideIssuance(notSent, submit, submitting, facts())
      const change: DocumentChange = {
        status: "failed",
        lastError: lastError("credential_unusable", "The tenant's certificate cannot sign")
      }
      expect(decision).toEqual(settled(submitting, change, "document.failed"))
    })

    it("fails a cancellation at once: the note stays authorized, the reason on its cancellation and as the last error", () => {
      const decision = decideIssuance(notSent, cancel, cancelRequested, facts())
      const change: DocumentChange = {
        status: "authorized",
        cancellation: {
          ...requested,
          error: { code: "credential_unusable", message: "The tenant's certificate cannot sign" }
        },
        lastError: lastError("credential_unusable", "The tenant's certificate cannot sign")
      }
      expect(decision).toEqual(settled(cancelRequested, change, "document.cancellation_failed"))
    })
  })

  describe("a transient failure", () => {
    const transient = IssuanceOutcome.Transient(problem)

    it("within the window: the job is due again after the schedule's delay, the error kept on the document, status unchanged", () => {
      expect(decideIssuance(transient, submit, submitting, facts())).toEqual(IssuanceDecision.Retry({
        at: AT,
        runAt: new Date(AT.getTime() + 30_000),
        documentId: submitting.id,
        change: { lastError: lastError(problem.code, problem.message) }
      }))
      expect(decideIssuance(transient, cancel, cancelRequested, facts())).toMatchObject({
        _tag: "Retry",
        documentId: cancelRequested.id
      })
    })

    it("a next attempt that would fall exactly at the window's end is still made; a millisecond later it is not", () => {
      const toEnd = Duration.millis(FIRST.getTime() + Duration.toMillis(WINDOW) - AT.getTime())
      expect(decideIssuance(transient, submit, submitting, facts({ retryDelay: Option.some(toEnd) }))._tag).toBe(
        "Retry"
      )
      const past = Duration.sum(toEnd, Duration.millis(1))
      expect(decideIssuance(transient, submit, submitting, facts({ retryDelay: Option.some(past) }))._tag).toBe(
        "Settle"
      )
    })

    it("past the window a submission fails with the last error", () => {
      const decision = decideIssuance(
        transient,
        submit,
        submitting,
        facts({ retryDelay: Option.some(Duration.hours(1)) })
      )
      const change: DocumentChange = { status: "failed", lastError: lastError(problem.code, problem.message) }
      expect(decision).toEqual(settled(submitting, change, "document.failed"))
    })

    it("past the window a cancellation is given up: the note stays authorized, its cancellation says the authority did not answer", () => {
      const decision = decideIssuance(
        transient,
        cancel,
        cancelRequested,
        facts({ retryDelay: Option.some(Duration.hours(1)) })
      )
      expect(decision).toMatchObject({
        _tag: "Settle",
        event: "document.cancellation_failed",
        change: {
          status: "authorized",
          cancellation: {
            ...requested,
            error: { code: "authority_unavailable", message: "The authority did not answer: 503 from the authority" }
          },
          lastError: lastError(problem.code, problem.message)
        }
      })
    })

    it("the window runs from the first attempt; a job with none yet starts it now", () => {
      const late = { ...submit, firstAttemptAt: new Date(AT.getTime() - Duration.toMillis(WINDOW)) }
      expect(decideIssuance(transient, late, submitting, facts())._tag).toBe("Settle")
      const fresh = { ...submit, firstAttemptAt: null }
      expect(
        decideIssuance(transient, fresh, submitting, facts({ retryDelay: Option.some(Duration.minutes(59)) }))._tag
      )
        .toBe("Retry")
    })

    it("without a delay from the schedule the wait is the whole window: given up unless the window has just begun", () => {
      expect(decideIssuance(transient, submit, submitting, facts({ retryDelay: Option.none() }))._tag).toBe("Settle")
      const now = { ...submit, firstAttemptAt: AT }
      expect(decideIssuance(transient, now, submitting, facts({ retryDelay: Option.none() }))).toMatchObject({
        _tag: "Retry",
        runAt: new Date(AT.getTime() + Duration.toMillis(WINDOW))
      })
    })
  })
})

describe("decideIssuance: an NFC-e issued offline (contingency)", () => {
  const contingency = {
    access_key: "35261112345678000195650010000000019123456780",
    since: new Date("2026-11-10T12:00:01Z"),
    reason: "Sem comunicação com a SEFAZ autorizadora: NFC-e emitida em contingência off-line",
    transmit_by: new Date("2026-11-11T12:00:00Z")
  }
  const offline = { ...submitting, status: "contingency" as const }
  const transient = IssuanceOutcome.Transient(problem)
  const longAgo = { ...submit, firstAttemptAt: new Date(AT.getTime() - Duration.toMillis(Duration.days(3))) }

  it("issued offline: the document is contingency with what it was issued with, its signed note kept, and the job goes on by the schedule", () => {
    const decision = decideIssuance(
      IssuanceOutcome.GoodsOffline({ contingency, xml: "<NFe/>" }),
      submit,
      submitting,
      facts()
    )
    expect(decision).toMatchObject({
      _tag: "Settle",
      change: { status: "contingency", contingency },
      nfseXml: "<NFe/>",
      event: "document.contingency",
      continueAt: new Date(AT.getTime() + 30_000)
    })
  })

  it("its transmission failing is never given up, past the retry window and its deadline: asked again by the schedule", () => {
    expect(decideIssuance(transient, longAgo, offline, facts())).toEqual(
      IssuanceDecision.Retry({
        at: AT,
        runAt: new Date(AT.getTime() + 30_000),
        documentId: offline.id,
        change: { lastError: lastError(problem.code, problem.message) }
      })
    )
    // The schedule without a step left: the next poll, not the whole window.
    expect(
      decideIssuance(
        transient,
        longAgo,
        offline,
        facts({ retryDelay: Option.none(), analysisPoll: Duration.minutes(5) })
      )
    ).toMatchObject({ _tag: "Retry", runAt: new Date(AT.getTime() + 300_000) })
    // The same failure of a note not issued offline ends it.
    expect(decideIssuance(transient, longAgo, submitting, facts())).toMatchObject({
      _tag: "Settle",
      change: { status: "failed" }
    })
  })

  it("a transmission that cannot be signed (the certificate removed) waits for it rather than failing a note the consumer holds", () => {
    const notSent = IssuanceOutcome.NotSent({ code: "credential_required", message: "no certificate" })
    expect(decideIssuance(notSent, submit, offline, facts())).toMatchObject({
      _tag: "Retry",
      change: { lastError: lastError("credential_required", "no certificate") }
    })
    expect(decideIssuance(notSent, submit, submitting, facts())).toMatchObject({
      _tag: "Settle",
      change: { status: "failed" }
    })
  })

  it("its transmission rejected is final, as any note's rejection", () => {
    expect(decideIssuance(IssuanceOutcome.Rejected({ code: "999", message: "no" }), submit, offline, facts()))
      .toMatchObject({ _tag: "Settle", change: { status: "rejected" }, event: "document.rejected" })
  })
})
