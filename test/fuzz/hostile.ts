/**
 * The hostile material of the fuzz, as fast-check arbitraries: unicode edge cases, numbers JSON
 * allows but JavaScript cannot hold, mutations of valid JSON values, malformed JSON text, deep
 * nesting, bodies at and past the 1 MiB limit, bytes that are not UTF-8, odd path segments, query
 * strings and header values.
 */
import fc from "fast-check"
import { MAX_JSON_DEPTH } from "../../src/http/JsonText.js"
import { MAX_BODY_BYTES } from "../../src/http/RequestGuards.js"

/** Strings that have broken services before: controls, surrogates, bidi and zero-width marks, long combining runs. */
const EDGE_STRINGS: ReadonlyArray<string> = [
  "",
  " ",
  "\t\n\r",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "a\udc00b",
  "\udbff\udfff",
  "\u202eevil\u202c",
  "\u200e\u200f\u061c",
  "\u200b\u200c\u200d\u2060",
  `e${"\u0301".repeat(300)}`,
  "👩‍👩‍👧‍👦🏳️‍🌈🇧🇷",
  "\ufeffbom",
  "\uffff\ufffe",
  "\u2028\u2029",
  "İıßﬀΩ",
  "<script>alert(1)</script>",
  "' OR '1'='1",
  "\"; --",
  "${jndi:ldap://x/a}",
  "{{7*7}}",
  "%s%n%x",
  "\\",
  "\"",
  "null",
  "undefined",
  "NaN",
  "-0",
  "__proto__"
]

export const edgeString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  {
    weight: 1,
    // Long runs, cut wherever the length falls (also inside a surrogate pair).
    arbitrary: fc.tuple(fc.constantFrom(...EDGE_STRINGS), fc.constantFrom(256, 1025, 5000)).map(([s, n]) => {
      const unit = s === "" ? "x" : s
      return unit.repeat(Math.ceil(n / unit.length)).slice(0, n)
    })
  }
)

/**
 * JSON number tokens that do not survive `JSON.parse` intact or sit at a boundary: out of double
 * range, negative zero, past 2^53, underflowing to zero, integers written as floats or exponents.
 */
const RAW_NUMBERS: ReadonlyArray<string> = [
  "1e309",
  "-1e309",
  "-0",
  "9007199254740993",
  "-9007199254740993",
  "1e-400",
  "123456789012345678901234567890",
  "0.1",
  "1E2",
  "1.0",
  "2147483648",
  "-1",
  "0"
]

/**
 * Values that mean something to the service (an existing user's email, the world's ids, a URL the
 * webhook check accepts), by the field name they belong in (`url`, `email`, `tax_id`, `id`...).
 * Random text never passes those checks; these carry a request past them, to the handler's own.
 */
export type Known = ReadonlyArray<readonly [field: string, values: ReadonlyArray<string>]>

/** A JSON value to put somewhere it does not belong: another type, a hostile string or number. */
export type Replacement = { readonly json: unknown } | { readonly raw: string }

/**
 * What replaces a value: hostile strings and numbers, other types, escapes as a client could write
 * them, and now and then a known value of the world in a field it does not belong to.
 */
const replacement = (known: Known): fc.Arbitrary<Replacement> => {
  const values = known.flatMap(([, v]) => v)
  return fc.oneof(
    { weight: 4, arbitrary: edgeString.map((s) => ({ json: s })) },
    { weight: 3, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((raw) => ({ raw })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom<unknown>(null, true, false, 0, [], {}, [null], { "": null }, [[[]]]).map((json) => ({
        json
      }))
    },
    // Escapes as the client wrote them, which `JSON.stringify` would never produce.
    {
      weight: 1,
      arbitrary: fc.constantFrom("\"a\\ud800b\"", "\"\\udc00\"", "\"\\u0000\"", "\"x\\u0000y\"", "\"\\ud83d\\ude00\"")
        .map((raw) => ({ raw }))
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((json) => ({ json })) },
    ...(values.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...values).map((json) => ({ json })) }] : [])
  )
}

const EXTRA_KEYS = [
  "extra",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "",
  " ",
  "a".repeat(300),
  "ключ",
  "\u0000"
]

