/**
 * One fuzz case per run: a small plan drawn by fast-check (which auth, which path segments, which
 * body strategy, which mutations), turned into the bytes on the wire only when it runs, so a
 * failure prints a plan a person can read instead of a megabyte of body.
 */
import fc from "fast-check"
import { randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { base32 } from "../../src/domain/Tokens.js"
import { type ContractEndpoint, decodes, propertyNames, wireSamples } from "./contract.js"
import {
  contentType,
  edgeString,
  huge,
  hugeText,
  type Known,
  malformedJson,
  mutate,
  type Mutation,
  mutation,
  nestedText,
  nesting,
  notUtf8,
  notUtf8Bytes,
  oddHeaders,
  oddQueryValue,
  oddSegment,
  onRequestLine,
  percentEncode
} from "./hostile.js"
import type { WireRequest } from "./send.js"
import type { World } from "./world.js"

export type AuthKind = "session" | "apiKey" | "none" | "otherTenantKey" | "junk"

const ALL_AUTH: ReadonlyArray<AuthKind> = ["session", "apiKey", "none", "otherTenantKey", "junk"]

/** The authentication an endpoint takes (most runs) and every other kind (fewer runs). */
export const authKinds = (endpoint: ContractEndpoint) => {
  const appropriate: ReadonlyArray<AuthKind> = endpoint.authentication === "api_key"
    ? ["apiKey"]
    : endpoint.authentication === "session"
    ? ["session"]
    : endpoint.authentication === "session_or_api_key"
    ? ["session", "apiKey"]
    : ["none"]
  return { appropriate, others: ALL_AUTH.filter((kind) => !appropriate.includes(kind)) }
}

type BodyPlan =
  | { readonly _tag: "None" }
  | { readonly _tag: "Valid"; readonly sample: number }
  | { readonly _tag: "Mutated"; readonly sample: number; readonly mutations: ReadonlyArray<Mutation> }
  | { readonly _tag: "Json"; readonly value: unknown }
  | { readonly _tag: "Malformed"; readonly text: string }
  | {
    readonly _tag: "Nested"
    readonly depth: number
    readonly shape: Parameters<typeof nestedText>[0]["shape"]
    readonly inside: number | undefined
  }
  | { readonly _tag: "Huge"; readonly offset: number; readonly shape: Parameters<typeof hugeText>[0]["shape"] }
  | { readonly _tag: "NotUtf8"; readonly variant: number; readonly sample: number }
  | { readonly _tag: "Multipart"; readonly form: MultipartPlan }

interface MultipartPlan {
  readonly boundary: string
  readonly parts: ReadonlyArray<{
    readonly name: string
    readonly filename: string | undefined
    readonly content: "certificate" | "password" | "junk" | "oversized" | "text"
    readonly text: string
    readonly junk: Uint8Array
  }>
  readonly damage: "none" | "no-final-boundary" | "wrong-boundary" | "no-part-headers"
}

type QueryEdit =
  | { readonly _tag: "Set"; readonly at: number; readonly value: string }
  | { readonly _tag: "Add"; readonly name: string; readonly value: string }
  | { readonly _tag: "Repeat"; readonly at: number }

export interface Plan {
  readonly endpoint: string
  readonly method: string
  readonly auth: AuthKind
  readonly junkAuthorization: string | undefined
  readonly segments: Readonly<Record<string, string>>
  readonly alias: boolean
  readonly query: { readonly sample: number | undefined; readonly edits: ReadonlyArray<QueryEdit> }
  readonly headers: Readonly<Record<string, string>>
  readonly contentType: string | undefined
  readonly body: BodyPlan
  readonly chunked: boolean
  readonly signature: "none" | "valid" | "stale"
}

/** The valid wire values the plans index into, derived once per endpoint from its schemas. */
export interface Pools {
  readonly params: ReadonlyArray<Record<string, unknown>>
  readonly query: ReadonlyArray<Record<string, unknown>>
  readonly json: ReadonlyArray<unknown>
  readonly multipartFields: ReadonlyArray<string>
  /** The world's values that mutations put into bodies (see `Known`). */
  readonly known: Known
}

/** Strings without NUL or lone surrogates, when the schema still accepts them: valid bodies that reach the handlers. */
const tame = (value: unknown): unknown =>
  typeof value === "string"
    // eslint-disable-next-line no-control-regex -- control characters are what it replaces
    ? value.replace(/[\u0000-\u001f\ud800-\udfff]/gu, "x")
    : Array.isArray(value)
    ? value.map(tame)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tame(v)]))
    : value

