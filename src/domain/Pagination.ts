/**
 * Cursor pagination of SPEC §2: `?limit=1..100&starting_after=<id>` → `{data, has_more, next_cursor}`,
 * and Stripe's `?ending_before=<id>` for the page just before an id.
 */
import { Schema, SchemaTransformation } from "effect"

export const DEFAULT_PAGE_SIZE = 20

/**
 * `?limit=`: optional in the contract (so typed-client callers may omit it); see `pageSize`. The
 * query string carries text, which the framework documents as a bare string; `contentSchema` says
 * which integer that text holds, and the OpenAPI transform (openapi.ts) documents the parameter as it.
 */
export const PageLimit = Schema.String.annotate({
  expected: "a string that will be decoded as a number",
  contentMediaType: "application/json",
  contentSchema: { type: "integer", minimum: 1, maximum: 100, default: DEFAULT_PAGE_SIZE }
}).pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)).check(
  // One check, so a bad value is reported once, not once per rule it breaks.
  Schema.makeFilter((n) => Number.isInteger(n) && n >= 1 && n <= 100, {
    message: "limit must be an integer from 1 to 100"
  })
)

export const pageSize = (limit: number | undefined): number => limit ?? DEFAULT_PAGE_SIZE

/**
 * Where a page starts: just after an id in the list's order (`starting_after`), or just before
 * it (`ending_before`). Repositories read it as keyset conditions (db/Keyset.ts).
 */
export interface Cursor {
  readonly direction: "after" | "before"
  readonly id: string
}

interface CursorParams {
  readonly starting_after?: string | undefined
  readonly ending_before?: string | undefined
}

/** The cursor a list request names, if any (the contract refuses both at once: `oneCursor`). */
export const cursorOf = (params: CursorParams): Cursor | undefined =>
  params.ending_before !== undefined
    ? { direction: "before", id: params.ending_before }
    : params.starting_after !== undefined
    ? { direction: "after", id: params.starting_after }
    : undefined

/** The two cursors page in opposite directions: a request that names both is refused (400). */
export const oneCursor = Schema.makeFilter<CursorParams>((params) =>
  params.starting_after === undefined || params.ending_before === undefined
    ? undefined
    : { path: ["ending_before"], issue: "starting_after and ending_before cannot be used together" }
)

/** What `?ending_before=` means, for the contract's lists. */
export const endingBeforeDescription = "The page of items just before this id in the list's order (newest first " +
  "for most lists), in that same order. `has_more` then says whether more items come before them, and `next_cursor` " +
  "is the first item's id, to pass as `ending_before` again. Not together with `starting_after`."

export const PageParams = Schema.Struct({
  limit: Schema.optionalKey(PageLimit),
  starting_after: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))),
  ending_before: Schema.optionalKey(
    Schema.String.check(Schema.isMaxLength(64)).annotate({ description: endingBeforeDescription })
  )
}).check(oneCursor)
export type PageParams = typeof PageParams.Type

export const Page = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    data: Schema.Array(item),
    has_more: Schema.Boolean,
    next_cursor: Schema.NullOr(Schema.String)
  })

/**
 * Builds a page from rows fetched with `limit + 1`: the extra row only tells whether more exist.
 * Before a cursor the rows come nearest first, against the list's order (db/Keyset.ts): the page
 * is turned back into the list's order, and continues from its first item.
 */
export const toPage = <A extends { readonly id: string }>(rows: ReadonlyArray<A>, limit: number, cursor?: Cursor) => {
  const backwards = cursor?.direction === "before"
  const nearest = rows.slice(0, limit)
  const data = backwards ? nearest.reverse() : nearest
  const has_more = rows.length > limit
  return { data, has_more, next_cursor: has_more ? (backwards ? data[0]! : data[data.length - 1]!).id : null }
}