export type Mutation =
  | { readonly _tag: "Replace"; readonly at: number; readonly with: Replacement }
  | { readonly _tag: "Remove"; readonly at: number }
  | { readonly _tag: "AddKey"; readonly at: number; readonly key: string; readonly with: Replacement }
  | { readonly _tag: "Grow"; readonly at: number; readonly length: number }
  | { readonly _tag: "Wrap"; readonly inArray: boolean }
  /** A known value in a field named for it (see `Known`). */
  | { readonly _tag: "Known"; readonly at: number; readonly pick: number }

export const mutation = (known: Known): fc.Arbitrary<Mutation> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.record({ _tag: fc.constant("Known" as const), at: fc.nat(), pick: fc.nat() }) },
    {
      weight: 6,
      arbitrary: fc.record({ _tag: fc.constant("Replace" as const), at: fc.nat(), with: replacement(known) })
    },
    { weight: 3, arbitrary: fc.record({ _tag: fc.constant("Remove" as const), at: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        _tag: fc.constant("AddKey" as const),
        at: fc.nat(),
        key: fc.constantFrom(...EXTRA_KEYS),
        with: replacement(known)
      })
    },
    {
      weight: 2,
      arbitrary: fc.record({
        _tag: fc.constant("Grow" as const),
        at: fc.nat(),
        length: fc.constantFrom(256, 1025, 20_000, 200_000)
      })
    },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Wrap" as const), inArray: fc.boolean() }) }
  )

type Node = {
  readonly parent: Array<unknown> | Record<string, unknown> | undefined
  readonly key: string | number
  readonly value: unknown
}

const nodesOf = (root: { value: unknown }): Array<Node> => {
  const nodes: Array<Node> = []
  const walk = (parent: Node["parent"], key: string | number, value: unknown) => {
    nodes.push({ parent, key, value })
    if (Array.isArray(value)) value.forEach((item, i) => walk(value, i, item))
    else if (typeof value === "object" && value !== null) {
      for (const [k, v] of Object.entries(value)) walk(value as Record<string, unknown>, k, v)
    }
  }
  walk(undefined, "value", root.value)
  return nodes
}

const MARKER = "\u0001fuzz-raw\u0001"

/** JSON text of a value whose leaves may be raw tokens (see `Replacement`). */
const stringifyWithRaw = (value: unknown, raws: ReadonlyArray<string>): string => {
  let text = JSON.stringify(value) ?? "null"
  raws.forEach((raw, i) => {
    text = text.replace(JSON.stringify(`${MARKER}${i}`), raw)
  })
  return text
}

const knownFor = (known: Known, key: string | number) =>
  typeof key === "string" ? known.find(([field]) => key === field || key.endsWith(`_${field}`))?.[1] : undefined

/** Applies mutations to a copy of a valid JSON value and returns the JSON text. */
export const mutate = (valid: unknown, mutations: ReadonlyArray<Mutation>, known: Known): string => {
  const root = { value: structuredClone(valid) as unknown }
  const raws: Array<string> = []
  const valueOf = (r: Replacement): unknown => {
    // A copy: the replacements are shared constants, and a later mutation of this body must not
    // change them (one put inside itself would make every later body that uses it circular).
    if ("json" in r) return structuredClone(r.json)
    raws.push(r.raw)
    return `${MARKER}${raws.length - 1}`
  }
  const set = (node: Node, value: unknown) => {
    if (node.parent === undefined) root.value = value
    else if (Array.isArray(node.parent)) node.parent[node.key as number] = value
    else Object.defineProperty(node.parent, node.key, { value, enumerable: true, writable: true, configurable: true })
  }
  for (const m of mutations) {
    const nodes = nodesOf(root)
    if (m._tag === "Wrap") {
      root.value = m.inArray ? [root.value] : { value: root.value }
      continue
    }
    const node = nodes[m.at % nodes.length]!
    switch (m._tag) {
      case "Known": {
        // The first node from `at` on whose name has known values.
        for (let i = 0; i < nodes.length; i++) {
          const candidate = nodes[(m.at + i) % nodes.length]!
          const values = knownFor(known, candidate.key)
          if (values !== undefined && values.length > 0) {
            set(candidate, values[m.pick % values.length])
            break
          }
        }
        break
      }
      case "Replace":
        set(node, valueOf(m.with))
        break
      case "Remove":
        if (Array.isArray(node.parent)) node.parent.splice(node.key as number, 1)
        else if (node.parent !== undefined) delete node.parent[node.key as string]
        break
      case "AddKey": {
        const target = typeof node.value === "object" && node.value !== null && !Array.isArray(node.value)
          ? node.value
          : undefined
        if (target !== undefined) {
          Object.defineProperty(target, m.key, {
            value: valueOf(m.with),
            enumerable: true,
            writable: true,
            configurable: true
          })
        }
        break
      }
      case "Grow":
        if (typeof node.value === "string") {
          const unit = node.value === "" ? "x" : node.value
          set(node, unit.repeat(Math.ceil(m.length / unit.length)).slice(0, m.length))
        } else if (Array.isArray(node.value)) {
          const items: ReadonlyArray<unknown> = node.value.length === 0 ? [null] : node.value
          set(node, Array.from({ length: Math.min(m.length, 50_000) }, (_, i) => items[i % items.length]))
        }
        break
    }
  }
  return stringifyWithRaw(root.value, raws)
}