const asRecords = (values: ReadonlyArray<unknown>) =>
  values.filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v))

export const poolsOf = (endpoint: ContractEndpoint, seed: number, size: number, known: Known): Pools => {
  const json = endpoint.payloads.find((p) => /json/u.test(p.contentType))
  const multipart = endpoint.payloads.find((p) => p.contentType.startsWith("multipart/"))
  const samples = json === undefined ? [] : wireSamples(json.schema, seed, size)
  return {
    params: endpoint.params === undefined ? [] : asRecords(wireSamples(endpoint.params, seed + 1, size)),
    query: endpoint.query === undefined ? [] : asRecords(wireSamples(endpoint.query, seed + 2, size)),
    json: json === undefined ? [] : [...samples, ...samples.map(tame).filter(decodes(json.schema))],
    multipartFields: propertyNames(multipart?.schema),
    known
  }
}

/** A string shaped exactly like a token (`etd_<kind>_` and 32 base32 characters) that no key or session has. */
const tokenShaped = (kind: "test" | "sess"): fc.Arbitrary<string> =>
  fc.uint8Array({ minLength: 20, maxLength: 20 }).map((bytes) => `etd_${kind}_${base32(bytes)}`)

const junkAuthorization = (world: World): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(
      "Bearer",
      "Bearer ",
      "Basic dXNlcjpwYXNzd29yZA==",
      `Bearer ${world.a.key}x`,
      `bearer ${world.a.key}`,
      `Bearer  ${world.a.key}`,
      `Token ${world.a.key}`,
      `Bearer ${world.a.key.toUpperCase()}`,
      `Bearer ${"a".repeat(5000)}`,
      `Bearer ${world.a.session.slice(0, -1)}`
    ),
    fc.oneof(tokenShaped("test"), tokenShaped("sess")).map((token) => `Bearer ${token}`)
  )

const segmentArb = (name: string, world: World, derived: ReadonlyArray<string>, anyIds: ReadonlyArray<string>) => {
  const own = world.a.ids[name] ?? []
  const other = world.b.ids[name] ?? []
  return fc.oneof(
    ...(own.length > 0 ? [{ weight: 12, arbitrary: fc.constantFrom(...own) }] : []),
    ...(other.length > 0 ? [{ weight: 2, arbitrary: fc.constantFrom(...other) }] : []),
    ...(derived.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...derived).map(percentEncode) }] : []),
    { weight: 3, arbitrary: oddSegment(anyIds) }
  )
}

const queryEdit = (names: ReadonlyArray<string>, ids: ReadonlyArray<string>): fc.Arbitrary<QueryEdit> =>
  fc.oneof(
    fc.record({
      _tag: fc.constant("Set" as const),
      at: fc.nat(),
      value: ids.length > 0 ? fc.oneof(oddQueryValue, fc.constantFrom(...ids)) : oddQueryValue
    }),
    fc.record({
      _tag: fc.constant("Add" as const),
      name: fc.constantFrom(...names, "unknown", "limit[]", "__proto__", "k"),
      // A token-shaped value in the URL is `400 api_key_in_url`; never a real one, which would be reported as exposed.
      value: fc.oneof(oddQueryValue, tokenShaped("test"))
    }),
    fc.record({ _tag: fc.constant("Repeat" as const), at: fc.nat() })
  )

