/**
 * The OpenAPI document is derived from the contract. Effect 4 names a component after the encoded
 * side of its schema (`DocumentEncoded`); integrators' generated clients use the component names,
 * so the document keeps the contract's own names (`Document`).
 */
const ENCODED = /Encoded$/

const renameRefs = (node: unknown, renamed: ReadonlyMap<string, string>): unknown => {
  if (Array.isArray(node)) return node.map((item) => renameRefs(item, renamed))
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      const name = value.replace("#/components/schemas/", "")
      out[key] = renamed.has(name) ? `#/components/schemas/${renamed.get(name)}` : value
    } else {
      out[key] = renameRefs(value, renamed)
    }
  }
  return out
}

/** Drops the `Encoded` suffix from component names, wherever the plain name is free. */
export const withContractNames = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = spec["components"] as { schemas?: Record<string, unknown> } | undefined
  const schemas = components?.schemas ?? {}
  const renamed = new Map<string, string>()
  for (const name of Object.keys(schemas)) {
    const plain = name.replace(ENCODED, "")
    if (plain !== name && !(plain in schemas)) renamed.set(name, plain)
  }
  const out = renameRefs(spec, renamed) as Record<string, unknown> & {
    components?: { schemas?: Record<string, unknown> }
  }
  if (out.components?.schemas) {
    out.components.schemas = Object.fromEntries(
      Object.entries(out.components.schemas).map(([name, schema]) => [renamed.get(name) ?? name, schema])
    )
  }
  return out
}

type JsonObject = { [key: string]: unknown }

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const objectAt = (parent: JsonObject, key: string): JsonObject => {
  const value = parent[key]
  if (isObject(value)) return value
  const created: JsonObject = {}
  parent[key] = created
  return created
}

/**
 * `Schema.Int` states JavaScript's safe-integer range (±9007199254740991) as `minimum`/`maximum`:
 * a limit of the decoder's number type, not of the contract, which reference pages then show as
 * the field's example. The contract's own bounds (`isBetween`, `isGreaterThanOrEqualTo`) stay.
 */
const isSafeIntegerBound = (key: string, value: unknown) =>
  (key === "minimum" && value === Number.MIN_SAFE_INTEGER) || (key === "maximum" && value === Number.MAX_SAFE_INTEGER)

/**
 * Schemas stay open for integrators (SPEC §2). `_tag` is a field of the typed client's bodies that
 * other clients may ignore, so it is never required. No object is closed with
 * `additionalProperties: false`: a response may gain fields without breaking a generated client,
 * and the server ignores unknown fields of a request body (the decoder drops them), so the
 * document does not forbid them either. A one-member `anyOf` is its member, and a use site's
 * annotations on a check are the schema's (`withCheckAnnotations`).
 */
const ANNOTATION_KEYS = ["title", "description", "examples"]

/**
 * A check annotated where a field uses it (`Centavos.check(…).annotate(…)`, a tax id described for
 * one field) comes out as an `allOf` member that carries the field's own description next to the
 * schema's generic one, where readers and client generators ignore it. The member's annotations
 * replace the generic ones, and its constraints join the schema unless the schema already states
 * the same keyword (both must hold, so they stay apart in `allOf`).
 */
const withCheckAnnotations = (schema: JsonObject): JsonObject => {
  const allOf = schema["allOf"]
  if (!Array.isArray(allOf)) return schema
  const { allOf: _, ...out } = schema
  const kept: Array<unknown> = []
  for (const member of allOf) {
    if (!isObject(member) || "$ref" in member) {
      kept.push(member)
      continue
    }
    const constraints: JsonObject = {}
    for (const [key, value] of Object.entries(member)) {
      if (ANNOTATION_KEYS.includes(key)) out[key] = value
      else constraints[key] = value
    }
    const keys = Object.keys(constraints)
    if (keys.length === 0) continue
    if (keys.every((key) => !(key in out))) Object.assign(out, constraints)
    else kept.push(constraints)
  }
  return kept.length === 0 ? out : { ...out, allOf: kept }
}

const openSchemas = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(openSchemas)
  if (!isObject(node)) return node
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "additionalProperties" && value === false) continue
    if (isSafeIntegerBound(key, value)) continue
    out[key] = openSchemas(value)
  }
  if (Array.isArray(out["required"]) && isObject(out["properties"]) && "_tag" in out["properties"]) {
    out["required"] = out["required"].filter((name) => name !== "_tag")
  }
  const anyOf = out["anyOf"]
  if (Array.isArray(anyOf) && anyOf.length === 1 && isObject(anyOf[0])) {
    const { anyOf: _, ...rest } = out
    return withCheckAnnotations({ ...anyOf[0], ...rest })
  }
  return withCheckAnnotations(out)
}

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"])

const operationsOf = (spec: JsonObject): Array<JsonObject> =>
  Object.values(isObject(spec["paths"]) ? spec["paths"] : {}).flatMap((item) =>
    isObject(item)
      ? Object.entries(item).filter(([method]) => METHODS.has(method)).map(([, op]) => op).filter(isObject)
      : []
  )

