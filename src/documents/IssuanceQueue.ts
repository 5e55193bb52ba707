/**
 * The issuance jobs (`document_jobs`) on the shared leased queue: one job per submission or
 * cancellation of a document, handled by the IssuanceWorker.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig } from "../Config.js"
import { DocumentId, TenantId } from "../domain/Ids.js"
import { type LeasedQueue, LeaseFields, makeLeasedQueue } from "../queue/LeasedQueue.js"

export const IssuanceJob = Schema.Struct({
  ...LeaseFields,
  id: Schema.Number,
  documentId: DocumentId,
  tenantId: TenantId,
  kind: Schema.Literals(["submit", "cancel"]),
  /** When the first attempt was claimed: the retry window runs from there. */
  firstAttemptAt: Schema.NullOr(Schema.Date),
  /** The accepting request's trace, continued by the job's span. */
  traceparent: Schema.NullOr(Schema.String)
})
export type IssuanceJob = typeof IssuanceJob.Type

export interface NewIssuanceJob {
  readonly documentId: DocumentId
  readonly tenantId: TenantId
  readonly kind: IssuanceJob["kind"]
  readonly traceparent: string | null
}

export class IssuanceQueue extends Context.Service<IssuanceQueue, LeasedQueue<IssuanceJob, NewIssuanceJob>>()(
  "etd/IssuanceQueue"
) {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const { fairness } = yield* AppConfig
      return yield* makeLeasedQueue<IssuanceJob, NewIssuanceJob>({
        name: "issuance",
        table: "document_jobs",
        stateColumn: "state",
        dueColumn: "run_at",
        job: IssuanceJob,
        channel: "etd_document_jobs",
        row: (job, at) => ({ ...job, runAt: at, createdAt: at, updatedAt: at }),
        onClaim: (sql, at) => sql`first_attempt_at = COALESCE(first_attempt_at, ${at})`,
        // A submission's attempt is counted on its document when its job is claimed (each claimed job
        // starts at once: the pool claims only for free slots). Once submitting, a document stays so
        // until its outcome; the job's own attempt count says whether an earlier one may have reached
        // the authority. An NFC-e issued offline stays `contingency` while it is transmitted.
        alsoOnClaim: (sql, at) =>
          sql`UPDATE documents SET attempts = documents.attempts + 1, updated_at = ${at},
              status = CASE documents.status WHEN 'contingency' THEN 'contingency' ELSE 'submitting' END
            FROM claimed WHERE documents.id = claimed.document_id AND claimed.kind = 'submit'
              AND documents.status IN ('queued', 'submitting', 'contingency')`,
        // A tenant's burst of documents (or a slow authority for it) holds at most its cap of workers.
        fairness: { tenant: { column: "tenant_id", cap: fairness.issuancePerTenant } }
      })
    })
  )
}
