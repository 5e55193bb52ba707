/** Cursor pagination of SPEC §2: `?limit=1..100&starting_after=<id>` → `{data, has_more, next_cursor}`. */
import { Schema } from "effect"

export const DEFAULT_PAGE_SIZE = 20

/** `?limit=`: optional in the contract (so typed-client callers may omit it); see `pageSize`. */
export const PageLimit = Schema.NumberFromString.check(
  // One check, so a bad value is reported once, not once per rule it breaks.
  Schema.makeFilter((n) => Number.isInteger(n) && n >= 1 && n <= 100, { message: "limit must be an integer from 1 to 100" })
)

export const pageSize = (limit: number | undefined): number => limit ?? DEFAULT_PAGE_SIZE

export const PageParams = Schema.Struct({
  limit: Schema.optionalKey(PageLimit),
  starting_after: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64)))
})
export type PageParams = typeof PageParams.Type

export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    data: Schema.Array(item),
    has_more: Schema.Boolean,
    next_cursor: Schema.NullOr(Schema.String)
  })

/**
 * Builds a page from rows fetched with `limit + 1`: the extra row only tells whether more exist.
 */
export const toPage = <A extends { readonly id: string }>(rows: ReadonlyArray<A>, limit: number) => {
  const data = rows.slice(0, limit)
  const has_more = rows.length > limit
  return { data, has_more, next_cursor: has_more ? data[data.length - 1]!.id : null }
}
