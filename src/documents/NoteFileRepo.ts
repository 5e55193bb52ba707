/** SQL for the notes' files (`document_files`): the NFS-e XML the authority returned for a document. */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import type { DocumentId } from "../domain/Ids.js"

const nfseXmls = decodeRows(Schema.Struct({ nfseXml: Schema.String }))

export class NoteFileRepo extends Context.Service<NoteFileRepo>()("etd/NoteFileRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Keeps the NFS-e XML of an authorized document; a later answer for the same note replaces it. */
    const storeNfseXml = (documentId: DocumentId, nfseXml: string, at: Date) =>
      sql`
        INSERT INTO document_files (document_id, nfse_xml, stored_at) VALUES (${documentId}, ${nfseXml}, ${at})
        ON CONFLICT (document_id) DO UPDATE SET nfse_xml = excluded.nfse_xml, stored_at = excluded.stored_at`.pipe(
        Effect.asVoid
      )

    const findNfseXml = (documentId: DocumentId) =>
      nfseXmls(sql`SELECT nfse_xml FROM document_files WHERE document_id = ${documentId}`).pipe(
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row.nfseXml))
      )

    return repository("NoteFileRepo", { storeNfseXml, findNfseXml })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
