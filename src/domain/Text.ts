/**
 * Invoice text as the API takes it: visible characters only, trimmed and bounded.
 */
import { Schema } from "effect"
import { omittedFromJsonSchema } from "./Described.js"
import { trimmedString } from "./Normalized.js"

/**
 * Control characters (but tab and line breaks), the Unicode line and paragraph separators, and the
 * invisible formatting ones (bidi overrides and isolates, zero-width characters, soft hyphen, BOM).
 * On an invoice they are invisible or reorder what a reader sees (a taker's name displayed other
 * than it is), and XML tools rewrite some of them (U+0085, U+2028 become line feeds), so the note
 * would not say what the API accepted.
 */
const INVISIBLE_OR_CONTROL =
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/u

/** Invoice text: no control or invisible formatting characters (tab and line breaks are fine). */
export const visibleText = Schema.makeFilter((s: string) => !INVISIBLE_OR_CONTROL.test(s), {
  message:
    "must not contain control characters or invisible formatting characters (such as bidi overrides or zero-width spaces)",
  ...omittedFromJsonSchema
})

/** Text the API trims, then bounds: at least one character, at most `max`, all of it visible. */
export const boundedText = (max: number) =>
  trimmedString(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(max), visibleText))

/** `xMotivo`/`xJust` of the events, the `subst` group and number voiding: 15 to 255 characters. */
export const ReasonText = trimmedString(Schema.String.check(
  Schema.isMinLength(15, { message: "reason must have 15 to 255 characters" }),
  Schema.isMaxLength(255, { message: "reason must have 15 to 255 characters" }),
  visibleText
))
