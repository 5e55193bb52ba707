/**
 * Issuing, reading and cancelling documents (SPEC §6). Acceptance is one transaction: quota,
 * number, document and its queued submission are stored together or not at all. The submission
 * itself happens in the background (IssuanceWorker).
 */
import { Array as Arr, Cause, Context, Effect, Exit, Layer, Metric, Option, Result, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { makeTransaction, Transaction } from "../db/Repository.js"
import {
  Conflict,
  CredentialRequired,
  IdempotencyConflict,
  IdempotencyKeyReused,
  InvalidRequest,
  invalidField,
  InvalidState,
  NotFound,
  QuotaExceeded,
  ServiceUnavailable,
  statusOf,
  TenantSuspended
} from "../domain/Errors.js"
import { encodeId, idPrefixes } from "../domain/Ids.js"
import { computeAmounts } from "../domain/Money.js"
import { cursorOf, toPage, pageSize } from "../domain/Pagination.js"
import { type Environment, listedEnvironments, type TenantReach } from "../domain/Principal.js"
import { brazilianDate, now, quotaPeriod } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import type { ListDocumentsParams, NewDocument } from "./Api.js"
import { Document } from "../domain/Document.js"
import { DocumentRepo, toDocument } from "./DocumentRepo.js"
import { IssuanceQueue } from "./IssuanceQueue.js"
import { submissionDocumentOf } from "./Submission.js"
import { TenantService } from "../tenants/TenantService.js"
import { dpsId, dpsIdPrefix, dpsNumberWidth } from "../authority/sefin/Dps.js"
import { type Refusal, TaxAuthorityLive, TaxAuthoritySandbox } from "../authority/TaxAuthority.js"
import { Idempotency, type IdempotencyScope, requestHash } from "./Idempotency.js"
import { documents as documentsMetric, quotaExceeded, quotaUsage } from "../telemetry/Metrics.js"

export interface Issuer {
  readonly tenantId: string
  readonly environment: Environment
}


const DAY_MS = 24 * 60 * 60 * 1000

/** The UTC day (YYYY-MM-DD) `days` days after the UTC midnight `from`. */
const utcDay = (from: Date, days: number) => new Date(from.getTime() + days * DAY_MS).toISOString().slice(0, 10)

/** A note exists from authorization on; a cancelled one keeps its files (they say it is cancelled). */
const filesStatuses = new Set(["authorized", "cancel_requested", "cancelled"])

const authorityUnreachable = new ServiceUnavailable({
  message: "The tax authority did not answer; retry after the number of seconds in Retry-After.",
  retry_after: 30
})

/** What the authority would refuse, as the 400 that names each field (at most 20 issues, as for validation). */
const refused = (refusals: ReadonlyArray<Refusal>) =>
  new InvalidRequest({
    message: `The request is not valid for the national NFS-e system. ${refusals[0]!.message}`,
    issues: refusals.slice(0, 20).map(({ message, path }) => ({ path: [...path], message }))
  })

const ContractError = Schema.Union([QuotaExceeded, TenantSuspended, CredentialRequired, Conflict, InvalidRequest])
type ContractError = typeof ContractError.Type

// Stored outcomes are JSON (a jsonb column): encoded and decoded with the JSON codecs, as over HTTP.
const DocumentJson = Schema.toCodecJson(Document)
const ContractErrorJson = Schema.toCodecJson(ContractError)

export class DocumentService extends Context.Service<DocumentService>()("etd/DocumentService", {
  make: Effect.gen(function*() {
    const repo = yield* DocumentRepo
    const inTransaction = yield* makeTransaction
    const events = yield* EventLog
    const idempotency = yield* Idempotency
    const jobs = yield* IssuanceQueue
    const tenants = yield* TenantService
    const live = yield* TaxAuthorityLive
    const sandbox = yield* TaxAuthoritySandbox
    const authorityFor = (environment: Environment) => (environment === "live" ? live : sandbox)

    const accept = (issuer: Issuer, input: NewDocument, claim: { scope: IdempotencyScope; token: string } | null) =>
      Effect.gen(function*() {
        const amounts = yield* Effect.fromResult(Result.mapError(
          computeAmounts({
            services: input.amounts.services,
            deductions: input.amounts.deductions,
            issRate: input.amounts.iss_rate
          }),
          (error) => invalidField(["amounts", ...error.path], error.message)
        ))
        const at = yield* now
        const found = yield* tenants.issuer(issuer.tenantId)
        if (Option.isNone(found)) return yield* new NotFound()
        const tenant = found.value
        const authority = authorityFor(issuer.environment)
        if (authority.target === "sefin") {
          // SPEC §7: the national system takes only a DPS signed with the tenant's own certificate.
          if (!tenant.verified || !(yield* authority.canSubmitFor(issuer.tenantId))) {
            return yield* new CredentialRequired({
              message: `Documents of the ${issuer.environment} environment go to the national NFS-e system, which needs ` +
                "the tenant's A1 certificate: upload an active certificate for the tenant's tax id first."
            })
          }
          if (input.service.nbs_code === undefined) {
            return yield* new InvalidRequest({
              message: "The request is not valid. service.nbs_code: the national NFS-e system requires the service's " +
                "9-digit NBS code.",
              issues: [{ path: ["service", "nbs_code"], message: "required by the national NFS-e system (cNBS)" }]
            })
          }
        }
        if (issuer.environment === "live") {
          // SPEC §5: once another tenant has proven the tax id, this one keeps no claim on it for live
          // issuing (it cannot hold a certificate for it either: its upload would be a 409).
          if (tenant.taxIdVerifiedByAnother) {
            return yield* new CredentialRequired({
              message: "Another tenant has proven this tax id with its A1 certificate; this tenant cannot issue live " +
                "documents for it. Test documents are unaffected."
            })
          }
          if (tenant.status === "suspended") return yield* new TenantSuspended()
        }
        const series = input.series ?? "1"
        // One clock reading for the id, created_at and the default issue date: list filters on
        // created_at are id bounds (DocumentRepo.list), so the id and created_at agree to the millisecond.
        const document = {
          id: encodeId(idPrefixes.document, at.getTime(), randomBytes(10)),
          tenantId: issuer.tenantId,
          environment: issuer.environment,
          type: "service_invoice" as const,
          status: "queued" as const,
          reference: input.reference ?? null,
          series,
          issueDate: input.issue_date ?? brazilianDate(at),
          taker: input.taker,
          service: input.service,
          amounts,
          notes: input.notes ?? null,
          createdAt: at,
          updatedAt: at
        }
        // The DPS id: deterministic, so a retry carries it again and the authority can say whether
        // it already authorized it (SPEC §6 "Never issue twice"). The database completes it with the number.
        const dps = { municipalityCode: input.service.municipality_code, taxId: tenant.taxId, series }
        // What the authority would refuse is a 400 now, not a failed note later, and before anything
        // is taken. The number is not drawn yet: every number is alike to the schema (nDPS, 1 to 15 digits).
        const refusals = authority.refusalsOf(
          submissionDocumentOf(
            { ...document, number: 1 },
            { taxId: tenant.taxId, name: tenant.name, simplesNacional: tenant.simplesNacional }
          ),
          at
        )
        if (refusals.length > 0) return yield* refused(refusals)
        const job = { documentId: document.id, tenantId: document.tenantId, kind: "submit" as const, traceparent: yield* currentTraceparent }

        let quotaUsed: number | undefined
        const store = Effect.gen(function*() {
          if (issuer.environment === "live") {
            const period = quotaPeriod(at)
            const used = yield* repo.takeQuota(issuer.tenantId, period, tenant.monthlyQuota)
            if (Option.isNone(used)) {
              return yield* new QuotaExceeded({
                message: `The monthly quota of ${tenant.monthlyQuota} live documents for ${period} is used up.`
              })
            }
            yield* quotaThresholds(issuer.tenantId, period, used.value, tenant.monthlyQuota)
            quotaUsed = used.value
          }
          const number = yield* repo.accept(
            document,
            { prefix: dpsIdPrefix(dps), width: dpsNumberWidth },
            jobs.enqueueing([job], at)
          )
          const accepted = toDocument({
            ...document,
            number,
            submissionId: dpsId({ ...dps, number }),
            authority: null,
            rejection: null,
            cancellation: null,
            attempts: 0,
            lastError: null
          })
          if (claim !== null) yield* idempotency.complete(claim.scope, claim.token, 202, Schema.encodeSync(DocumentJson)(accepted))
          return accepted
        })
        // A test document without an Idempotency-Key is one statement, so no transaction holds the
        // series' lock across round trips; quota (live) and a stored answer (a key) are written with
        // it atomically, in a transaction.
        // The metrics follow what was committed: a transaction that rolls back (a duplicate reference) changes none.
        const accepted = yield* (issuer.environment === "live" || claim !== null ? inTransaction(store) : store).pipe(
          Effect.tapError((error) =>
            error._tag === "QuotaExceeded"
              ? Metric.update(Metric.withAttributes(quotaExceeded, { "tenant.id": issuer.tenantId }), 1)
              : Effect.void
          )
        )
        yield* Metric.update(Metric.withAttributes(documentsMetric, { status: "queued", environment: issuer.environment }), 1)
        if (quotaUsed !== undefined) {
          yield* Metric.update(Metric.withAttributes(quotaUsage, { "tenant.id": issuer.tenantId }), quotaUsed / tenant.monthlyQuota)
        }
        return accepted
      })

    const quotaThresholds = (tenantId: string, period: string, used: number, limit: number) =>
      Effect.forEach([80, 100] as const, (threshold) =>
        used === Math.ceil((limit * threshold) / 100)
          ? events.record({
            tenantId,
            environment: "live",
            type: "quota.threshold",
            object: { object: "quota", tenant_id: tenantId, period, limit, used, threshold }
          })
          : Effect.void, { discard: true })

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
          // request may use the same key.
          error._tag === "NotFound" || error._tag === "InvalidRequest"
            ? idempotency.release(scope, claim.token)
            : error._tag === "IdempotencyConflict"
            // The key was taken over by a newer request: that one's answer is the one to keep.
            ? Effect.void
            : idempotency.complete(scope, claim.token, statusOf(error), Schema.encodeSync(ContractErrorJson)(error)).pipe(
              Effect.catchTag("IdempotencyConflict", () => Effect.void)
            )),
        // A crash or interruption has no answer worth replaying: give the key back for a retry.
        Effect.onExit((exit) =>
          Exit.isFailure(exit) && Option.isNone(Cause.findErrorOption(exit.cause))
            ? idempotency.release(scope, claim.token)
            : Effect.void)
      )
      return document
    })

    const get = Effect.fn("DocumentService.get")(function*(access: TenantReach, id: string) {
      const row = yield* repo.find(access.tenantId, access.environment, id)
      return toDocument(yield* Option.match(row, {
        onNone: () => Effect.fail(new NotFound({ message: "No such document." })),
        onSome: Effect.succeed
      }))
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
    const usage = Effect.fn("DocumentService.usage")(function*(tenantId: string, days: number) {
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
      id: string,
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
        const refusals = Option.isNone(tenant) ? [] : authorityFor(row.environment).cancellationRefusalsOf({
          tenantId: row.tenantId,
          submissionId: row.submissionId,
          environment: row.environment,
          issuerTaxId: tenant.value.taxId,
          accessKey: row.authority!.access_key,
          reasonCode: request.reason_code,
          reason: request.reason
        }, at)
        if (refusals.length > 0) return yield* refused(refusals)
        const cancellation = {
          reason_code: request.reason_code,
          reason: request.reason,
          requested_at: at,
          cancelled_at: null,
          protocol: null,
          error: null
        }
        yield* repo.update(row.id, { status: "cancel_requested", cancellation }, at)
        yield* jobs.enqueue([{ documentId: row.id, tenantId: row.tenantId, kind: "cancel", traceparent: yield* currentTraceparent }])
        return toDocument({ ...row, status: "cancel_requested", cancellation, updatedAt: at })
      }).pipe(inTransaction)
      return document
    })

    /** A document of the reader's tenant: in the key's environment, or in either for a member's session. */
    const findFor = (reader: TenantReach, id: string) =>
      Effect.flatMap(
        repo.find(reader.tenantId, reader.environment, id),
        Option.match({ onNone: () => Effect.fail(new NotFound({ message: "No such document." })), onSome: Effect.succeed })
      )

    /**
     * The note's NFS-e XML as the authority returned it. A note authorized before its XML was kept
     * is asked of the authority once (by its submission id) and kept from then on.
     */
    const noteOf = (reader: TenantReach, id: string) =>
      Effect.gen(function*() {
        const row = yield* findFor(reader, id)
        if (row.authority === null || !filesStatuses.has(row.status)) {
          return yield* new InvalidState({
            message: `The document's files exist once the authority has authorized it; this one is ${row.status}.`
          })
        }
        const stored = yield* repo.findNfseXml(row.id)
        if (Option.isSome(stored)) return { row, authority: row.authority, nfseXml: stored.value }
        const found = yield* authorityFor(row.environment).lookup({ tenantId: row.tenantId, submissionId: row.submissionId }).pipe(
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

    const nfseXml = Effect.fn("DocumentService.nfseXml")(function*(reader: TenantReach, id: string) {
      const note = yield* noteOf(reader, id)
      return { xml: note.nfseXml, document: toDocument(note.row) }
    })

    /** The DANFSe: the national DANFSe service's PDF, or the one the simulator's layer renders. */
    const danfse = Effect.fn("DocumentService.danfse")(function*(reader: TenantReach, id: string) {
      const note = yield* noteOf(reader, id)
      const pdf = yield* authorityFor(note.row.environment).danfse({
        tenantId: note.row.tenantId,
        accessKey: note.authority.access_key,
        nfseXml: note.nfseXml,
        cancelled: note.row.status === "cancelled"
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
