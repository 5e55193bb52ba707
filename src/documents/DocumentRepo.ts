/**
 * SQL for documents, their numbering and the quota counter (their jobs: IssuanceQueue).
 * Lists and filters use the (tenant, environment, id) and (tenant, environment, status, id) indexes;
 * ids are time-ordered, so creation-time filters become id bounds on the same indexes.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { isUniqueViolation } from "../db/errors.js"
import { Conflict } from "../domain/Errors.js"
import { encodeId } from "../domain/Ids.js"
import {
  AuthorityInfo,
  CancellationInfo,
  Document,
  DocumentStatus,
  LastError,
  Rejection,
  ServiceDescription,
  Taker
} from "../domain/Document.js"
import { Amounts } from "../domain/Money.js"
import { Environment } from "../domain/Principal.js"

/**
 * A document as stored: the API's document plus what only the service sees (its tenant and the
 * submission id). The JSON columns hold the API's own JSON encoding of their parts, so they are
 * decoded with the same codecs as over HTTP (RFC 3339 strings become Dates).
 */
export const StoredDocument = Schema.Struct({
  id: Schema.String,
  tenantId: Schema.String,
  environment: Environment,
  type: Schema.Literal("service_invoice"),
  status: DocumentStatus,
  reference: Schema.NullOr(Schema.String),
  series: Schema.String,
  number: Schema.Number,
  issueDate: Schema.String,
  taker: Schema.toCodecJson(Taker),
  service: Schema.toCodecJson(ServiceDescription),
  amounts: Schema.toCodecJson(Amounts),
  notes: Schema.NullOr(Schema.String),
  submissionId: Schema.String,
  authority: Schema.NullOr(Schema.toCodecJson(AuthorityInfo)),
  rejection: Schema.NullOr(Rejection),
  cancellation: Schema.NullOr(Schema.toCodecJson(CancellationInfo)),
  attempts: Schema.Number,
  lastError: Schema.NullOr(Schema.toCodecJson(LastError)),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type StoredDocument = typeof StoredDocument.Type

/** The one mapping from a stored document to the API's. */
export const toDocument = (stored: StoredDocument) =>
  new Document({
    id: stored.id,
    environment: stored.environment,
    type: stored.type,
    status: stored.status,
    reference: stored.reference,
    series: stored.series,
    number: stored.number,
    issue_date: stored.issueDate,
    taker: stored.taker,
    service: stored.service,
    amounts: stored.amounts,
    currency: "BRL",
    notes: stored.notes,
    authority: stored.authority,
    rejection: stored.rejection,
    cancellation: stored.cancellation,
    attempts: stored.attempts,
    last_error: stored.lastError,
    created_at: stored.createdAt,
    updated_at: stored.updatedAt
  })

export type NewStoredDocument = Omit<StoredDocument, "authority" | "rejection" | "cancellation" | "attempts" | "lastError">

export type DocumentChange = Partial<Pick<StoredDocument, "status" | "authority" | "rejection" | "cancellation" | "lastError">>

export interface DocumentFilters {
  readonly limit: number
  readonly startingAfter?: string | undefined
  readonly status?: DocumentStatus | undefined
  readonly reference?: string | undefined
  readonly createdGte?: Date | undefined
  readonly createdLt?: Date | undefined
}

const documents = decodeRows(StoredDocument)
const nfseXmls = decodeRows(Schema.Struct({ nfseXml: Schema.String }))
const lastNumbers = decodeRows(Schema.Struct({ lastNumber: Schema.Number }))
const usage = decodeRows(Schema.Struct({ used: Schema.Number }))
const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

// The JSON columns are written with the codecs they are read with.
const jsonOf = <T, E>(schema: Schema.Codec<T, E>) => {
  const encode = Schema.encodeSync(Schema.toCodecJson(schema))
  return (value: T) => JSON.stringify(encode(value))
}
const takerJson = jsonOf(Taker)
const serviceJson = jsonOf(ServiceDescription)
const amountsJson = jsonOf(Amounts)
const authorityJson = jsonOf(AuthorityInfo)
const rejectionJson = jsonOf(Rejection)
const cancellationJson = jsonOf(CancellationInfo)
const lastErrorJson = jsonOf(LastError)

/** The smallest id created at `at`: ids sort by creation time, so a time bound is an id bound. */
const idAt = (at: Date) => encodeId("doc", at.getTime(), new Uint8Array(10))

export class DocumentRepo extends Context.Service<DocumentRepo>()("etd/DocumentRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The next number of a series. The row lock serializes issuers; a rollback gives it back. */
    const nextNumber = (tenantId: string, environment: Environment, series: string) =>
      lastNumbers(sql`
        INSERT INTO document_series (tenant_id, environment, series, last_number)
        VALUES (${tenantId}, ${environment}, ${series}, 1)
        ON CONFLICT (tenant_id, environment, series)
        DO UPDATE SET last_number = document_series.last_number + 1
        RETURNING last_number`).pipe(
        // An upsert always returns its row.
        Effect.map((rows) => rows[0]!.lastNumber)
      )

    /** Takes one unit of the month's quota, or none when it is used up (then returns None). */
    const takeQuota = (tenantId: string, period: string, limit: number) =>
      Effect.gen(function*() {
        yield* sql`
          INSERT INTO quota_usage (tenant_id, period, used) VALUES (${tenantId}, ${period}, 0)
          ON CONFLICT (tenant_id, period) DO NOTHING`
        const rows = yield* usage(sql`
          UPDATE quota_usage SET used = used + 1
          WHERE tenant_id = ${tenantId} AND period = ${period} AND used < ${limit}
          RETURNING used`)
        return Option.map(first(rows), (row) => row.used)
      })

    /** Fails with `Conflict` when the tenant already used the reference in this environment. */
    const insert = (row: NewStoredDocument) =>
      sql`
        INSERT INTO documents (id, tenant_id, environment, type, status, reference, series, number, issue_date,
          taker, service, amounts, notes, submission_id, created_at, updated_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.environment}, ${row.type}, ${row.status}, ${row.reference},
          ${row.series}, ${row.number}, ${row.issueDate}, ${takerJson(row.taker)}::jsonb, ${serviceJson(row.service)}::jsonb,
          ${amountsJson(row.amounts)}::jsonb, ${row.notes}, ${row.submissionId}, ${row.createdAt}, ${row.updatedAt})`.pipe(
        Effect.asVoid,
        Effect.catchIf(
          (error) => isUniqueViolation(error, "documents_reference"),
          () => Effect.fail(new Conflict({ message: `A document with reference "${row.reference}" already exists.` }))
        )
      )

    const find = (tenantId: string, environment: Environment, id: string) =>
      documents(sql`
        SELECT * FROM documents WHERE tenant_id = ${tenantId} AND environment = ${environment} AND id = ${id}`).pipe(
        Effect.map(first)
      )

    const findById = (id: string) =>
      documents(sql`SELECT * FROM documents WHERE id = ${id}`).pipe(Effect.map(first))

    const findForUpdate = (tenantId: string, environment: Environment, id: string) =>
      documents(sql`
        SELECT * FROM documents WHERE tenant_id = ${tenantId} AND environment = ${environment} AND id = ${id}
        FOR UPDATE`).pipe(Effect.map(first))

    const list = (tenantId: string, environment: Environment, filters: DocumentFilters) => {
      const conditions = [
        sql`tenant_id = ${tenantId}`,
        sql`environment = ${environment}`,
        ...(filters.status ? [sql`status = ${filters.status}`] : []),
        ...(filters.reference ? [sql`reference = ${filters.reference}`] : []),
        ...(filters.startingAfter ? [sql`id < ${filters.startingAfter}`] : []),
        ...(filters.createdGte ? [sql`id >= ${idAt(filters.createdGte)}`] : []),
        ...(filters.createdLt ? [sql`id < ${idAt(filters.createdLt)}`] : [])
      ]
      return documents(sql`
        SELECT * FROM documents WHERE ${sql.and(conditions)}
        ORDER BY id DESC LIMIT ${filters.limit + 1}`)
    }

    /** Records what happened to a document: only the given fields change (and `updated_at`). */
    const update = (id: string, change: DocumentChange, at: Date) => {
      const assignments = [
        sql`updated_at = ${at}`,
        ...(change.status === undefined ? [] : [sql`status = ${change.status}`]),
        ...(change.authority == null ? [] : [sql`authority = ${authorityJson(change.authority)}::jsonb`]),
        ...(change.rejection == null ? [] : [sql`rejection = ${rejectionJson(change.rejection)}::jsonb`]),
        ...(change.cancellation == null ? [] : [sql`cancellation = ${cancellationJson(change.cancellation)}::jsonb`]),
        ...(change.lastError == null ? [] : [sql`last_error = ${lastErrorJson(change.lastError)}::jsonb`])
      ]
      return sql`UPDATE documents SET ${sql.csv(assignments)} WHERE id = ${id}`.pipe(
        Effect.asVoid
      )
    }

    /** Counts a submission attempt, unless the document was settled meanwhile. */
    const markSubmitting = (id: string, at: Date) =>
      sql`
        UPDATE documents SET status = 'submitting', attempts = attempts + 1, updated_at = ${at}
        WHERE id = ${id} AND status IN ('queued', 'submitting')`.pipe(Effect.asVoid)

    /** Keeps the NFS-e XML of an authorized document; a later answer for the same note replaces it. */
    const storeNfseXml = (documentId: string, nfseXml: string, at: Date) =>
      sql`
        INSERT INTO document_files (document_id, nfse_xml, stored_at) VALUES (${documentId}, ${nfseXml}, ${at})
        ON CONFLICT (document_id) DO UPDATE SET nfse_xml = excluded.nfse_xml, stored_at = excluded.stored_at`.pipe(
        Effect.asVoid
      )

    const findNfseXml = (documentId: string) =>
      nfseXmls(sql`SELECT nfse_xml FROM document_files WHERE document_id = ${documentId}`).pipe(
        Effect.map((rows) => Option.map(first(rows), (row) => row.nfseXml))
      )

    return repository("DocumentRepo", {
      nextNumber,
      takeQuota,
      insert,
      find,
      findById,
      findForUpdate,
      list,
      update,
      markSubmitting,
      storeNfseXml,
      findNfseXml
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