/** Text that is not JSON, or JSON in a form the standard refuses, made from a valid body's text. */
export const malformedJson = (validText: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.nat({ max: Math.max(0, validText.length - 1) }).map((n) => validText.slice(0, n)),
    fc.constantFrom(
      `${validText}garbage`,
      `${validText},`,
      `${validText}${validText}`,
      `\ufeff${validText}`,
      validText.replaceAll("\"", "'"),
      validText.replace(/([}\]])$/u, ",$1"),
      validText.replace(/^\{"([^"]*)":/u, "{\"$1\":1,\"$1\":"),
      "",
      " ",
      "\n",
      "nul",
      "tru",
      "-",
      "1e",
      "\"",
      "[",
      "}",
      "{\"a\":NaN}",
      "{\"a\":Infinity}",
      "{\"a\":undefined}",
      "{a:1}",
      "{\"a\":01}",
      "{\"a\":.5}",
      "{\"a\":+1}",
      "{\"a\":0x10}",
      "{\"a\":\"\\x41\"}",
      "{\"a\":\"\\u00\"}",
      "{\"a\":\"line\nbreak\"}",
      "{\"a\":1 /* comment */}",
      "{\"a\":1}{\"b\":2}",
      "{\"__proto__\":{\"admin\":true}}",
      "{\"constructor\":{\"prototype\":{\"admin\":true}}}"
    )
  )

export type NestShape = "array" | "object" | "mixed" | "unclosed"

/** Nesting at, just past and far past the limit, as arrays, objects, both, or never closed. */
export const nesting = fc.record({
  depth: fc.constantFrom(MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500, 20_000, 300_000),
  shape: fc.constantFrom<NestShape>("array", "object", "mixed", "unclosed")
})

export const nestedText = ({ depth, shape }: { readonly depth: number; readonly shape: NestShape }): string => {
  switch (shape) {
    case "array":
      return `${"[".repeat(depth)}1${"]".repeat(depth)}`
    case "object":
      return `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`
    case "mixed":
      return `${"[{\"a\":".repeat(Math.ceil(depth / 2))}1${"}]".repeat(Math.ceil(depth / 2))}`
    case "unclosed":
      return "[".repeat(depth)
  }
}

export type HugeShape = "string" | "array" | "keys"

/** Bodies at the size limit (read, then judged) and just past it (413), by their offset from 1 MiB. */
export const huge = fc.record({
  offset: fc.constantFrom(-64, -1, 0, 1, 4096),
  shape: fc.constantFrom<HugeShape>("string", "array", "keys")
})

export const hugeText = ({ offset, shape }: { readonly offset: number; readonly shape: HugeShape }): string => {
  const size = MAX_BODY_BYTES + offset
  switch (shape) {
    case "string":
      return `{"x":"${"a".repeat(size - 8)}"}`
    case "array":
      return `[${"1,".repeat(Math.floor((size - 3) / 2))}1]`.padEnd(size, " ")
    case "keys": {
      const parts: Array<string> = []
      let length = 2
      for (let i = 0; length < size - 24; i++) {
        const part = `"k${i}":${i}`
        parts.push(part)
        length += part.length + 1
      }
      return `{${parts.join(",")}}`.padEnd(size, " ")
    }
  }
}

const NOT_UTF8: ReadonlyArray<(text: string) => Uint8Array> = [
  (text) => Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xff, 0xfe]), Buffer.from(text.slice(-2))]),
  () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]),
  () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d]),
  (text) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]),
  (text) => Buffer.from(`${text.slice(0, -1)},"n":"ção"}`, "latin1")
]

/** Which way to spoil a valid body's bytes (see `notUtf8Bytes`). */
export const notUtf8 = fc.nat({ max: NOT_UTF8.length - 1 })

