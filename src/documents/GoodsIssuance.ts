/**
 * The issuance worker's calls for goods invoices (NF-e, NFC-e) through their authority's port: a
 * job's submission or cancellation, and what the authority's answer comes to (an IssuanceOutcome,
 * decided and written as for any document by IssuanceDecision and IssuanceWorker).
 *
 * An NFC-e that allows it (`offline_contingency`) is issued offline (tpEmis 9) when its first
 * attempt cannot reach the authority at all; its later attempts transmit the offline note. Only then:
 * after a timeout, or on a later attempt, the online note may exist, and an offline one of the same
 * number would be a second note for the same sale.
 */
import { Clock, Effect, Option } from "effect"
import { GoodsAuthorities, type GoodsSubmission } from "../authority/GoodsAuthority.js"
import { AuthorityUnavailable } from "../authority/TaxAuthority.js"
import { OFFLINE_TRANSMISSION_HOURS } from "../domain/GoodsDocument.js"
import type { StoredGoodsDocument } from "./DocumentRepo.js"
import { goodsNoteOf } from "./GoodsNotes.js"
import { IssuanceOutcome, notSentOutcome, transientOutcome } from "./IssuanceDecision.js"
import type { IssuanceJob } from "./IssuanceQueue.js"
import { NoteFileRepo } from "./NoteFileRepo.js"

/** The offline note's `xJust` (15 to 256 characters). */
export const OFFLINE_REASON = "Sem comunicação com a SEFAZ autorizadora: NFC-e emitida em contingência off-line"

/** Whether a failed first attempt is the moment to issue the NFC-e offline: the authority certainly never took it. */
const goesOffline = (job: IssuanceJob, row: StoredGoodsDocument) => (error: { readonly _tag: string }) =>
  error instanceof AuthorityUnavailable && error.unreached === true && job.attempts === 1 &&
  row.type === "consumer_invoice" && row.goods.sale.offline_contingency === true && row.contingency === null

export const makeGoodsIssuance = Effect.gen(function*() {
  const authorities = yield* GoodsAuthorities
  const files = yield* NoteFileRepo

  /** The NFC-e issued offline: since now (to the second, as `dhCont` says it), to be transmitted within the deadline. */
  const issueOffline = (row: StoredGoodsDocument, submission: GoodsSubmission) =>
    Effect.gen(function*() {
      const since = new Date(Math.floor((yield* Clock.currentTimeMillis) / 1000) * 1000)
      const contingency = { since, reason: OFFLINE_REASON }
      const offline = yield* authorities.for(row.environment).issueOffline({
        ...submission,
        note: { ...submission.note, contingency }
      })
      return IssuanceOutcome.GoodsOffline({
        contingency: {
          access_key: offline.accessKey,
          ...contingency,
          transmit_by: new Date(row.createdAt.getTime() + OFFLINE_TRANSMISSION_HOURS * 3_600_000)
        },
        xml: offline.xml
      })
    })

  /**
   * A goods note's submission, as a service note's: every attempt after the first asks the state
   * authority about the note's key first and adopts its authorization (never a second note).
   */
  const submit = (job: IssuanceJob, row: StoredGoodsDocument) => {
    const authority = authorities.for(row.environment)
    const base = { tenantId: row.tenantId, submissionId: row.submissionId, note: goodsNoteOf(row) }
    return Effect.gen(function*() {
      // An NFC-e issued offline is transmitted as its consumer holds it, byte for byte.
      const offlineXml = row.status === "contingency"
        ? Option.getOrUndefined(yield* files.findNfseXml(row.id))
        : undefined
      const submission = { ...base, offlineXml }
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
      Effect.catchIf(goesOffline(job, row), () => issueOffline(row, base)),
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
})
