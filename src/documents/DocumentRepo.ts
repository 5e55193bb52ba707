/**
 * SQL for documents, their numbering and the quota counter (their jobs: IssuanceQueue; their files:
 * NoteFileRepo). Lists use the (tenant, environment, id) index, or the one of their filter (status,
 * taker's tax id, NFS-e number, DPS number); ids are time-ordered, so creation-time filters become id
 * bounds on the same indexes.
 */
import { type Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { isUniqueViolation } from "../db/errors.js"
import { keyset } from "../db/Keyset.js"
import { decodeRows, type QueuedJobs, repository, type StatementParts } from "../db/Repository.js"
import { containsFolded } from "../db/TextSearch.js"
import {
  AuthorityInfo,
  CancellationInfo,
  DocumentStatus,
  Intermediary,
  LastError,
  Rejection,
  ServiceDescription,
  SubstitutionInfo,
  Taker,
  TakerNotification
} from "../domain/Document.js"
import type { DocumentFilters } from "../domain/DocumentFilters.js"
import { Conflict, IdempotencyConflict } from "../domain/Errors.js"
import { ContingencyInfo, GoodsAuthorityInfo, GoodsContent } from "../domain/GoodsDocument.js"
import { GoodsInvoiceType } from "../domain/GoodsInvoice.js"
import { DocumentId, encodeId, TenantId } from "../domain/Ids.js"
import { Amounts } from "../domain/Money.js"
import { Environment } from "../domain/Principal.js"
import { TaxDetails } from "../domain/TaxContent.js"

/**
 * A document as stored: the API's document plus what only the service sees (its tenant and the
 * submission id). The JSON columns hold the API's own JSON encoding of their parts, so they are
 * decoded with the same codecs as over HTTP (RFC 3339 strings become Dates).
 */
const commonFields = {
  id: DocumentId,
  tenantId: TenantId,
  environment: Environment,
  status: DocumentStatus,
  reference: Schema.NullOr(Schema.String),
  series: Schema.String,
  number: Schema.Number,
  issueDate: Schema.String,
  submissionId: Schema.String,
  rejection: Schema.NullOr(Rejection),
  attempts: Schema.Number,
  lastError: Schema.NullOr(Schema.toCodecJson(LastError)),
  cancellation: Schema.NullOr(Schema.toCodecJson(CancellationInfo)),
  substitutes: Schema.NullOr(DocumentId),
  substitutedBy: Schema.NullOr(DocumentId),
  substitution: Schema.NullOr(Schema.toCodecJson(SubstitutionInfo)),
  takerNotification: Schema.NullOr(Schema.toCodecJson(TakerNotification)),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
}

export const StoredServiceDocument = Schema.Struct({
  ...commonFields,
  type: Schema.Literal("service_invoice"),
  taker: Schema.NullOr(Schema.toCodecJson(Taker)),
  intermediary: Schema.NullOr(Schema.toCodecJson(Intermediary)),
  service: Schema.toCodecJson(ServiceDescription),
  amounts: Schema.toCodecJson(Amounts),
  tax: Schema.toCodecJson(TaxDetails),
  notes: Schema.NullOr(Schema.String),
  /** cLocEmi, the provider's municipality at acceptance; null for documents accepted before it was kept. */
  issuerMunicipalityCode: Schema.NullOr(Schema.String),
  authority: Schema.NullOr(Schema.toCodecJson(AuthorityInfo))
})
export type StoredServiceDocument = typeof StoredServiceDocument.Type

/**
 * A goods invoice as stored: the common columns, its sale and emitter (`goods`) and the state
 * authority's answer. It has no taker of a service (its recipient is part of the sale), and no
 * substitution (the NF-e has none): those columns are null.
 */
export const StoredGoodsDocument = Schema.Struct({
  ...commonFields,
  type: GoodsInvoiceType,
  taker: Schema.Null,
  goods: Schema.toCodecJson(GoodsContent),
  authority: Schema.NullOr(Schema.toCodecJson(GoodsAuthorityInfo)),
  /** An NFC-e issued offline: what it was issued with (its note is rebuilt from it at every transmission). */
  contingency: Schema.NullOr(Schema.toCodecJson(ContingencyInfo))
})
export type StoredGoodsDocument = typeof StoredGoodsDocument.Type

/** A stored document of any type, told apart by `type`. */
export const StoredDocument = Schema.Union([StoredServiceDocument, StoredGoodsDocument])
export type StoredDocument = typeof StoredDocument.Type

/** What a document has only once it is numbered and on its way: its number, and the authority's and the worker's. */
type Unsettled =
  | "number"
  | "submissionId"
  | "authority"
  | "rejection"
  | "cancellation"
  | "attempts"
  | "lastError"
  | "substitutes"
  | "substitutedBy"
  | "substitution"
  | "takerNotification"
  | "contingency"

/** A new document before the database numbers it (and so completes its submission id). */
export type UnnumberedServiceDocument = Omit<StoredServiceDocument, Unsettled> & {
  /** A substitute: the document it replaces and why (absent for any other document). */
  readonly substitutes?: DocumentId | undefined
  readonly substitution?: SubstitutionInfo | undefined
}

export type UnnumberedGoodsDocument = Omit<StoredGoodsDocument, Unsettled>

export type UnnumberedDocument = UnnumberedServiceDocument | UnnumberedGoodsDocument

export type DocumentChange =
  & Partial<Pick<StoredServiceDocument, "status" | "rejection" | "cancellation" | "lastError" | "takerNotification">>
  & { readonly authority?: StoredServiceDocument["authority"] | StoredGoodsDocument["authority"] }
  & Partial<Pick<StoredGoodsDocument, "contingency">>

const documents = decodeRows(StoredDocument)
const numbered = decodeRows(Schema.Struct({ number: Schema.Number, submissionId: Schema.String }))
const usage = decodeRows(Schema.Struct({ used: Schema.Number }))
const flags = decodeRows(Schema.Struct({ held: Schema.Boolean }))
const dailyCountRows = decodeRows(Schema.Struct({ day: Schema.String, environment: Environment, count: Schema.Number }))
const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])
/** An Idempotency-Key's answer as parts of a statement (IdempotencyRepo's `answering`, `inserting`). */
type KeyAnswer = { readonly held?: Statement.Fragment; readonly store: Statement.Fragment }

