/**
 * A linear look at a JSON body before anything parses it (SPEC §11: nesting at most 64 levels).
 * `JSON.parse` itself copes with deep nesting, but everything after it walks values recursively
 * (schema decoding and its error messages, request hashing, JSONB encoding), so depth is refused
 * up front, in one pass that allocates nothing.
 *
 * The same pass finds escaped lone surrogates (`"\ud800"`): they are valid JSON but not text, and
 * PostgreSQL refuses them in a `jsonb` column. Raw UTF-8 cannot carry one (the decoder turns
 * invalid bytes into U+FFFD), so escapes are the only way in.
 */

export const MAX_JSON_DEPTH = 64

export type JsonTextProblem = "too_deep" | "lone_surrogate"

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const LOWER_U = 0x75

const hexValue = (text: string, at: number): number => {
  const digits = text.slice(at, at + 4)
  return /^[0-9a-fA-F]{4}$/.test(digits) ? parseInt(digits, 16) : -1
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff

/** The first problem of a JSON text, or null. Malformed JSON is left to the parser to report. */
export const jsonTextProblem = (text: string): JsonTextProblem | null => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === QUOTE) inString = false
      else if (c === BACKSLASH) {
        if (text.charCodeAt(i + 1) !== LOWER_U) {
          i += 1
          continue
        }
        const unit = hexValue(text, i + 2)
        if (isLow(unit)) return "lone_surrogate"
        if (isHigh(unit)) {
          const next = text.charCodeAt(i + 6) === BACKSLASH && text.charCodeAt(i + 7) === LOWER_U
            ? hexValue(text, i + 8)
            : -1
          if (!isLow(next)) return "lone_surrogate"
          i += 11
        } else {
          i += 5
        }
      }
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth += 1
      if (depth > MAX_JSON_DEPTH) return "too_deep"
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth -= 1
  }
  return null
}
