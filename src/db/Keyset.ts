/**
 * Keyset pagination in SQL (SPEC §2 lists): the rows just after or just before a cursor in a list's
 * order, read through the column's index, so a page costs its own rows whatever the list's length.
 */
import type { SqlClient, Statement } from "effect/sql"
import type { Cursor } from "../domain/Pagination.js"

/**
 * The condition and the order that read a page from `cursor`, of a list ordered by the unique
 * `column`. Before the cursor the rows are read nearest first, against the list's order (`toPage`
 * turns the page back); fetch `limit + 1` so the extra row tells whether more exist.
 */
export const keyset = (
  sql: SqlClient.SqlClient,
  column: Statement.Fragment,
  order: "asc" | "desc",
  cursor: Cursor | undefined
): { readonly where: ReadonlyArray<Statement.Fragment>; readonly orderBy: Statement.Fragment } => {
  const ascending = (order === "asc") !== (cursor?.direction === "before")
  return {
    where: cursor === undefined ? [] : [ascending ? sql`${column} > ${cursor.id}` : sql`${column} < ${cursor.id}`],
    orderBy: ascending ? sql`${column} ASC` : sql`${column} DESC`
  }
}
