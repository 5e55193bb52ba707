/**
 * SQL for documents, their numbering and the quota counter (their jobs: IssuanceQueue).
 * Lists and filters use the (tenant, environment, id) and (tenant, environment, status, id) indexes;
 * ids are time-ordered, so creation-time filters become id bounds on the same indexes.
 */
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { repository } from "../db/Repository.js"
import { isUniqueViolation } from "../db/errors.js"
import { Conflict } from "../domain/Errors.js"
import { encodeId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import type { DocumentStatus } from "./Api.js"

export interface DocumentRow {
  readonly id: string
  readonly tenantId: string
  readonly environment: Environment
  readonly type: "service_invoice"
  readonly status: DocumentStatus
  readonly reference: string | null
  readonly series: string
  readonly number: number
  readonly issueDate: string
  readonly taker: Record<string, unknown>
  readonly service: Record<string, unknown>
  readonly amounts: Record<string, unknown>
  readonly notes: string | null
  readonly submissionId: string
  readonly authority: { access_key: string; protocol: string; authorized_at: string } | null
  readonly rejection: { code: string; message: string } | null
  readonly cancellation: {
    reason_code: string
    reason: string
    requested_at: string
    cancelled_at: string | null
    protocol: string | null
    error: { code: string; message: string } | null
  } | null
  readonly attempts: number
  readonly lastError: { code: string; message: string; at: string } | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export type DocumentChange = Partial<Pick<DocumentRow, "status" | "authority" | "rejection" | "cancellation" | "lastError">>

export interface DocumentFilters {
  readonly limit: number
  readonly startingAfter?: string | undefined
  readonly status?: DocumentStatus | undefined
  readonly reference?: string | undefined
  readonly createdGte?: Date | undefined
  readonly createdLt?: Date | undefined
}

const json = (value: unknown) => JSON.stringify(value)

/** The smallest id created at `at`: ids sort by creation time, so a time bound is an id bound. */
const idAt = (at: Date) => encodeId("doc", at.getTime(), new Uint8Array(10))

export class DocumentRepo extends Context.Service<DocumentRepo>()("etd/DocumentRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The next number of a series. The row lock serializes issuers; a rollback gives it back. */
    const nextNumber = (tenantId: string, environment: Environment, series: string) =>
      sql<{ lastNumber: number }>`
        INSERT INTO document_series (tenant_id, environment, series, last_number)
        VALUES (${tenantId}, ${environment}, ${series}, 1)
        ON CONFLICT (tenant_id, environment, series)
        DO UPDATE SET last_number = document_series.last_number + 1
        RETURNING last_number`.pipe(
        Effect.map((rows) => Number(rows[0]!.lastNumber)),
        Effect.withSpan("DocumentRepo.nextNumber")
      )

    /** Takes one unit of the month's quota, or none when it is used up (then returns None). */
    const takeQuota = (tenantId: string, period: string, limit: number) =>
      Effect.gen(function*() {
        yield* sql`
          INSERT INTO quota_usage (tenant_id, period, used) VALUES (${tenantId}, ${period}, 0)
          ON CONFLICT (tenant_id, period) DO NOTHING`
        const rows = yield* sql<{ used: number }>`
          UPDATE quota_usage SET used = used + 1
          WHERE tenant_id = ${tenantId} AND period = ${period} AND used < ${limit}
          RETURNING used`
        return Option.map(Option.fromNullishOr(rows[0]), (row) => row.used)
      }).pipe(Effect.withSpan("DocumentRepo.takeQuota"))

    /** Fails with `Conflict` when the tenant already used the reference in this environment. */
    const insert = (row: Omit<DocumentRow, "authority" | "rejection" | "cancellation" | "attempts" | "lastError">) =>
      sql`
        INSERT INTO documents (id, tenant_id, environment, type, status, reference, series, number, issue_date,
          taker, service, amounts, notes, submission_id, created_at, updated_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.environment}, ${row.type}, ${row.status}, ${row.reference},
          ${row.series}, ${row.number}, ${row.issueDate}, ${json(row.taker)}::jsonb, ${json(row.service)}::jsonb,
          ${json(row.amounts)}::jsonb, ${row.notes}, ${row.submissionId}, ${row.createdAt}, ${row.updatedAt})`.pipe(
        Effect.asVoid,
        Effect.catchIf(
          (error) => isUniqueViolation(error, "documents_reference"),
          () => Effect.fail(new Conflict({ message: `A document with reference "${row.reference}" already exists.` }))
        ),
        Effect.withSpan("DocumentRepo.insert")
      )

    const find = (tenantId: string, environment: Environment, id: string) =>
      sql<DocumentRow>`
        SELECT * FROM documents WHERE tenant_id = ${tenantId} AND environment = ${environment} AND id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("DocumentRepo.find")
      )

    const findById = (id: string) =>
      sql<DocumentRow>`SELECT * FROM documents WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("DocumentRepo.findById")
      )

    const findForUpdate = (tenantId: string, environment: Environment, id: string) =>
      sql<DocumentRow>`
        SELECT * FROM documents WHERE tenant_id = ${tenantId} AND environment = ${environment} AND id = ${id}
        FOR UPDATE`.pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])), Effect.withSpan("DocumentRepo.findForUpdate"))

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
      return sql<DocumentRow>`
        SELECT * FROM documents WHERE ${sql.and(conditions)}
        ORDER BY id DESC LIMIT ${filters.limit + 1}`.pipe(Effect.withSpan("DocumentRepo.list"))
    }

    /** Records what happened to a document: only the given fields change (and `updated_at`). */
    const update = (id: string, change: DocumentChange, at: Date) => {
      const assignments = [
        sql`updated_at = ${at}`,
        ...(change.status === undefined ? [] : [sql`status = ${change.status}`]),
        ...(change.authority === undefined ? [] : [sql`authority = ${json(change.authority)}::jsonb`]),
        ...(change.rejection === undefined ? [] : [sql`rejection = ${json(change.rejection)}::jsonb`]),
        ...(change.cancellation === undefined ? [] : [sql`cancellation = ${json(change.cancellation)}::jsonb`]),
        ...(change.lastError === undefined ? [] : [sql`last_error = ${json(change.lastError)}::jsonb`])
      ]
      return sql`UPDATE documents SET ${sql.csv(assignments)} WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.withSpan("DocumentRepo.update")
      )
    }

    /** Counts a submission attempt, unless the document was settled meanwhile. */
    const markSubmitting = (id: string, at: Date) =>
      sql`
        UPDATE documents SET status = 'submitting', attempts = attempts + 1, updated_at = ${at}
        WHERE id = ${id} AND status IN ('queued', 'submitting')`.pipe(Effect.asVoid, Effect.withSpan("DocumentRepo.markSubmitting"))

    return repository({ nextNumber, takeQuota, insert, find, findById, findForUpdate, list, update, markSubmitting })
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
