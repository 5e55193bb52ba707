/**
 * Issuing, reading and cancelling documents (SPEC §6). Acceptance (Acceptance.ts) stores a
 * document and its queued submission together or not at all; the submission itself happens in the
 * background (IssuanceWorker).
 */
import { Array as Arr, Cause, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import { GoodsAuthorities } from "../authority/GoodsAuthority.js"
import { TaxAuthorities } from "../authority/TaxAuthority.js"
import { Transaction } from "../db/Repository.js"
import type { ListDocumentsParams } from "../domain/DocumentListParams.js"
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
import { TenantService } from "../tenants/TenantService.js"
import {
  DocumentJson,
  type IdempotencyClaim,
  type Issuer,
  makeAcceptance,
  type SubstitutionRequest
} from "./Acceptance.js"
import type { NewAnyDocument, NewDocument } from "./Api.js"
import { makeCancellation } from "./Cancellation.js"
import { DocumentRepo } from "./DocumentRepo.js"
import { isServiceDocument, toDocument } from "./DocumentView.js"
import { goodsNoteOf } from "./GoodsNotes.js"
import { Idempotency, type IdempotencyScope, requestHash } from "./Idempotency.js"
import { IssuanceQueue } from "./IssuanceQueue.js"
import { NoteFileRepo } from "./NoteFileRepo.js"

export type { Issuer } from "./Acceptance.js"

const DAY_MS = 24 * 60 * 60 * 1000

/** The UTC day (YYYY-MM-DD) `days` days after the UTC midnight `from`. */
const utcDay = (from: Date, days: number) => new Date(from.getTime() + days * DAY_MS).toISOString().slice(0, 10)

/** A note exists from authorization on; a cancelled or replaced one keeps its files (they say so). */
const filesStatuses = new Set([
  "authorized",
  "cancel_requested",
  "cancelled",
  "cancellation_in_analysis",
  "substituted"
])

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
    const files = yield* NoteFileRepo
    const idempotency = yield* Idempotency
    const authorities = yield* TaxAuthorities
    const goodsAuthorities = yield* GoodsAuthorities
    const { accept } = yield* makeAcceptance
    const { cancel } = yield* makeCancellation

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
    const accepting = (
      issuer: Issuer,
      input: NewAnyDocument,
      idempotencyKey: string | undefined,
      onReplay: Effect.Effect<void>,
      substituting?: SubstitutionRequest
    ) =>
      Effect.gen(function*() {
        yield* Effect.annotateCurrentSpan({ "tenant.id": issuer.tenantId, "document.environment": issuer.environment })
        if (idempotencyKey === undefined) {
          return yield* accept(issuer, input, null, substituting)
        }
        const scope = { ...issuer, key: idempotencyKey }
        // A substitution's key covers the original and the reason too: the same body for another note is another request.
        const hash = requestHash(substituting === undefined ? input : { document: input, substitution: substituting })
        // A new key, the common case, is taken by the statement that stores the document (a test
        // document is one statement in all). Else the key is claimed first: a key that exists (that
        // statement wrote nothing) is replayed, in flight, or taken over and the work done again; a
        // refusal is the work's outcome, stored as the key's answer (or the key given back).
        return yield* accept(issuer, input, { _tag: "New", scope, hash }, substituting).pipe(
          Effect.catch((refusal) =>
            claiming(scope, hash, onReplay, (owned) =>
              refusal._tag === "IdempotencyConflict"
                ? accept(issuer, input, owned, substituting)
                : Effect.fail(refusal))
          )
        )
      })

    /** An Idempotency-Key claimed, then `work` done under the claim, then its outcome stored as the key's answer. */
    const claiming = (
      scope: IdempotencyScope,
      hash: string,
      onReplay: Effect.Effect<void>,
      work: (owned: Extract<IdempotencyClaim, { _tag: "Claimed" }>) => ReturnType<typeof accept>
    ) =>
      Effect.gen(function*() {
        const claim = yield* idempotency.claimPatiently(scope, hash)
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
        const owned = { _tag: "Claimed" as const, scope, token: claim.token }
        const document = yield* work(owned).pipe(
          idempotency.hold(scope, claim.token),
          Effect.tapError((error) =>
            // Not an outcome worth replaying (as a refused body never is, Stripe-style): the corrected
            // request, or the same one once the tenant completed its registration, may use the same key.
            // Nor is a substitution refused for the original's state, which may change.
            error._tag === "NotFound" || error._tag === "InvalidRequest" || error._tag === "InvalidState" ||
              error._tag === "RegistrationIncomplete"
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

    const issue = Effect.fn("DocumentService.issue")(function*(
      issuer: Issuer,
      input: NewAnyDocument,
      idempotencyKey: string | undefined,
      onReplay: Effect.Effect<void> = Effect.void
    ) {
      return yield* accepting(issuer, input, idempotencyKey, onReplay).pipe(
        // Only a substitution is refused for a document's state.
        Effect.catchTag("InvalidState", (error) => Effect.die(error))
      )
    })

    /**
     * Issues a corrected note in place of an authorized one (SPEC §6 "Substitution"): a new document,
     * numbered, counted and idempotent like any other, whose DPS names the original (`subst`). The
     * original becomes `substituted` when the authority authorizes the new one (IssuanceWorker).
     */
    const substitute = Effect.fn("DocumentService.substitute")(function*(
      issuer: Issuer,
      original: DocumentId,
      request: {
        readonly document: NewDocument
        readonly reason_code: SubstitutionRequest["reason_code"]
        readonly reason?: string | undefined
      },
      idempotencyKey: string | undefined,
      onReplay: Effect.Effect<void> = Effect.void
    ) {
      yield* Effect.annotateCurrentSpan({ "document.substitutes": original })
      const document = yield* accepting(issuer, request.document, idempotencyKey, onReplay, {
        original,
        reason_code: request.reason_code,
        ...(request.reason === undefined ? {} : { reason: request.reason })
      })
      // A substitute is a service invoice: its request is one (the NF-e has no substitution).
      return document.type === "service_invoice"
        ? document
        : yield* Effect.die(new Error(`substitute ${document.id} is a ${document.type}`))
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
          type: params.type,
          reference: params.reference,
          takerTaxId: params.taker_tax_id,
          takerName: params.taker_name,
          nfseNumber: params.nfse_number,
          number: params.number,
          series: params.series,
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
        if (row.status === "contingency") {
          // An NFC-e issued offline: its signed note, kept when it was issued, is the consumer's until authorized.
          const offline = yield* files.findNfseXml(row.id)
          if (Option.isSome(offline)) return { row, authority: row.authority, nfseXml: offline.value }
        }
        if (row.authority === null || !filesStatuses.has(row.status)) {
          return yield* new InvalidState({
            message: `The document's files exist once the authority has authorized it; this one is ${row.status}.`
          })
        }
        const stored = yield* files.findNfseXml(row.id)
        if (Option.isSome(stored)) return { row, authority: row.authority, nfseXml: stored.value }
        const found = yield* (isServiceDocument(row)
          ? Effect.map(
            authorities.for(row.environment).lookup({ tenantId: row.tenantId, submissionId: row.submissionId }),
            Option.map((record) => record.authorization.nfseXml)
          )
          : Effect.map(
            goodsAuthorities.for(row.environment).lookup({
              tenantId: row.tenantId,
              submissionId: row.submissionId,
              note: goodsNoteOf(row)
            }),
            Option.map((authorization) => authorization.xml)
          )).pipe(
            Effect.catchTags({
              RequestNotSent: (error) => Effect.fail(new CredentialRequired({ message: error.message })),
              AuthorityUnavailable: () => Effect.fail(authorityUnreachable),
              AuthorityTimeout: () => Effect.fail(authorityUnreachable)
            })
          )
        if (Option.isNone(found)) {
          return yield* Effect.die(new Error(`the authority has no record of authorized document ${row.id}`))
        }
        yield* files.storeNfseXml(row.id, found.value, yield* now)
        return { row, authority: row.authority, nfseXml: found.value }
      })

    const nfseXml = Effect.fn("DocumentService.nfseXml")(function*(reader: TenantReach, id: DocumentId) {
      const note = yield* noteOf(reader, id)
      return { xml: note.nfseXml, document: toDocument(note.row) }
    })

    /**
     * The note's PDF: the DANFSe of an NFS-e, rendered from its stored XML (or, when configured, the
     * national DANFSe API's); the DANFE (A4) of an NF-e or the DANFE NFC-e, from its `nfeProc`.
     */
    const danfse = Effect.fn("DocumentService.danfse")(function*(reader: TenantReach, id: DocumentId) {
      const note = yield* noteOf(reader, id)
      if (!isServiceDocument(note.row)) {
        const pdf = yield* goodsAuthorities.for(note.row.environment).danfe({
          xml: note.nfseXml,
          cancelled: note.row.status === "cancelled"
        })
        return { pdf, document: toDocument(note.row) }
      }
      const pdf = yield* authorities.for(note.row.environment).danfse({
        tenantId: note.row.tenantId,
        accessKey: note.authority!.access_key, // a service invoice is never in contingency
        nfseXml: note.nfseXml,
        cancelled: note.row.status === "cancelled",
        substituted: note.row.status === "substituted"
      }).pipe(
        Effect.catchTags({
          RequestNotSent: (error) => Effect.fail(new CredentialRequired({ message: error.message })),
          AuthorityUnavailable: () => Effect.fail(authorityUnreachable),
          AuthorityTimeout: () => Effect.fail(authorityUnreachable)
        })
      )
      return { pdf, document: toDocument(note.row) }
    })

    return { issue, substitute, get, list, usage, cancel, nfseXml, danfse } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([
      DocumentRepo.layer,
      NoteFileRepo.layer,
      IssuanceQueue.layer,
      TenantService.layer,
      Idempotency.layer,
      Transaction.layer
    ])
  )
}
