/**
 * The issuance worker's calls for goods invoices (NF-e, NFC-e) through their authority's port: a
 * job's submission or cancellation, and what the authority's answer comes to (an IssuanceOutcome,
 * decided and written as for any document by IssuanceDecision and IssuanceWorker).
 */
import { Effect, Option } from "effect"
import type { GoodsAuthorities } from "../authority/GoodsAuthority.js"
import { AuthorityUnavailable } from "../authority/TaxAuthority.js"
import type { StoredGoodsDocument } from "./DocumentRepo.js"
import { goodsNoteOf } from "./GoodsNotes.js"
import { IssuanceOutcome, notSentOutcome, transientOutcome } from "./IssuanceDecision.js"
import type { IssuanceJob } from "./IssuanceQueue.js"

export const makeGoodsIssuance = (authorities: GoodsAuthorities["Service"]) => {
  /**
   * A goods note's submission, as a service note's: any attempt after the first asks the state
   * authority about the note's key first and adopts its authorization (never a second note).
   */
  const submit = (job: IssuanceJob, row: StoredGoodsDocument) => {
    const authority = authorities.for(row.environment)
    const submission = { tenantId: row.tenantId, submissionId: row.submissionId, note: goodsNoteOf(row) }
    return Effect.gen(function*() {
      if (job.attempts > 1) {
        const found = yield* authority.lookup(submission).pipe(
          Effect.catchTag("RequestNotSent", (error) =>
            Effect.fail(
              new AuthorityUnavailable({
                message: `Whether the previous attempt was authorized cannot be checked: ${error.message}`
              })
            ))
        )
        if (Option.isSome(found)) return IssuanceOutcome.GoodsAuthorized({ authorization: found.value })
      }
      return IssuanceOutcome.GoodsAuthorized({ authorization: yield* authority.submit(submission) })
    }).pipe(
      Effect.catchTags({
        RequestNotSent: (error) => Effect.succeed(notSentOutcome(error)),
        AuthorityRejected: (rejected) =>
          Effect.succeed(IssuanceOutcome.Rejected({ code: rejected.code, message: rejected.message })),
        AuthorityUnavailable: (error) => Effect.succeed(transientOutcome(error)),
        AuthorityTimeout: (error) => Effect.succeed(transientOutcome(error))
      })
    )
  }

  /**
   * A goods note's cancellation (event 110111). A retry sends the same event: the authority's
   * "already registered" is the adapter's success, so nothing is cancelled twice or left undone.
   */
  const cancel = (row: StoredGoodsDocument) => {
    const cancellation = row.cancellation!
    const authority = row.authority!
    return authorities.for(row.environment).cancel({
      tenantId: row.tenantId,
      submissionId: row.submissionId,
      note: goodsNoteOf(row),
      accessKey: authority.access_key,
      protocol: authority.protocol,
      reason: cancellation.reason,
      requestedAt: cancellation.requested_at
    }).pipe(
      Effect.map((result) => IssuanceOutcome.Cancelled({ protocol: result.protocol, cancelledAt: result.cancelledAt })),
      Effect.catchTags({
        AuthorityRejected: (refused) =>
          Effect.succeed(IssuanceOutcome.CancellationRefused({ code: refused.code, message: refused.message })),
        RequestNotSent: (error) => Effect.succeed(notSentOutcome(error)),
        AuthorityUnavailable: (error) => Effect.succeed(transientOutcome(error)),
        AuthorityTimeout: (error) => Effect.succeed(transientOutcome(error))
      })
    )
  }

  return { submit, cancel } as const
}
