import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The files of an authorized document (SPEC §6 "Files"): the NFS-e XML exactly as the authority
 * returned it. Kept beside the document, not in it, so reading and listing documents never carry
 * the XML (kilobytes per note) they do not show. The NFS-e number joins the document's `authority`
 * object; notes authorized before it was recorded show null.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE document_files (
      document_id text PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
      nfse_xml text NOT NULL,
      stored_at timestamptz NOT NULL
    )`
  yield* sql`
    UPDATE documents SET authority = authority || '{"nfse_number": null}'::jsonb
    WHERE authority IS NOT NULL AND NOT authority ? 'nfse_number'`
})