const multipartPlan = (fields: ReadonlyArray<string>): fc.Arbitrary<MultipartPlan> =>
  fc.record({
    boundary: fc.constantFrom("fuzzboundary", "x", "-".repeat(70), "b".repeat(71)),
    parts: fc.array(
      fc.record({
        name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: edgeString }),
        filename: fc.constantFrom(undefined, "certificate.pfx", "", "../../etc/x.p12", "ção.p12", "f".repeat(300)),
        content: fc.constantFrom(
          "certificate" as const,
          "password" as const,
          "junk" as const,
          "oversized" as const,
          "text" as const
        ),
        text: edgeString,
        junk: fc.uint8Array({ maxLength: 300 })
      }),
      { maxLength: 4 }
    ),
    damage: fc.constantFrom(
      "none" as const,
      "none" as const,
      "none" as const,
      "no-final-boundary" as const,
      "wrong-boundary" as const,
      "no-part-headers" as const
    )
  })

const bodyPlan = (endpoint: ContractEndpoint, pools: Pools): fc.Arbitrary<BodyPlan> => {
  const hasJson = pools.json.length > 0
  const sample = fc.nat({ max: Math.max(0, pools.json.length - 1) })
  const validText = (i: number) => JSON.stringify(pools.json[i] ?? {})
  const takesBody = endpoint.payloads.length > 0
  const weight = (w: number) => (takesBody ? w : 1)
  return fc.oneof(
    { weight: takesBody ? 1 : 12, arbitrary: fc.constant({ _tag: "None" as const }) },
    ...(hasJson
      ? [
        { weight: weight(3), arbitrary: sample.map((s) => ({ _tag: "Valid" as const, sample: s })) },
        // Valid, with the world's values where they fit: past "no such user" to the handler's own rules.
        {
          weight: weight(4),
          arbitrary: fc.record({
            _tag: fc.constant("Mutated" as const),
            sample,
            mutations: fc.array(fc.record({ _tag: fc.constant("Known" as const), at: fc.nat(), pick: fc.nat() }), {
              minLength: 1,
              maxLength: 3
            })
          })
        },
        {
          weight: weight(10),
          arbitrary: fc.record({
            _tag: fc.constant("Mutated" as const),
            sample,
            mutations: fc.array(mutation(pools.known), { minLength: 1, maxLength: 3 })
          })
        },
        {
          weight: weight(3),
          arbitrary: sample.chain((s) => malformedJson(validText(s))).map((text) => ({
            _tag: "Malformed" as const,
            text
          }))
        },
        { weight: weight(1), arbitrary: fc.record({ _tag: fc.constant("NotUtf8" as const), variant: notUtf8, sample }) }
      ]
      : []),
    { weight: weight(2), arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => ({ _tag: "Json" as const, value })) },
    {
      weight: weight(2),
      arbitrary: fc.tuple(nesting, fc.option(sample, { nil: undefined })).map(([n, inside]) => ({
        _tag: "Nested" as const,
        ...n,
        inside: hasJson ? inside : undefined
      }))
    },
    { weight: weight(1), arbitrary: huge.map((h) => ({ _tag: "Huge" as const, ...h })) },
    ...(pools.multipartFields.length > 0
      ? [{
        weight: 6,
        arbitrary: multipartPlan(pools.multipartFields).map((form) => ({ _tag: "Multipart" as const, form }))
      }]
      : [])
  )
}

const WRONG_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

