/**
 * Asking for a document's cancellation (SPEC §6): the checks the request must pass now (the
 * document authorized, an analysis only after a deadline's refusal, what the authority would refuse
 * in the reason), then `cancel_requested` and its queued job, together. The authority is asked in
 * the background (IssuanceWorker).
 */
import { Effect, Option } from "effect"
import { TaxAuthorities } from "../authority/TaxAuthority.js"
import { makeTransaction } from "../db/Repository.js"
import { InvalidState, NotFound } from "../domain/Errors.js"
import type { DocumentId } from "../domain/Ids.js"
import type { TenantReach } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import { TenantService } from "../tenants/TenantService.js"
import type { CancelDocument } from "./Api.js"
import { DocumentRepo } from "./DocumentRepo.js"
import { isServiceDocument, toDocument } from "./DocumentView.js"
import { IssuanceQueue } from "./IssuanceQueue.js"

/** The national system's refusal of a cancellation past its deadline, after which only the analysis (e101103) remains. */
const CANCELLATION_DEADLINE_PASSED = "E0822"

export const makeCancellation = Effect.gen(function*() {
  const repo = yield* DocumentRepo
  const inTransaction = yield* makeTransaction
  const jobs = yield* IssuanceQueue
  const tenants = yield* TenantService
  const authorities = yield* TaxAuthorities

  /** The same for a key and a member's session: what happens next depends on the document's environment only. */
  const cancel = Effect.fn("DocumentService.cancel")(function*(
    access: TenantReach,
    id: DocumentId,
    request: CancelDocument
  ) {
    const analysis = request.analysis === true
    const document = yield* Effect.gen(function*() {
      const found = yield* repo.findForUpdate(access.tenantId, access.environment, id)
      if (Option.isNone(found)) return yield* new NotFound({ message: "No such document." })
      const row = found.value
      if (!isServiceDocument(row) && analysis) {
        return yield* new InvalidState({
          message: "An analysis request (analysis: true) is for service invoices; a goods invoice is cancelled plainly."
        })
      }
      if (row.status !== "authorized") {
        return yield* new InvalidState({
          message: `Only an authorized document can be cancelled; this one is ${row.status}.`
        })
      }
      // The analysis is for what the issuer can no longer cancel itself: after the deadline's refusal.
      if (analysis && row.cancellation?.error?.code !== CANCELLATION_DEADLINE_PASSED) {
        return yield* new InvalidState({
          message: "An analysis request (analysis: true) is for a note whose cancellation was refused because its " +
            `deadline passed (cancellation.error.code ${CANCELLATION_DEADLINE_PASSED}); cancel it plainly first.`
        })
      }
      const at = yield* now
      // What the authority would refuse in the request is a 400 now, not a failed cancellation later.
      const tenant = yield* tenants.issuer(access.tenantId)
      if (Option.isSome(tenant) && isServiceDocument(row)) {
        yield* authorities.for(row.environment).cancellationRequirementsFor({
          tenantId: row.tenantId,
          submissionId: row.submissionId,
          environment: row.environment,
          issuerTaxId: tenant.value.taxId,
          accessKey: row.authority!.access_key,
          reasonCode: request.reason_code,
          reason: request.reason,
          requestedAt: at,
          analysis
        })
      }
      const cancellation = {
        reason_code: request.reason_code,
        ...(analysis ? { analysis } : {}),
        reason: request.reason,
        requested_at: at,
        cancelled_at: null,
        protocol: null,
        error: null
      }
      yield* repo.update(row.id, { status: "cancel_requested", cancellation }, at)
      yield* jobs.enqueue([{
        documentId: row.id,
        tenantId: row.tenantId,
        kind: "cancel",
        traceparent: yield* currentTraceparent
      }])
      return toDocument({ ...row, status: "cancel_requested", cancellation, updatedAt: at })
    }).pipe(inTransaction)
    return document
  })

  return { cancel } as const
})
