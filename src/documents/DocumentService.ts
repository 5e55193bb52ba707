/**
 * Issuing, reading and cancelling documents (SPEC §6). Acceptance (Acceptance.ts) stores a
 * document and its queued submission together or not at all; the submission itself happens in the
 * background (IssuanceWorker).
 */
import { Array as Arr, Cause, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { TaxAuthorities } from "../authority/TaxAuthority.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import {
  Conflict,
  CredentialRequired,
  IdempotencyConflict,
  IdempotencyKeyReused,
  InvalidRequest,
  InvalidState,
  NotFound,
  QuotaExceeded,
  ServiceUnavailable,
  statusOf,
  TenantSuspended
} from "../domain/Errors.js"
import type { DocumentId, TenantId } from "../domain/Ids.js"
import { cursorOf, pageSize, toPage } from "../domain/Pagination.js"
import { listedEnvironments, type TenantReach } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import { TenantService } from "../tenants/TenantService.js"
import { DocumentJson, type Issuer, makeAcceptance } from "./Acceptance.js"
import type { ListDocumentsParams, NewDocument } from "./Api.js"
import { DocumentRepo, toDocument } from "./DocumentRepo.js"
import { Idempotency, requestHash } from "./Idempotency.js"
import { IssuanceQueue } from "./IssuanceQueue.js"

export type { Issuer } from "./Acceptance.js"

const DAY_MS = 24 * 60 * 60 * 1000

/** The UTC day (YYYY-MM-DD) `days` days after the UTC midnight `from`. */
const utcDay = (from: Date, days: number) => new Date(from.getTime() + days * DAY_MS).toISOString().slice(0, 10)

/** A note exists from authorization on; a cancelled one keeps its files (they say it is cancelled). */
const filesStatuses = new Set(["authorized", "cancel_requested", "cancelled"])

const authorityUnreachable = new ServiceUnavailable({
  message: "The tax authority did not answer; retry after the number of seconds in Retry-After.",
  retry_after: 30
})

const ContractError = Schema.Union([QuotaExceeded, TenantSuspended, CredentialRequired, Conflict, InvalidRequest])

// Stored outcomes are JSON (a jsonb column): encoded and decoded with the JSON codecs, as over HTTP.
const ContractErrorJson = Schema.toCodecJson(ContractError)