// The JSON columns are written with the codecs they are read with.
const jsonOf = <T, E>(schema: Schema.Codec<T, E>) => {
  const encode = Schema.encodeSync(Schema.toCodecJson(schema))
  return (value: T) => JSON.stringify(encode(value))
}
const takerJson = jsonOf(Schema.NullOr(Taker))
const intermediaryJson = jsonOf(Schema.NullOr(Intermediary))
const taxJson = jsonOf(TaxDetails)
const serviceJson = jsonOf(ServiceDescription)
const amountsJson = jsonOf(Amounts)
const serviceAuthorityJson = jsonOf(AuthorityInfo)
const goodsAuthorityJson = jsonOf(GoodsAuthorityInfo)
const goodsJson = jsonOf(GoodsContent)
/** A service invoice's answer names its NFS-e number; a goods invoice's has none. */
const authorityJson = (authority: AuthorityInfo | GoodsAuthorityInfo) =>
  "nfse_number" in authority ? serviceAuthorityJson(authority) : goodsAuthorityJson(authority)
const rejectionJson = jsonOf(Rejection)
const cancellationJson = jsonOf(CancellationInfo)
const lastErrorJson = jsonOf(LastError)
const substitutionJson = jsonOf(SubstitutionInfo)
const notificationJson = jsonOf(TakerNotification)
const contingencyJson = jsonOf(ContingencyInfo)
type SubstitutionInfo = typeof SubstitutionInfo.Type
type AuthorityInfo = typeof AuthorityInfo.Type

/** The smallest id created at `at`: ids sort by creation time, so a time bound is an id bound. */
const idAt = (at: Date) => encodeId("document", at.getTime(), new Uint8Array(10))

