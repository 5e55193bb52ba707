/**
 * "Contains, ignoring case and accents" in SQL: the column and the searched text are folded the same
 * way (decomposed, combining marks dropped, lower-cased), so `joao` finds "João" and "JOÃO".
 */
import type { SqlClient, Statement } from "effect/sql"

const COMBINING_MARKS = /[\u0300-\u036f]/gu

/** The searched text as the column is folded in SQL. */
export const foldText = (text: string): string => text.normalize("NFD").replace(COMBINING_MARKS, "").toLowerCase()

/**
 * True where the text `column` holds contains `text`. `strpos`, not `LIKE`: the searched text's `%`
 * and `_` are plain characters.
 */
export const containsFolded = (sql: SqlClient.SqlClient, column: Statement.Fragment, text: string) =>
  sql`strpos(lower(regexp_replace(normalize(${column}, NFD), '[\u0300-\u036f]', '', 'g')), ${foldText(text)}) > 0`