/**
 * A query value is text on the wire, so the framework documents its schema's encoded side: a bare
 * string. A parameter whose string declares the JSON value it holds (`contentSchema`, e.g. `limit`
 * in domain/Pagination.ts) is documented as that value, as OpenAPI means a parameter's schema.
 */
const typedParameters = (spec: JsonObject): void => {
  for (const op of operationsOf(spec)) {
    for (const parameter of Array.isArray(op["parameters"]) ? op["parameters"] : []) {
      if (!isObject(parameter) || !isObject(parameter["schema"])) continue
      const { contentMediaType, contentSchema, type: _, ...rest } = parameter["schema"]
      if (contentMediaType === "application/json" && isObject(contentSchema)) {
        parameter["schema"] = { ...rest, ...contentSchema }
      }
    }
  }
}

/**
 * One middleware may accept several kinds of token under one framework scheme (`KeyOrSessionAuth`
 * in domain/Authentication.ts tells keys and sessions apart by prefix). The document lists them
 * as the alternatives they are, each with its own named scheme.
 */
const SCHEME_ALTERNATIVES: Readonly<Record<string, ReadonlyArray<string>>> = { bearer: ["apiKey", "session"] }

/** What an operation requires beyond its token, by operation id (keys/Policy.ts reads it from the contract). */
export interface OperationPolicy {
  readonly endpoint: string
  readonly scope: string | null
  readonly roles: ReadonlyArray<string> | null
}

/**
 * A requirement's list names what the scheme must carry (OpenAPI 3.1 allows it for any scheme): a
 * key's scope, or the roles a session's user needs in the path's tenant.
 */
const requirementOf = (scheme: string, policy: OperationPolicy | undefined): ReadonlyArray<string> => {
  if (scheme === "apiKey" && policy?.scope) return [policy.scope]
  if (scheme === "session" && policy?.roles) return policy.roles
  return []
}

const namedSchemes = (spec: JsonObject, policies: ReadonlyArray<OperationPolicy>): void => {
  const schemes = objectAt(objectAt(spec, "components"), "securitySchemes")
  const policyOf = new Map(policies.map((policy) => [policy.endpoint, policy]))
  for (const op of operationsOf(spec)) {
    const security = op["security"]
    if (!Array.isArray(security)) continue
    const policy = typeof op["operationId"] === "string" ? policyOf.get(op["operationId"]) : undefined
    op["security"] = security.flatMap((requirement: unknown) => {
      if (!isObject(requirement)) return [requirement]
      // One requirement per alternative; other schemes of the requirement (stacked: all must pass) stay in each.
      const combined = Object.keys(requirement).find((name) => name in SCHEME_ALTERNATIVES)
      const stacked = Object.keys(requirement).filter((name) => name !== combined)
      const alternatives = combined === undefined ? [[]] : (SCHEME_ALTERNATIVES[combined] ?? []).map((alt) => [alt])
      return alternatives.map((alternative) =>
        Object.fromEntries([...stacked, ...alternative].map((name) => [name, requirementOf(name, policy)]))
      )
    })
  }
  // The framework writes `scheme: "Bearer"`; scheme names are case-insensitive (RFC 9110 §11.1), but
  // tools compare OpenAPI's lower-case spelling, and Scalar renders any other as `Authorization: Basic`.
  for (const scheme of Object.values(schemes)) {
    if (isObject(scheme) && scheme["type"] === "http" && typeof scheme["scheme"] === "string") {
      scheme["scheme"] = scheme["scheme"].toLowerCase()
    }
  }
  for (const [combined, alternatives] of Object.entries(SCHEME_ALTERNATIVES)) {
    if (!(combined in schemes)) continue
    // The alternatives must exist: a scheme is only dropped once every operation names its parts.
    const missing = alternatives.filter((name) => !(name in schemes))
    if (missing.length > 0) throw new Error(`OpenAPI: security scheme ${combined} needs ${missing.join(", ")}`)
    delete schemes[combined]
  }
}

const bearerChallenge = "The bearer challenge (RFC 6750 §3): `Bearer realm=\"etd\"` when no usable credentials came, " +
  "with `error=\"invalid_token\"` when the token does not authenticate, or `error=\"insufficient_scope\"` and the " +
  "`scope` a key lacks."

/**
 * Response headers the service sets outside the contract's endpoints (in middleware), documented
 * once under `components.headers`. A reference takes no `required` of its own, so a header that is
 * always sent on some responses and sometimes on others has a component for each.
 */
