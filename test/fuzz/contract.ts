/**
 * What the fuzz knows about the service, read from the contract itself: every endpoint of `Api`
 * with its method, path, authentication and schemas, and, for each schema, a pool of valid wire
 * values derived from it. A new endpoint or a changed schema is fuzzed without touching this file.
 */
import { Arbitrary, Effect, Exit, Record, Schema, SchemaAST } from "effect"
import { HttpApi } from "effect/http-api"
import { Api } from "../../src/Api.js"
import { encodeId, idPrefixes } from "../../src/domain/Ids.js"
import { type Authentication, endpointPolicies } from "../../src/keys/Policy.js"

export interface ContractPayload {
  readonly contentType: string
  readonly schema: Schema.Top
}

export interface ContractEndpoint {
  /** `group.endpoint`, as the policy table names it. */
  readonly name: string
  readonly method: string
  /** The template, `/v1/tenants/:tenantId/documents`. */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly authentication: Authentication
  readonly params: Schema.Top | undefined
  readonly query: Schema.Top | undefined
  readonly headers: Schema.Top | undefined
  readonly payloads: ReadonlyArray<ContractPayload>
}

export const contractEndpoints = (): ReadonlyArray<ContractEndpoint> => {
  const policies = new Map(endpointPolicies(Api).map((policy) => [policy.endpoint, policy]))
  const endpoints: Array<ContractEndpoint> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      const name = `${group.identifier}.${endpoint.identifier}`
      const policy = policies.get(name)
      if (policy === undefined) throw new Error(`no policy for ${name}`)
      endpoints.push({
        name,
        method: endpoint.method,
        path: endpoint.path,
        pathParams: [...endpoint.path.matchAll(/:(\w+)/g)].map((m) => m[1]!),
        authentication: policy.authentication,
        params: endpoint.params,
        query: endpoint.query,
        headers: endpoint.headers,
        payloads: [...endpoint.payload].map(([contentType, payload]) => ({ contentType, schema: payload.schemas[0] }))
      })
    }
  })
  return endpoints
}

/** The names of an object schema's properties (a multipart form's fields, a query's parameters). */
export const propertyNames = (schema: Schema.Top | undefined): ReadonlyArray<string> => {
  if (schema === undefined) return []
  const ast = SchemaAST.toEncoded(schema.ast)
  return SchemaAST.isObjects(ast) ? ast.propertySignatures.map((p) => String(p.name)) : []
}

/** Whether a wire value decodes with the schema's JSON codec. */
export const decodes = (schema: Schema.Top) => {
  const decode = Schema.decodeUnknownExit(Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>))
  return (wire: unknown) => Exit.isSuccess(decode(wire))
}

/**
 * Well-formed values of the shapes the contract uses, for fields whose schema checks them with a
 * predicate that generation cannot aim at (check digits, calendar dates): only those the field's
 * own schema accepts are used.
 */
const stockValues = (): ReadonlyArray<unknown> => [
  "2026-01-15T10:20:30Z",
  new Date(Date.now() - 3_600_000).toISOString(),
  "2026-02-28",
  "11222333000181",
  "52998224725",
  "ana@example.com",
  "https://example.com/webhooks/nfse",
  ...Record.keys(idPrefixes).map((kind) => encodeId(kind, Date.now(), new Uint8Array(10)))
]

const examplesOf = (schema: Schema.Top): ReadonlyArray<unknown> => {
  const encoded = SchemaAST.toEncoded(schema.ast).annotations?.["examples"]
  return Array.isArray(encoded) ? encoded : []
}

const derived = (schema: Schema.Top, seed: number, count: number): ReadonlyArray<unknown> | undefined => {
  try {
    const encode = Schema.encodeUnknownSync(Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>))
    const sampled = Effect.runSyncExit(Arbitrary.sampleEffect(Arbitrary.schema(schema), { count, seed }))
    return Exit.isSuccess(sampled) ? sampled.value.map((value) => encode(value)) : undefined
  } catch {
    // Derivation throws for schemas it cannot compile; the caller builds the value from its parts.
    return undefined
  }
}

/**
 * Up to `count` valid wire (JSON) values of `schema`: derived from the Schema with Effect's
 * `Arbitrary` and encoded with its JSON codec. Where a check defeats generation, an object is built
 * from its properties' pools, and a leaf falls back to the schema's `examples` and the stock
 * shapes; every value built that way is decoded again, so the pool holds only valid values.
 */
export const wireSamples = (schema: Schema.Top, seed: number, count: number): ReadonlyArray<unknown> => {
  const direct = derived(schema, seed, count)
  if (direct !== undefined) return direct
  const valid = decodes(schema)
  const ast = schema.ast
  if (SchemaAST.isObjects(ast) && ast.indexSignatures.length === 0) {
    const properties = ast.propertySignatures.map((property, i) => ({
      name: String(property.name),
      optional: SchemaAST.isOptional(property.type),
      pool: wireSamples(Schema.make(property.type), seed * 31 + i + 1, count)
    }))
    if (properties.some((p) => !p.optional && p.pool.length === 0)) return []
    return Array.from({ length: count }, (_, i) =>
      Object.fromEntries(
        properties.flatMap((p, j) =>
          p.pool.length === 0 || (p.optional && (i + j) % 3 === 0)
            ? []
            : [[p.name, p.pool[(i * 7 + j) % p.pool.length]]]
        )
      )).filter(valid)
  }
  return [...examplesOf(schema), ...stockValues()].filter(valid)
}