export class DocumentRepo extends Context.Service<DocumentRepo>()("etd/DocumentRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Numbers a document and stores it with its jobs, in one statement: the series' next number, the
     * document (its submission id: the prefix, then the number zero-padded to `width`), the jobs and
     * the workers' wake-up (sent at commit). The series' row lock serializes a tenant's issuers; in
     * one statement it is held for as long as the database takes to run it, not across round trips.
     * `answering` adds the stored answer of an Idempotency-Key (given the number), and the statement
     * writes only while the key's claim is held, so one whose claim was taken over writes nothing (the
     * number included) with no transaction around it: then None. Fails with `Conflict` when the tenant
     * already used the reference in this environment (nothing written). In an outer transaction, the
     * lock is held until that one ends.
     */
    const accept = (
      row: UnnumberedDocument,
      submissionId: { readonly prefix: string; readonly width: number },
      queued: QueuedJobs,
      answering?: (number: Statement.Fragment) => KeyAnswer
    ) => {
      const answer = answering?.(sql`(SELECT number FROM stored)`)
      const held = answer?.held
      const service = row.type === "service_invoice" ? row : undefined
      const goods = row.type === "service_invoice" ? undefined : row
      return numbered(sql`
        WITH ${held === undefined ? sql`` : sql`held AS (${held}),`} numbered AS (
          INSERT INTO document_series (tenant_id, environment, type, series, last_number)
          SELECT ${row.tenantId}, ${row.environment}, ${row.type}, ${row.series}, 1
          ${held === undefined ? sql`` : sql`WHERE EXISTS (SELECT 1 FROM held)`}
          ON CONFLICT (tenant_id, environment, type, series)
          DO UPDATE SET last_number = document_series.last_number + 1
          RETURNING last_number
        ), stored AS (
          INSERT INTO documents (id, tenant_id, environment, type, status, reference, series, number, issue_date,
            taker, intermediary, service, amounts, tax, goods, notes, submission_id, issuer_municipality_code,
            substitutes, substitution, created_at, updated_at)
          SELECT ${row.id}, ${row.tenantId}, ${row.environment}, ${row.type}, ${row.status}, ${row.reference},
            ${row.series}, last_number, ${row.issueDate}, ${
        service === undefined ? null : takerJson(service.taker)
      }::jsonb,
            ${service === undefined ? null : intermediaryJson(service.intermediary)}::jsonb,
            ${service === undefined ? null : serviceJson(service.service)}::jsonb,
            ${service === undefined ? null : amountsJson(service.amounts)}::jsonb,
            ${service === undefined ? null : taxJson(service.tax)}::jsonb,
            ${goods === undefined ? null : goodsJson(goods.goods)}::jsonb, ${service?.notes ?? null},
            ${submissionId.prefix} || lpad(last_number::text, ${submissionId.width}, '0'),
            ${service?.issuerMunicipalityCode ?? null}, ${service?.substitutes ?? null},
            ${service?.substitution === undefined ? null : substitutionJson(service.substitution)}::jsonb,
            ${row.createdAt}, ${row.updatedAt}
          FROM numbered
          RETURNING number, submission_id
        ), queued AS (${queued.insertWhen(sql`EXISTS (SELECT 1 FROM stored)`)} RETURNING 1)
        ${answer === undefined ? sql`` : sql`, answered AS (${answer.store})`}
        SELECT number, submission_id, pg_notify(${queued.channel}, 'queued') FROM stored`).pipe(
        Effect.map(first),
        Effect.catchIf(
          (error) => isUniqueViolation(error, "documents_reference"),
          () => Effect.fail(new Conflict({ message: `A document with reference "${row.reference}" already exists.` }))
        ),
        Effect.catchIf( // A new key that exists after all (`Idempotency.storing`): nothing was written.
          (error) => error._tag === "SqlError" && isUniqueViolation(error, "idempotency_keys_pkey"),
          () => Effect.fail(new IdempotencyConflict())
        ),
        Effect.catchIf(
          (error) => error._tag === "SqlError" && isUniqueViolation(error, "documents_one_substitute"),
          () => Effect.fail(new Conflict({ message: "The document is already being substituted by another document." }))
        )
      )
    }

    /**
     * Takes one unit of the month's quota in one statement (the month's row is created by its first
     * use), or none when it is used up (then returns None).
     */
    const takeQuota = (tenantId: TenantId, period: string, limit: number) =>
      usage(sql`
        INSERT INTO quota_usage AS q (tenant_id, period, used)
        SELECT ${tenantId}, ${period}, 1 WHERE ${limit} > 0
        ON CONFLICT (tenant_id, period) DO UPDATE SET used = q.used + 1 WHERE q.used < ${limit}
        RETURNING used`).pipe(Effect.map((rows) => Option.map(first(rows), (row) => row.used)))

    /** `environment` undefined: either environment (a member's session reads both). */
    const inEnvironment = (environment: Environment | undefined) =>
      environment === undefined ? [] : [sql`environment = ${environment}`]

    const find = (tenantId: TenantId, environment: Environment | undefined, id: DocumentId) =>
      documents(sql`
        SELECT * FROM documents
        WHERE ${sql.and([sql`tenant_id = ${tenantId}`, ...inEnvironment(environment), sql`id = ${id}`])}`).pipe(
        Effect.map(first)
      )

    const findById = (id: DocumentId) =>
      documents(sql`SELECT * FROM documents WHERE id = ${id}`).pipe(Effect.map(first))

    const findByIds = (ids: Arr.NonEmptyReadonlyArray<DocumentId>) =>
      documents(sql`SELECT * FROM documents WHERE id IN ${sql.in(ids)}`)

    const findForUpdate = (tenantId: TenantId, environment: Environment | undefined, id: DocumentId) =>
      documents(sql`
        SELECT * FROM documents
        WHERE ${sql.and([sql`tenant_id = ${tenantId}`, ...inEnvironment(environment), sql`id = ${id}`])}
        FOR UPDATE`).pipe(Effect.map(first))

    /**
     * A page of the tenant's documents in the given environments (one, or both for a member's
     * session). Each environment's page is read through its own index range, and the two merged:
     * one scan over both environments would have to sort all of the tenant's documents.
     */
    const list = (
      tenantId: TenantId,
      environments: Arr.NonEmptyReadonlyArray<Environment>,
      filters: DocumentFilters
    ) => {
      const page = keyset(sql, sql`id`, "desc", filters.cursor)
      const pageOf = (environment: Environment) => {
        const conditions = [
          sql`tenant_id = ${tenantId}`,
          sql`environment = ${environment}`,
          ...(filters.status ? [sql`status = ${filters.status}`] : []),
          ...(filters.type ? [sql`type = ${filters.type}`] : []),
          ...(filters.reference ? [sql`reference = ${filters.reference}`] : []),
          ...(filters.takerTaxId ? [sql`taker->>'tax_id' = ${filters.takerTaxId}`] : []),
          ...(filters.takerName ? [containsFolded(sql, sql`taker->>'name'`, filters.takerName)] : []),
          ...(filters.nfseNumber ? [sql`authority->>'nfse_number' = ${filters.nfseNumber}`] : []),
          ...(filters.number === undefined ? [] : [sql`number = ${filters.number}`]),
          ...(filters.series ? [sql`series = ${filters.series}`] : []),
          ...page.where,
          ...(filters.createdGte ? [sql`id >= ${idAt(filters.createdGte)}`] : []),
          ...(filters.createdLt ? [sql`id < ${idAt(filters.createdLt)}`] : [])
        ]
        return sql`SELECT * FROM documents WHERE ${sql.and(conditions)} ORDER BY ${page.orderBy} LIMIT ${
          filters.limit + 1
        }`
      }
      const [only, ...others] = environments
      if (others.length === 0) return documents(pageOf(only))
      const pages = environments.map((environment) => sql`(${pageOf(environment)})`)
      return documents(sql`
        SELECT * FROM (${sql.join(" UNION ALL ", false)(pages)}) AS pages
        ORDER BY ${page.orderBy} LIMIT ${filters.limit + 1}`)
    }

    /**
     * Documents created per UTC day and environment from `from` (a UTC midnight) to `until`
     * (exclusive), whatever their status: one grouped statement. Ids are time-ordered, so the time
     * range is also an id range on the (tenant, environment, id) index, one range per environment.
     */
    const dailyCounts = (tenantId: TenantId, from: Date, until: Date) =>
      dailyCountRows(sql`
        SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, environment, count(*)::int AS count
        FROM documents
        WHERE tenant_id = ${tenantId} AND environment IN ('live', 'test')
          AND id >= ${idAt(from)} AND id < ${idAt(until)}
          AND created_at >= ${from} AND created_at < ${until}
        GROUP BY 1, 2`)

    /** What happened to a document: only the given fields change (and `updated_at`). */
    const assignmentsOf = (change: DocumentChange, at: Date) => [
      sql`updated_at = ${at}`,
      ...(change.status === undefined ? [] : [sql`status = ${change.status}`]),
      ...(change.authority == null ? [] : [sql`authority = ${authorityJson(change.authority)}::jsonb`]),
      ...(change.rejection == null ? [] : [sql`rejection = ${rejectionJson(change.rejection)}::jsonb`]),
      ...(change.cancellation == null ? [] : [sql`cancellation = ${cancellationJson(change.cancellation)}::jsonb`]),
      ...(change.lastError == null ? [] : [sql`last_error = ${lastErrorJson(change.lastError)}::jsonb`]),
      ...(change.contingency == null ? [] : [sql`contingency = ${contingencyJson(change.contingency)}::jsonb`]),
      ...(change.takerNotification == null
        ? []
        : [sql`taker_notification = ${notificationJson(change.takerNotification)}::jsonb`])
    ]

    const update = (id: DocumentId, change: DocumentChange, at: Date) =>
      sql`UPDATE documents SET ${sql.csv(assignmentsOf(change, at))} WHERE id = ${id}`.pipe(Effect.asVoid)

    /**
     * A job's outcome in one statement, with no transaction around it: the job's end (`ending`,
     * LeasedQueue), and only when that returned the job (its lease held) the document's change,
     * its NFS-e XML and what `alongside` writes (the event the outcome causes and its deliveries,
     * the taker's mail). Returns whether the lease held.
     */
    const settle = (
      id: DocumentId,
      change: DocumentChange,
      at: Date,
      nfseXml: string | undefined,
      ending: Statement.Fragment,
      alongside: ReadonlyArray<(gate: Statement.Fragment) => StatementParts> = []
    ) => {
      const held = sql`EXISTS (SELECT 1 FROM ended)`
      const parts = alongside.map((part) => part(held))
      const each = (fragment: (part: StatementParts, i: number) => Statement.Fragment) =>
        parts.length === 0 ? sql`` : sql.join("", false)(parts.map(fragment))
      const xml = nfseXml === undefined ? sql`` : sql`, stored_xml AS (
          INSERT INTO document_files (document_id, nfse_xml, stored_at)
          SELECT ${id}::text, ${nfseXml}::text, ${at}::timestamptz WHERE ${held}
          ON CONFLICT (document_id) DO UPDATE SET nfse_xml = excluded.nfse_xml, stored_at = excluded.stored_at)`
      return flags(sql`
        WITH ended AS (${ending}),
          updated AS (UPDATE documents SET ${sql.csv(assignmentsOf(change, at))} WHERE id = ${id} AND ${held}) ${xml}
          ${each((part) => sql`, ${part.ctes}`)}
        SELECT ${held} AS held ${each((part, i) => sql`, ${part.select} AS ${sql(`notified_${i}`)}`)}`).pipe(
        Effect.map((rows) => rows[0]!.held)
      )
    }

    /**
     * The original of an authorized substitute becomes `substituted`, linked to it; only from a
     * status where the note still stands (a cancellation being asked included: the national system
     * cancelled it by the substitution). Returns the original as it now stands, or None.
     */
    const markSubstituted = (originalId: DocumentId, substituteId: DocumentId, at: Date) =>
      documents(sql`
        UPDATE documents SET status = 'substituted', substituted_by = ${substituteId}, updated_at = ${at}
        WHERE id = ${originalId} AND status IN ('authorized', 'cancel_requested', 'cancellation_in_analysis')
        RETURNING *`).pipe(Effect.map(first))

    return repository("DocumentRepo", {
      markSubstituted,
      accept,
      takeQuota,
      find,
      findById,
      findByIds,
      findForUpdate,
      list,
      dailyCounts,
      update,
      settle
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
