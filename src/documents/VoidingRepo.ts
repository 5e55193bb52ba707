/** SQL for number voiding (`voided_numbers`), and the state of a series it is decided on. */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { answerAssignments } from "../db/AnswerColumns.js"
import { decodeRows, repository } from "../db/Repository.js"
import type { AuthorityAnswer } from "../domain/AuthorityAnswer.js"
import { Rejection } from "../domain/Document.js"
import type { TenantId } from "../domain/Ids.js"
import type { Cursor } from "../domain/Pagination.js"
import { Environment } from "../domain/Principal.js"

export const StoredVoiding = Schema.Struct({
  id: Schema.String,
  tenantId: Schema.String,
  environment: Environment,
  type: Schema.Literals(["product_invoice", "consumer_invoice"]),
  series: Schema.String,
  fromNumber: Schema.Number,
  toNumber: Schema.Number,
  reason: Schema.String,
  status: Schema.Literals(["pending", "registered", "refused"]),
  protocol: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Rejection),
  requestedAt: Schema.Date,
  registeredAt: Schema.NullOr(Schema.Date)
})
export type StoredVoiding = typeof StoredVoiding.Type

/** A series of one tenant's environment. */
export interface SeriesRef {
  readonly tenantId: TenantId
  readonly environment: Environment
  readonly type: StoredVoiding["type"]
  readonly series: string
}

const voidings = decodeRows(StoredVoiding)
const lastNumbers = decodeRows(Schema.Struct({ lastNumber: Schema.Union([Schema.Number, Schema.NumberFromString]) }))
const holders = decodeRows(Schema.Struct({ id: Schema.String, number: Schema.Number, status: Schema.String }))

const COLUMNS = "id, tenant_id, environment, type, series, from_number, to_number, reason, status, protocol, error, " +
  "requested_at, registered_at"

export class VoidingRepo extends Context.Service<VoidingRepo>()("etd/VoidingRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    /**
     * The series' last number drawn, its row locked until the transaction ends: numbering (which
     * takes the same lock) and other voidings of the series wait, so what is decided here holds.
     */
    const lastNumberForUpdate = (ref: SeriesRef) =>
      lastNumbers(sql`
        SELECT last_number FROM document_series
        WHERE tenant_id = ${ref.tenantId} AND environment = ${ref.environment} AND type = ${ref.type}
          AND series = ${ref.series}
        FOR UPDATE`).pipe(Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row.lastNumber)))

    /**
     * Documents of the range that hold their number: all but those the authority rejected or that
     * failed; an NFC-e issued offline holds it even rejected (its consumer has the printed note).
     */
    const holdersOf = (ref: SeriesRef, from: number, to: number) =>
      holders(sql`
        SELECT id, number, status FROM documents
        WHERE tenant_id = ${ref.tenantId} AND environment = ${ref.environment} AND type = ${ref.type}
          AND series = ${ref.series} AND number BETWEEN ${from} AND ${to}
          AND (status NOT IN ('rejected', 'failed') OR contingency IS NOT NULL)
        ORDER BY number LIMIT 5`)

    /** Voidings of the series, registered or pending, that share a number with the range. */
    const overlapping = (ref: SeriesRef, from: number, to: number) =>
      voidings(sql`
        SELECT ${columns} FROM voided_numbers
        WHERE tenant_id = ${ref.tenantId} AND environment = ${ref.environment} AND type = ${ref.type}
          AND series = ${ref.series} AND status <> 'refused' AND from_number <= ${to} AND to_number >= ${from}
        ORDER BY from_number`)

    const insert = (
      row: SeriesRef & { readonly id: string; from: number; to: number; reason: string; at: Date }
    ) =>
      voidings(sql`
        INSERT INTO voided_numbers (id, tenant_id, environment, type, series, from_number, to_number, reason, status,
          requested_at, updated_at)
        VALUES (${row.id}, ${row.tenantId}, ${row.environment}, ${row.type}, ${row.series}, ${row.from}, ${row.to},
          ${row.reason}, 'pending', ${row.at}, ${row.at})
        RETURNING ${columns}`).pipe(Effect.map((rows) => rows[0]!))

    /** The authority's answer to a pending voiding; one answered already is left as it is. */
    const settle = (id: string, answer: AuthorityAnswer, at: Date) =>
      voidings(sql`
        UPDATE voided_numbers SET ${answerAssignments(sql, answer, at)}
        WHERE id = ${id} AND status = 'pending'
        RETURNING ${columns}`).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

    const find = (tenantId: TenantId, environment: Environment, id: string) =>
      voidings(sql`
        SELECT ${columns} FROM voided_numbers
        WHERE tenant_id = ${tenantId} AND environment = ${environment} AND id = ${id}`).pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0]))
      )

    /**
     * Newest first (ids are time-ordered), `limit` of them from the cursor; before a cursor, nearest
     * first (toPage turns them back).
     */
    const list = (tenantId: TenantId, environment: Environment, limit: number, cursor: Cursor | undefined) =>
      voidings(sql`
        SELECT ${columns} FROM voided_numbers
        WHERE tenant_id = ${tenantId} AND environment = ${environment}
          ${
        cursor === undefined
          ? sql``
          : cursor.direction === "after"
          ? sql`AND id < ${cursor.id}`
          : sql`AND id > ${cursor.id}`
      }
        ORDER BY id ${sql.literal(cursor?.direction === "before" ? "ASC" : "DESC")} LIMIT ${limit}`)

    return repository("VoidingRepo", { lastNumberForUpdate, holdersOf, overlapping, insert, settle, find, list })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