export const planArbitrary = (
  endpoint: ContractEndpoint,
  auth: AuthKind,
  world: World,
  pools: Pools
): fc.Arbitrary<Plan> => {
  const anyIds = [...Object.values(world.a.ids).flat(), ...Object.values(world.b.ids).flat()]
  const segments = fc.record(
    Object.fromEntries(endpoint.pathParams.map((name) => [
      name,
      segmentArb(
        name,
        world,
        pools.params.map((p) => p[name]).filter((v): v is string => typeof v === "string"),
        anyIds
      )
    ]))
  )
  const queryNames = propertyNames(endpoint.query)
  return fc.record({
    endpoint: fc.constant(endpoint.name),
    method: fc.oneof({ weight: 15, arbitrary: fc.constant(endpoint.method) }, {
      weight: 1,
      arbitrary: fc.constantFrom(...WRONG_METHODS)
    }),
    auth: fc.constant(auth),
    junkAuthorization: auth === "junk" ? junkAuthorization(world) : fc.constant(undefined),
    segments,
    // Now and then the unprefixed alias of a `/v1` path (SPEC §2).
    alias: fc.oneof({ weight: 7, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    query: fc.record({
      sample: pools.query.length > 0
        ? fc.option(fc.nat({ max: pools.query.length - 1 }), { nil: undefined })
        : fc.constant(undefined),
      edits: fc.oneof(
        { weight: endpoint.query === undefined ? 6 : 2, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(queryEdit(queryNames, anyIds), { minLength: 1, maxLength: 3 }) }
      )
    }),
    headers: fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: oddHeaders }),
    contentType,
    body: bodyPlan(endpoint, pools),
    chunked: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    signature: endpoint.authentication === "public" && endpoint.payloads.length > 0
      ? fc.constantFrom("none" as const, "valid" as const, "valid" as const, "stale" as const)
      : fc.constant("none" as const)
  })
}

const bearerOf = (plan: Plan, world: World): string | undefined => {
  switch (plan.auth) {
    case "session":
      return `Bearer ${world.a.session}`
    case "apiKey":
      return `Bearer ${world.a.key}`
    case "otherTenantKey":
      return `Bearer ${world.b.key}`
    case "junk":
      return plan.junkAuthorization
    case "none":
      return undefined
  }
}

const queryString = (plan: Plan, pools: Pools): string => {
  const base = plan.query.sample === undefined ? {} : pools.query[plan.query.sample] ?? {}
  const entries: Array<[string, string]> = Object.entries(base).map((
    [k, v]
  ) => [percentEncode(k), percentEncode(String(v))])
  for (const edit of plan.query.edits) {
    switch (edit._tag) {
      case "Set":
        if (entries.length > 0) entries[edit.at % entries.length]![1] = edit.value
        break
      case "Add":
        entries.push([percentEncode(edit.name), edit.value])
        break
      case "Repeat":
        if (entries.length > 0) entries.push(entries[edit.at % entries.length]!)
        break
    }
  }
  return entries.length === 0 ? "" : `?${entries.map(([k, v]) => `${onRequestLine(k)}=${onRequestLine(v)}`).join("&")}`
}

const multipartBytes = (form: MultipartPlan, world: World): { bytes: Uint8Array; type: string } => {
  const boundary = form.boundary
  const chunks: Array<Buffer> = []
  for (const part of form.parts) {
    const content = part.content === "certificate" && world.certificate !== undefined
      ? Buffer.from(world.certificate.pkcs12)
      : part.content === "password" && world.certificate !== undefined
      ? Buffer.from(world.certificate.password)
      : part.content === "junk"
      ? Buffer.from(part.junk)
      : part.content === "oversized"
      ? Buffer.alloc(80 * 1024, 0x30)
      : Buffer.from(part.text)
    const disposition = `form-data; name="${percentEncode(part.name)}"${
      part.filename === undefined ? "" : `; filename="${part.filename}"`
    }`
    const headers = form.damage === "no-part-headers" ? "" : `Content-Disposition: ${disposition}\r\n` +
      (part.filename === undefined ? "" : "Content-Type: application/x-pkcs12\r\n")
    chunks.push(Buffer.from(`--${boundary}\r\n${headers}\r\n`), content, Buffer.from("\r\n"))
  }
  if (form.damage !== "no-final-boundary") chunks.push(Buffer.from(`--${boundary}--\r\n`))
  const declared = form.damage === "wrong-boundary" ? `${boundary}x` : boundary
  return { bytes: Buffer.concat(chunks), type: `multipart/form-data; boundary=${declared}` }
}

