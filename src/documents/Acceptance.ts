/**
 * Accepting a document: its rules (what the tenant and the authority require), its numbered store
 * (quota, number, document and its queued submission together or not at all) and what it counts.
 * The submission itself happens in the background (IssuanceWorker).
 */
import { Effect, Metric, Option, Schema } from "effect"
import type { Statement } from "effect/sql"
import { randomBytes } from "node:crypto"
import { GoodsAuthorities } from "../authority/GoodsAuthority.js"
import { TaxAuthorities } from "../authority/TaxAuthority.js"
import { makeTransaction } from "../db/Repository.js"
import type { SubstitutionReasonCode } from "../domain/Document.js"
import {
  CredentialRequired,
  IdempotencyConflict,
  InvalidState,
  NotFound,
  QuotaExceeded,
  RegistrationIncomplete,
  TenantSuspended
} from "../domain/Errors.js"
import { type AnyDocument, AnyDocument as AnyDocumentSchema, goodsIssuerRecord } from "../domain/GoodsDocument.js"
import type { GoodsInvoiceRequest } from "../domain/GoodsInvoice.js"
import { type DocumentId, encodeId, type TenantId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { missingForServiceInvoice } from "../domain/Registration.js"
import { brazilianDate, now, quotaPeriod } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { documents as documentsMetric, quotaExceeded, quotaUsage } from "../telemetry/Metrics.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import { TenantService } from "../tenants/TenantService.js"
import type { NewAnyDocument, NewDocument } from "./Api.js"
import {
  DocumentRepo,
  type UnnumberedDocument,
  type UnnumberedGoodsDocument,
  type UnnumberedServiceDocument
} from "./DocumentRepo.js"
import { toGoodsDocument, toServiceDocument } from "./DocumentView.js"
import { goodsIssuerOf } from "./GoodsEmitter.js"
import { checkGoodsInvoice } from "./GoodsRules.js"
import { Idempotency, type IdempotencyScope } from "./Idempotency.js"
import { IssuanceQueue } from "./IssuanceQueue.js"
import { taxContentOf } from "./TaxRules.js"

export interface Issuer {
  readonly tenantId: TenantId
  readonly environment: Environment
}

/** What makes a new document the substitute of an authorized one (`POST …/substitute`). */
export interface SubstitutionRequest {
  readonly original: DocumentId
  readonly reason_code: SubstitutionReasonCode
  readonly reason?: string | undefined
}

/** The Idempotency-Key a request holds, if any: its answer is stored with the document. */
export type IdempotencyClaim =
  /** Claimed by a statement of its own, held by `token` until the answer is stored. */
  | { readonly _tag: "Claimed"; readonly scope: IdempotencyScope; readonly token: string }
  /** Not claimed yet: the statement that stores the document takes it (`Idempotency.storing`). */
  | { readonly _tag: "New"; readonly scope: IdempotencyScope; readonly hash: string }
  | null

// Stored answers are JSON (a jsonb column): encoded with the JSON codec, as over HTTP.
export const DocumentJson = Schema.toCodecJson(AnyDocumentSchema)

/** A document the rules accepted, before it is numbered and stored. */
interface Accepted {
  readonly document: UnnumberedDocument
  readonly tenant: { readonly monthlyQuota: number }
  readonly submissionId: { readonly prefix: string; readonly width: number }
}

export const makeAcceptance = Effect.gen(function*() {
  const repo = yield* DocumentRepo
  const inTransaction = yield* makeTransaction
  const events = yield* EventLog
  const idempotency = yield* Idempotency
  const jobs = yield* IssuanceQueue
  const tenants = yield* TenantService
  const authorities = yield* TaxAuthorities
  const goodsAuthorities = yield* GoodsAuthorities

  /**
   * The note a substitute replaces, as the national system requires it: of the same tenant and
   * environment (the same issuer), authorized, and not replaced already.
   */
  const originalOf = (issuer: Issuer, request: SubstitutionRequest) =>
    Effect.gen(function*() {
      const found = yield* repo.find(issuer.tenantId, issuer.environment, request.original)
      if (Option.isNone(found)) return yield* new NotFound({ message: "No such document." })
      const original = found.value
      if (original.status !== "authorized" || original.authority === null) {
        return yield* new InvalidState({
          message: `Only an authorized document can be substituted; this one is ${original.status}.`
        })
      }
      return {
        substitutes: original.id,
        substitution: {
          reason_code: request.reason_code,
          reason: request.reason ?? null,
          original_access_key: original.authority.access_key
        }
      }
    })

  /**
   * The rules of a service invoice: what the request, the tenant and the environment's authority
   * require. A document the authority would refuse is an answer now, before anything is taken.
   */
  const serviceRules = (issuer: Issuer, input: NewDocument, substituting?: SubstitutionRequest) =>
    Effect.gen(function*() {
      const replaced = substituting === undefined ? {} : yield* originalOf(issuer, substituting)
      const at = yield* now
      const found = yield* tenants.issuer(issuer.tenantId)
      if (Option.isNone(found)) return yield* new NotFound()
      const tenant = found.value
      // What a service invoice needs of the provider's registration, in every mode: the simulator
      // issues the note the national system would, and that one names and locates its issuer.
      const missing = missingForServiceInvoice(tenant.registration)
      if (missing.length > 0) {
        return yield* new RegistrationIncomplete({
          message: `The tenant's registration lacks ${missing.map((path) => path.join(".")).join(", ")}: a service ` +
            "invoice names its provider and is issued in the provider's municipality. Complete it with " +
            "PATCH /v1/tenants/{tenantId}.",
          issues: missing.map((path) => ({ path: [...path], message: "required to issue a service invoice" }))
        })
      }
      const municipalityCode = tenant.registration.address!.municipality_code
      const { amounts, tax } = yield* Effect.fromResult(
        taxContentOf(input, tenant.simplesNacional ?? "not_opted", input.issue_date ?? brazilianDate(at))
      )
      const authority = authorities.for(issuer.environment)
      // One clock reading for the id, created_at and the default issue date: list filters on
      // created_at are id bounds (DocumentRepo.list), so the id and created_at agree to the millisecond.
      const document: UnnumberedServiceDocument = {
        id: encodeId("document", at.getTime(), randomBytes(10)),
        tenantId: issuer.tenantId,
        environment: issuer.environment,
        type: "service_invoice",
        status: "queued",
        reference: input.reference ?? null,
        series: input.series ?? "1",
        issueDate: input.issue_date ?? brazilianDate(at),
        taker: input.taker ?? null,
        intermediary: input.intermediary ?? null,
        service: input.service,
        amounts,
        tax,
        notes: input.notes ?? null,
        issuerMunicipalityCode: municipalityCode,
        ...replaced,
        createdAt: at,
        updatedAt: at
      }
      const submitted = {
        ...document,
        issuer: {
          taxId: tenant.taxId,
          name: tenant.name,
          simplesNacional: tenant.simplesNacional,
          municipalityCode,
          registration: tenant.registration
        }
      }
      // The number is not drawn yet: every number is alike to the authority's rules.
      yield* authority.requirementsFor({ tenantId: issuer.tenantId, verified: tenant.verified }, {
        ...submitted,
        number: 1
      })
      yield* liveStanding(issuer, tenant)
      const accepted: Accepted = { document, tenant, submissionId: authority.submissionIdOf(submitted) }
      return accepted
    })

  /** What only live documents need of the tenant: its own claim on the tax id, and not being suspended. */
  const liveStanding = (
    issuer: Issuer,
    tenant: { readonly taxIdVerifiedByAnother: boolean; readonly status: string }
  ) =>
    Effect.gen(function*() {
      if (issuer.environment !== "live") return
      // Once another tenant has proven the tax id, this one keeps no claim on it for live issuing
      // (it cannot hold a certificate for it either: its upload would be a 409).
      if (tenant.taxIdVerifiedByAnother) {
        return yield* new CredentialRequired({
          message: "Another tenant has proven this tax id with its A1 certificate; this tenant cannot issue live " +
            "documents for it. Test documents are unaffected."
        })
      }
      if (tenant.status === "suspended") return yield* new TenantSuspended()
    })

  /**
   * The rules of a goods invoice (NF-e, NFC-e): the emitter from the tenant's registration (422
   * naming what it lacks), the sale against the national rules (one 400 naming every field), and
   * what the environment's authority needs. The emitter is kept with the document as it is now.
   */
  const goodsRules = (issuer: Issuer, input: GoodsInvoiceRequest) =>
    Effect.gen(function*() {
      const at = yield* now
      const found = yield* tenants.issuer(issuer.tenantId)
      if (Option.isNone(found)) return yield* new NotFound()
      const tenant = found.value
      const emitter = yield* Effect.fromResult(goodsIssuerOf(tenant.taxId, tenant.registration))
      yield* Effect.fromResult(checkGoodsInvoice(input, emitter, at))
      const { reference: _reference, series: _series, type, ...sale } = input
      const document: UnnumberedGoodsDocument = {
        id: encodeId("document", at.getTime(), randomBytes(10)),
        tenantId: issuer.tenantId,
        environment: issuer.environment,
        type,
        status: "queued",
        reference: input.reference ?? null,
        series: input.series ?? "1",
        issueDate: brazilianDate(at),
        taker: null,
        goods: { sale, issuer: goodsIssuerRecord(emitter) },
        createdAt: at,
        updatedAt: at
      }
      const authority = goodsAuthorities.for(issuer.environment)
      const note = {
        environment: issuer.environment,
        documentId: document.id,
        request: input,
        issuer: emitter,
        series: Number(document.series),
        // The number is not drawn yet: every number is alike to the authority's requirements.
        number: 1,
        issuedAt: at
      }
      yield* authority.requirementsFor({ tenantId: issuer.tenantId, verified: tenant.verified }, note)
      yield* liveStanding(issuer, tenant)
      const accepted: Accepted = {
        document,
        tenant,
        submissionId: authority.submissionIdOf({ ...note, type })
      }
      return accepted
    })

  const rules = (issuer: Issuer, input: NewAnyDocument, substituting?: SubstitutionRequest) =>
    input.type === "service_invoice" ? serviceRules(issuer, input, substituting) : goodsRules(issuer, input)

  /** Raises the quota events when this document used up 80 % or all of the month's live quota. */
  const quotaThresholds = (tenantId: TenantId, period: string, used: number, limit: number) =>
    Effect.forEach([80, 100] as const, (threshold) =>
      used === Math.ceil((limit * threshold) / 100)
        ? events.record({
          tenantId,
          environment: "live",
          type: "quota.threshold",
          object: { object: "quota", tenant_id: tenantId, period, limit, used, threshold }
        })
        : Effect.void, { discard: true })

  /**
   * The numbered store: quota (live), number, document, its queued submission and the stored
   * answer of its Idempotency-Key, all or nothing. Returns the document and the quota now used.
   */
  const store = (accepted: Accepted, claim: IdempotencyClaim) =>
    Effect.gen(function*() {
      const { document, submissionId, tenant } = accepted
      let quotaUsed: number | undefined
      if (document.environment === "live") {
        const period = quotaPeriod(document.createdAt)
        const used = yield* repo.takeQuota(document.tenantId, period, tenant.monthlyQuota)
        if (Option.isNone(used)) {
          return yield* new QuotaExceeded({
            message: `The monthly quota of ${tenant.monthlyQuota} live documents for ${period} is used up.`
          })
        }
        yield* quotaThresholds(document.tenantId, period, used.value, tenant.monthlyQuota)
        quotaUsed = used.value
      }
      const job = {
        documentId: document.id,
        tenantId: document.tenantId,
        kind: "submit" as const,
        traceparent: yield* currentTraceparent
      }
      const numberedAs = (number: number): AnyDocument => {
        const unsettled = {
          number,
          submissionId: "",
          rejection: null,
          cancellation: null,
          attempts: 0,
          lastError: null,
          substitutedBy: null,
          takerNotification: null
        }
        return document.type === "service_invoice"
          ? toServiceDocument({
            ...document,
            ...unsettled,
            authority: null,
            substitutes: document.substitutes ?? null,
            substitution: document.substitution ?? null
          })
          : toGoodsDocument({
            ...document,
            ...unsettled,
            authority: null,
            contingency: null,
            substitutes: null,
            substitution: null
          })
      }
      // The stored answer is written by the statement that numbers the document (it fills the number in).
      const answer = claim === null ?
        undefined :
        (number: Statement.Fragment) => {
          const body = Schema.encodeSync(DocumentJson)(numberedAs(0))
          return claim._tag === "Claimed"
            ? idempotency.answering(claim.scope, claim.token, 202, body, [["number", number]])
            : idempotency.storing(claim.scope, claim.hash, document.createdAt, 202, body, [["number", number]])
        }
      const numbered = yield* repo.accept(document, submissionId, jobs.enqueueing(job, document.createdAt), answer)
      // Another request took the key over (this one looked dead), or had it already (a new key): the
      // statement wrote nothing (and a live document's transaction rolls its quota back).
      if (Option.isNone(numbered)) return yield* new IdempotencyConflict()
      const stored = numberedAs(numbered.value.number)
      return { stored, quotaUsed }
    })

  /** The metrics follow what was committed: a transaction that rolls back (a duplicate reference) changes none. */
  const count = (issuer: Issuer, monthlyQuota: number, quotaUsed: number | undefined) =>
    Effect.gen(function*() {
      yield* Metric.update(
        Metric.withAttributes(documentsMetric, { status: "queued", environment: issuer.environment }),
        1
      )
      if (quotaUsed !== undefined) {
        yield* Metric.update(
          Metric.withAttributes(quotaUsage, { "tenant.id": issuer.tenantId }),
          quotaUsed / monthlyQuota
        )
      }
    })

  /** Accepts a document: queued, numbered and stored, or refused with nothing taken. */
  const accept = (
    issuer: Issuer,
    input: NewAnyDocument,
    claim: IdempotencyClaim,
    substituting?: SubstitutionRequest
  ) =>
    Effect.gen(function*() {
      const accepted = yield* rules(issuer, input, substituting)
      // A test document is one statement, its key's stored answer included, so no transaction holds
      // the series' lock across round trips; a live one takes its quota with it, in a transaction.
      const stored = store(accepted, claim)
      const { quotaUsed, stored: document } = yield* (issuer.environment === "live"
        ? inTransaction(stored)
        : stored).pipe(
          Effect.tapError((error) =>
            error._tag === "QuotaExceeded"
              ? Metric.update(Metric.withAttributes(quotaExceeded, { "tenant.id": issuer.tenantId }), 1)
              : Effect.void
          )
        )
      yield* count(issuer, accepted.tenant.monthlyQuota, quotaUsed)
      return document
    })

  return { accept } as const
})