/**
 * Bytes that are not UTF-8 (a stray byte, an overlong NUL, an encoded surrogate, a lone
 * continuation byte) or text in another encoding (UTF-16 with a BOM, latin-1).
 */
export const notUtf8Bytes = (variant: number, validText: string): Uint8Array => NOT_UTF8[variant]!(validText)

/** Percent-encodes the UTF-8 of a string (lone surrogates become U+FFFD, as any client would send them). */
export const percentEncode = (text: string): string =>
  [...Buffer.from(text, "utf8")]
    .map((byte) =>
      /[A-Za-z0-9\-._~]/u.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).padStart(2, "0").toUpperCase()}`
    )
    .join("")

/**
 * Text as it can stand on a request line: what HTTP forbids there (spaces, controls, non-ASCII) is
 * percent-encoded, and everything else, a stray or malformed `%` included, is sent as written.
 */
export const onRequestLine = (text: string): string => text.replace(/[^\x21-\x7e]+/gu, (run) => percentEncode(run))

/** Path segments a client should never send: escapes that decode to nothing valid, traversal, huge, other kinds' ids. */
export const oddSegment = (otherIds: ReadonlyArray<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: edgeString.map(percentEncode) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "%",
        "%zz",
        "%00",
        "%2e%2e",
        "..",
        "a%2Fb",
        "%FF",
        "%C0%80",
        "%ED%A0%80",
        "%E2%80%AE",
        "null",
        "0",
        "-1",
        "1e309",
        "__proto__",
        "constructor",
        "ten_",
        "doc_%00",
        "x".repeat(300),
        "y".repeat(6000)
      )
    },
    ...(otherIds.length > 0
      ? [
        { weight: 2, arbitrary: fc.constantFrom(...otherIds) },
        { weight: 1, arbitrary: fc.constantFrom(...otherIds).map((id) => id.toUpperCase()) },
        { weight: 1, arbitrary: fc.constantFrom(...otherIds).map((id) => `${id}x`) },
        { weight: 1, arbitrary: fc.constantFrom(...otherIds).map((id) => `${id}%20`) }
      ]
      : [])
  )

/** A query parameter's value where a number, an id or a timestamp belongs. */
export const oddQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    "-1",
    "0",
    "101",
    "1e309",
    "NaN",
    "1.5",
    "9007199254740993",
    " 1",
    "1 ",
    "true",
    "null",
    "[]",
    "%",
    "%zz",
    "%00"
  ),
  edgeString.map(percentEncode),
  fc.constantFrom(300, 6000).map((n) => "z".repeat(n))
)

/** Header values (latin-1 text: what HTTP can carry) of the odd kind. */
const headerText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\t",
    "ção",
    "ÿ",
    "null",
    "0",
    "-1",
    "%00",
    "a".repeat(255),
    "a".repeat(256),
    "a".repeat(300),
    "b".repeat(3000)
  ),
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c === 0x7f ? 0x20 : c)),
    maxLength: 60
  })
)

const TRACEPARENTS = [
  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  "00-00000000000000000000000000000000-0000000000000000-01",
  "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  "00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01",
  "00-xyz-abc-01",
  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
  "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
  "-".repeat(55)
]

/** Extra headers: idempotency keys of every length, trace context junk, browser marks, encodings the body does not have. */
export const oddHeaders: fc.Arbitrary<Record<string, string>> = fc.dictionary(
  fc.constantFrom(
    "idempotency-key",
    "traceparent",
    "tracestate",
    "x-request-id",
    "accept",
    "accept-encoding",
    "content-encoding",
    "origin",
    "sec-fetch-site",
    "user-agent",
    "x-forwarded-for",
    "cookie",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "x-fuzz"
  ),
  fc.oneof(
    headerText,
    fc.constantFrom(...TRACEPARENTS),
    fc.constantFrom("gzip", "br", "deflate", "identity", "text/html", "*/*", "v1,AAAA")
  ),
  { maxKeys: 3 }
)

/** Content types: the right one mostly, then charsets, near misses and unrelated types. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      undefined,
      "",
      "application/json; charset=utf-8",
      "application/json; charset=utf-16",
      "APPLICATION/JSON",
      "application/vnd.api+json",
      "application/json, text/plain",
      "text/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data",
      "multipart/form-data; boundary=fuzz",
      "application/xml",
      "application/octet-stream",
      "*/*",
      "junk"
    )
  }
)