const bodyBytes = (
  plan: Plan,
  pools: Pools,
  world: World
): { bytes: Uint8Array | undefined; type: string | undefined } => {
  const body = plan.body
  const text = (t: string) => ({ bytes: Buffer.from(t, "utf8"), type: plan.contentType })
  switch (body._tag) {
    case "None":
      return { bytes: undefined, type: plan.contentType }
    case "Valid":
      return text(JSON.stringify(pools.json[body.sample]))
    case "Mutated":
      return text(mutate(pools.json[body.sample], body.mutations, pools.known))
    case "Json":
      return text(JSON.stringify(body.value) ?? "null")
    case "Malformed":
      return text(body.text)
    case "Nested": {
      const nested = nestedText(body)
      return text(
        body.inside === undefined
          ? nested
          : mutate(pools.json[body.inside], [{ _tag: "Replace", at: 1, with: { raw: nested } }], pools.known)
      )
    }
    case "Huge":
      return text(hugeText(body))
    case "NotUtf8":
      return { bytes: notUtf8Bytes(body.variant, JSON.stringify(pools.json[body.sample])), type: plan.contentType }
    case "Multipart": {
      const form = multipartBytes(body.form, world)
      return { bytes: form.bytes, type: form.type }
    }
  }
}

/**
 * Node's HTTP parser answers a request line and headers over 16 KiB with a bare `431` of its own,
 * before the service sees the request (reported with the fuzz: not the SPEC's JSON error). The
 * fuzz stays under that limit, shortening the path (the longest part) when it has to.
 */
const HEADER_BLOCK_BUDGET = 15 * 1024

const withinHeaderLimit = (path: string, headers: Readonly<Record<string, string>>): string => {
  const headerBytes = Object.entries(headers).reduce(
    (sum, [name, value]) => sum + name.length + Buffer.byteLength(value, "latin1") + 4,
    0
  )
  return path.slice(0, Math.max(64, HEADER_BLOCK_BUDGET - headerBytes - 100))
}

export interface Materialized {
  readonly request: WireRequest
  /** The credentials the request carried: no answer may contain them. */
  readonly secrets: ReadonlyArray<string>
}

/** The bytes of a plan, with a fresh Standard Webhooks signature when it asks for one. */
export const materialize = (plan: Plan, endpoint: ContractEndpoint, pools: Pools, world: World): Materialized => {
  let path = endpoint.path
  for (const [name, segment] of Object.entries(plan.segments)) path = path.replace(`:${name}`, onRequestLine(segment))
  if (plan.alias && path.startsWith("/v1/")) path = path.slice(3)
  path += queryString(plan, pools)
  const { bytes, type } = bodyBytes(plan, pools, world)
  const headers: Record<string, string> = { ...plan.headers }
  const authorization = bearerOf(plan, world)
  if (authorization !== undefined) headers["authorization"] = authorization
  if (type !== undefined) headers["content-type"] = type
  if (plan.signature !== "none") {
    // A fresh webhook-id each time: a repeated one is only ever a duplicate.
    const id = `msg_${randomBytes(8).toString("hex")}`
    const at = new Date(Date.now() - (plan.signature === "stale" ? 3_600_000 : 0))
    const signed = Buffer.from(bytes ?? new Uint8Array()).toString("utf8")
    headers["webhook-id"] = id
    headers["webhook-timestamp"] = String(Math.floor(at.getTime() / 1000))
    headers["webhook-signature"] = new Webhook(world.providerSecret).sign(id, at, signed)
  }
  return {
    request: {
      method: plan.method,
      path: withinHeaderLimit(path, headers),
      headers,
      body: bytes,
      chunked: plan.chunked
    },
    secrets: [
      world.a.session,
      world.a.key,
      world.b.session,
      world.b.key,
      world.providerSecret,
      ...(world.certificate === undefined ? [] : [world.certificate.password])
    ]
  }
}