export class DocumentService extends Context.Service<DocumentService>()("etd/DocumentService", {
  make: Effect.gen(function*() {
    const repo = yield* DocumentRepo
    const inTransaction = yield* makeTransaction
    const idempotency = yield* Idempotency
    const jobs = yield* IssuanceQueue
    const tenants = yield* TenantService
    const authorities = yield* TaxAuthorities
    const { accept } = yield* makeAcceptance

    /** Replays a stored outcome: the original success, or the original contract error. */
    const replay = (status: number, body: unknown) =>
      status === 202
        ? Effect.orDie(Schema.decodeUnknownEffect(DocumentJson)(body))
        : Effect.flatMap(Effect.orDie(Schema.decodeUnknownEffect(ContractErrorJson)(body)), Effect.fail)

    /**
     * Issues a document. `onReplay` runs when the answer (a success or a contract error) is the one
     * stored for an earlier request with the same Idempotency-Key, so the caller can say so (the
     * HTTP layer's `Idempotent-Replayed` header).
     */
    const issue = Effect.fn("DocumentService.issue")(function*(
      issuer: Issuer,
      input: NewDocument,
      idempotencyKey: string | undefined,
      onReplay: Effect.Effect<void> = Effect.void
    ) {
      yield* Effect.annotateCurrentSpan({ "tenant.id": issuer.tenantId, "document.environment": issuer.environment })
      if (idempotencyKey === undefined) {
        return yield* accept(issuer, input, null)
      }
      const scope = { ...issuer, key: idempotencyKey }
      const claim = yield* idempotency.claimPatiently(scope, requestHash(input))
      switch (claim._tag) {
        case "InFlight":
          return yield* new IdempotencyConflict()
        case "Reused":
          return yield* new IdempotencyKeyReused()
        case "Replay":
          yield* onReplay
          return yield* replay(claim.status, claim.body)
        case "Claimed":
          break
      }
      const owned = { scope, token: claim.token }
      const document = yield* accept(issuer, input, owned).pipe(
        idempotency.hold(scope, claim.token),
        Effect.tapError((error) =>
          // Not an outcome worth replaying (as a refused body never is, Stripe-style): the corrected
          // request, or the same one once the tenant completed its registration, may use the same key.
          error._tag === "NotFound" || error._tag === "InvalidRequest" || error._tag === "RegistrationIncomplete"
            ? idempotency.release(scope, claim.token)
            : error._tag === "IdempotencyConflict"
            // The key was taken over by a newer request: that one's answer is the one to keep.
            ? Effect.void
            : idempotency.complete(scope, claim.token, statusOf(error), Schema.encodeSync(ContractErrorJson)(error))
              .pipe(
                Effect.catchTag("IdempotencyConflict", () => Effect.void)
              )
        ),
        // A crash or interruption has no answer worth replaying: give the key back for a retry.
        Effect.onExit((exit) =>
          Exit.isFailure(exit) && Option.isNone(Cause.findErrorOption(exit.cause))
            ? idempotency.release(scope, claim.token)
            : Effect.void
        )
      )
      return document
    })

    const get = Effect.fn("DocumentService.get")(function*(access: TenantReach, id: DocumentId) {
      const row = yield* repo.find(access.tenantId, access.environment, id)
      return toDocument(
        yield* Option.match(row, {
          onNone: () => Effect.fail(new NotFound({ message: "No such document." })),
          onSome: Effect.succeed
        })
      )
    })

    const list = Effect.fn("DocumentService.list")(function*(access: TenantReach, params: ListDocumentsParams) {
      const cursor = cursorOf(params)
      const environments = listedEnvironments(access.environment, params.environment)
      const rows = Arr.isReadonlyArrayNonEmpty(environments)
        ? yield* repo.list(access.tenantId, environments, {
          limit: pageSize(params.limit),
          cursor,
          status: params.status,
          reference: params.reference,
          createdGte: params.created_gte === undefined ? undefined : new Date(params.created_gte),
          createdLt: params.created_lt === undefined ? undefined : new Date(params.created_lt)
        })
        : []
      const page = toPage(rows, pageSize(params.limit), cursor)
      return { ...page, data: page.data.map(toDocument) }
    })

    /**
     * Documents created per UTC day and environment over the last `days` days, today (UTC)
     * included, oldest first; a day without documents counts zero.
     */
    const usage = Effect.fn("DocumentService.usage")(function*(tenantId: TenantId, days: number) {
      const at = yield* now
      const tomorrow = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1))
      const from = new Date(tomorrow.getTime() - days * DAY_MS)
      const counts = new Map<string, { live: number; test: number }>()
      for (const row of yield* repo.dailyCounts(tenantId, from, tomorrow)) {
        const day = counts.get(row.day) ?? { live: 0, test: 0 }
        counts.set(row.day, { ...day, [row.environment]: row.count })
      }
      return {
        object: "usage" as const,
        days: Arr.makeBy(days, (i) => {
          const date = utcDay(from, i)
          return { date, ...(counts.get(date) ?? { live: 0, test: 0 }) }
        })
      }
    })

    /** The same for a key and a member's session: what happens next depends on the document's environment only. */
    const cancel = Effect.fn("DocumentService.cancel")(function*(
      access: TenantReach,
      id: DocumentId,
      request: { reason_code: "issue_error" | "service_not_provided" | "other"; reason: string }
    ) {
      const document = yield* Effect.gen(function*() {
        const found = yield* repo.findForUpdate(access.tenantId, access.environment, id)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such document." })
        const row = found.value
        if (row.status !== "authorized") {
          return yield* new InvalidState({
            message: `Only an authorized document can be cancelled; this one is ${row.status}.`
          })
        }
        const at = yield* now
        // What the authority would refuse in the request is a 400 now, not a failed cancellation later.
        const tenant = yield* tenants.issuer(access.tenantId)
        if (Option.isSome(tenant)) {
          yield* authorities.for(row.environment).cancellationRequirementsFor({
            tenantId: row.tenantId,
            submissionId: row.submissionId,
            environment: row.environment,
            issuerTaxId: tenant.value.taxId,
            accessKey: row.authority!.access_key,
            reasonCode: request.reason_code,
            reason: request.reason,
            requestedAt: at
          })
        }
        const cancellation = {
          reason_code: request.reason_code,
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

    /** A document of the reader's tenant: in the key's environment, or in either for a member's session. */
    const findFor = (reader: TenantReach, id: DocumentId) =>
      Effect.flatMap(
        repo.find(reader.tenantId, reader.environment, id),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ message: "No such document." })),
          onSome: Effect.succeed
        })
      )

    /**
     * The note's NFS-e XML as the authority returned it. A note authorized before its XML was kept
     * is asked of the authority once (by its submission id) and kept from then on.
     */
    const noteOf = (reader: TenantReach, id: DocumentId) =>
      Effect.gen(function*() {
        const row = yield* findFor(reader, id)
        if (row.authority === null || !filesStatuses.has(row.status)) {
          return yield* new InvalidState({
            message: `The document's files exist once the authority has authorized it; this one is ${row.status}.`
          })
        }
        const stored = yield* repo.findNfseXml(row.id)
        if (Option.isSome(stored)) return { row, authority: row.authority, nfseXml: stored.value }
        const found = yield* authorities.for(row.environment).lookup({
          tenantId: row.tenantId,
          submissionId: row.submissionId
        }).pipe(
          Effect.catchTags({
            RequestNotSent: (error) => Effect.fail(new CredentialRequired({ message: error.message })),
            AuthorityUnavailable: () => Effect.fail(authorityUnreachable),
            AuthorityTimeout: () => Effect.fail(authorityUnreachable)
          })
        )
        if (Option.isNone(found)) {
          return yield* Effect.die(new Error(`the authority has no record of authorized document ${row.id}`))
        }
        const nfseXml = found.value.authorization.nfseXml
        yield* repo.storeNfseXml(row.id, nfseXml, yield* now)
        return { row, authority: row.authority, nfseXml }
      })

    const nfseXml = Effect.fn("DocumentService.nfseXml")(function*(reader: TenantReach, id: DocumentId) {
      const note = yield* noteOf(reader, id)
      return { xml: note.nfseXml, document: toDocument(note.row) }
    })

    /** The DANFSe, rendered from the stored NFS-e XML (or, when configured, the national DANFSe API's). */
    const danfse = Effect.fn("DocumentService.danfse")(function*(reader: TenantReach, id: DocumentId) {
      const note = yield* noteOf(reader, id)
      const pdf = yield* authorities.for(note.row.environment).danfse({
        tenantId: note.row.tenantId,
        accessKey: note.authority.access_key,
        nfseXml: note.nfseXml,
        cancelled: note.row.status === "cancelled",
        // No status says a note was replaced until substitution (e105102) is recorded on documents.
        substituted: false
      }).pipe(
        Effect.catchTags({
          RequestNotSent: (error) => Effect.fail(new CredentialRequired({ message: error.message })),
          AuthorityUnavailable: () => Effect.fail(authorityUnreachable),
          AuthorityTimeout: () => Effect.fail(authorityUnreachable)
        })
      )
      return { pdf, document: toDocument(note.row) }
    })

    return { issue, get, list, usage, cancel, nfseXml, danfse } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([DocumentRepo.layer, IssuanceQueue.layer, TenantService.layer, Idempotency.layer, Transaction.layer])
  )
}
