/** SQL for the correction letters of NF-e documents (`document_corrections`). */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { answerAssignments } from "../db/AnswerColumns.js"
import { decodeRows, repository } from "../db/Repository.js"
import type { AuthorityAnswer } from "../domain/AuthorityAnswer.js"
import { Rejection } from "../domain/Document.js"
import type { DocumentId } from "../domain/Ids.js"

export const StoredCorrection = Schema.Struct({
  id: Schema.Union([Schema.Number, Schema.NumberFromString]),
  documentId: Schema.String,
  sequence: Schema.Number,
  text: Schema.String,
  status: Schema.Literals(["pending", "registered", "refused"]),
  protocol: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Rejection),
  requestedAt: Schema.Date,
  registeredAt: Schema.NullOr(Schema.Date)
})
export type StoredCorrection = typeof StoredCorrection.Type

const corrections = decodeRows(StoredCorrection)

const COLUMNS = "id, document_id, sequence, text, status, protocol, error, requested_at, registered_at"

export class CorrectionRepo extends Context.Service<CorrectionRepo>()("etd/CorrectionRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    /** Every letter of the document, first to last (refused ones included). */
    const list = (documentId: DocumentId) =>
      corrections(sql`SELECT ${columns} FROM document_corrections WHERE document_id = ${documentId} ORDER BY id`)

    /**
     * A new letter, numbered after the document's registered and pending ones. Run under the
     * document's row lock (findForUpdate), so two requests never draw the same number.
     */
    const insert = (documentId: DocumentId, text: string, at: Date) =>
      corrections(sql`
        INSERT INTO document_corrections (document_id, sequence, text, status, requested_at, updated_at)
        SELECT ${documentId}, COALESCE(MAX(sequence), 0) + 1, ${text}, 'pending', ${at}, ${at}
          FROM document_corrections WHERE document_id = ${documentId} AND status <> 'refused'
        RETURNING ${columns}`).pipe(Effect.map((rows) => rows[0]!))

    /** The authority's answer to a pending letter; a letter already answered is left as it is. */
    const settle = (id: StoredCorrection["id"], answer: AuthorityAnswer, at: Date) =>
      corrections(sql`
        UPDATE document_corrections SET ${answerAssignments(sql, answer, at)}
        WHERE id = ${id} AND status = 'pending'
        RETURNING ${columns}`).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0])))

    return repository("CorrectionRepo", { list, insert, settle })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