const HEADERS = {
  RequestId: {
    description:
      "The id of this request: the trace id of its span, followed by `-` and the span id when the request continued the caller's `traceparent`. Quote it when you contact support.",
    required: true,
    schema: { type: "string" }
  },
  RateLimitLimit: {
    description: "The capacity of the rate-limit bucket that binds this request (the key's, its tenant's, the " +
      "session's, …). Sent once the request's buckets were checked, so always on a 429.",
    required: false,
    schema: { type: "integer", minimum: 0 }
  },
  RateLimitRemaining: {
    description: "Requests left in that bucket now.",
    required: false,
    schema: { type: "integer", minimum: 0 }
  },
  RateLimitReset: {
    description: "Seconds until that bucket is full again.",
    required: false,
    schema: { type: "integer", minimum: 0 }
  },
  RetryAfter: {
    description: "Seconds to wait before retrying (also the body's `retry_after`).",
    required: true,
    schema: { type: "integer", minimum: 1 }
  },
  RetryAfterUnavailable: {
    description: "With `service_unavailable`: seconds to wait before retrying (also the body's `retry_after`).",
    required: false,
    schema: { type: "integer", minimum: 1 }
  },
  WwwAuthenticate: {
    description: bearerChallenge,
    required: true,
    schema: { type: "string" }
  },
  WwwAuthenticateScope: {
    description: `With \`insufficient_scope\`. ${bearerChallenge}`,
    required: false,
    schema: { type: "string" }
  },
  IdempotentReplayed: {
    description: "`true` when this answer is the stored one of an earlier request with the same `Idempotency-Key` " +
      "(nothing was done again); absent otherwise.",
    required: false,
    schema: { type: "string", enum: ["true"] }
  }
} as const

type HeaderName = keyof typeof HEADERS

/** Whether a response may carry the named error schema. */
const mayAnswer = (response: JsonObject, schema: string): boolean =>
  JSON.stringify(response["content"] ?? {}).includes(`"#/components/schemas/${schema}"`)

/**
 * The headers every response or some responses carry (SPEC §2, §11): `x-request-id` always; the
 * `ratelimit-*` headers on an operation whose requests are counted (it declares a 429), and
 * `retry-after` on its 429; `retry-after` with a 503 `service_unavailable`; the bearer challenge on
 * an authenticated operation's 401 (and its 403 `insufficient_scope`); `idempotent-replayed` on an
 * operation that takes an `Idempotency-Key`.
 */
const documentedHeaders = (spec: JsonObject): void => {
  const used = new Set<HeaderName>()
  const add = (response: JsonObject, header: string, name: HeaderName) => {
    used.add(name)
    objectAt(response, "headers")[header] = { $ref: `#/components/headers/${name}` }
  }
  for (const op of operationsOf(spec)) {
    const responses = isObject(op["responses"]) ? op["responses"] : {}
    const limited = "429" in responses
    const authenticated = Array.isArray(op["security"]) &&
      op["security"].some((r) => isObject(r) && Object.keys(r).length > 0)
    const idempotent = Array.isArray(op["parameters"]) &&
      op["parameters"].some((p) => isObject(p) && p["in"] === "header" && p["name"] === "idempotency-key")
    for (const [status, response] of Object.entries(responses)) {
      if (!isObject(response)) continue
      add(response, "x-request-id", "RequestId")
      if (limited) {
        add(response, "ratelimit-limit", "RateLimitLimit")
        add(response, "ratelimit-remaining", "RateLimitRemaining")
        add(response, "ratelimit-reset", "RateLimitReset")
      }
      if (status === "429") add(response, "retry-after", "RetryAfter")
      if (status === "503" && mayAnswer(response, "ServiceUnavailable")) {
        add(response, "retry-after", "RetryAfterUnavailable")
      }
      if (authenticated && status === "401") add(response, "www-authenticate", "WwwAuthenticate")
      if (authenticated && status === "403" && mayAnswer(response, "InsufficientScope")) {
        add(response, "www-authenticate", "WwwAuthenticateScope")
      }
      if (idempotent) add(response, "idempotent-replayed", "IdempotentReplayed")
    }
  }
  const headers = objectAt(objectAt(spec, "components"), "headers")
  for (const name of Object.keys(HEADERS) as Array<HeaderName>) {
    if (used.has(name)) headers[name] = HEADERS[name]
  }
}

/**
 * Each component of a class the contract describes (ClassDescriptions.ts) gets its description; a
 * class whose plain name another schema holds keeps its `Encoded` name (withContractNames).
 */
const describedComponents = (spec: JsonObject, descriptions: ReadonlyMap<string, string>): void => {
  const schemas = objectAt(objectAt(spec, "components"), "schemas")
  for (const [name, schema] of Object.entries(schemas)) {
    const description = descriptions.get(name) ?? descriptions.get(name.replace(ENCODED, ""))
    if (isObject(schema) && schema["description"] === undefined && description !== undefined) {
      schema["description"] = description
    }
  }
}

/**
 * The document integrators generate clients from (`OpenApi.Transform` of the root API): the
 * contract's names, open schemas, typed query values, one named security scheme per kind of token
 * and the headers the middleware sets. `redocly lint` is clean on it (test/schemas/OpenApiLint.test.ts).
 */
export const forIntegrators = (
  spec: Record<string, unknown>,
  policies: ReadonlyArray<OperationPolicy>,
  descriptions: ReadonlyMap<string, string>
): Record<string, unknown> => {
  const out = openSchemas(withContractNames(spec)) as JsonObject
  describedComponents(out, descriptions)
  typedParameters(out)
  namedSchemes(out, policies)
  documentedHeaders(out)
  return out
}
