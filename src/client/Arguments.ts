/**
 * The Promise client's check of a call's arguments before anything is sent. The endpoint's own
 * schemas decide (the same ones the request is encoded with); what this adds is the wording: a
 * JavaScript caller who forgot `params.docId` reads that, not a schema's internals (its regular
 * expressions, or the value it got, which may be a secret).
 */
import { Exit, Schema, type SchemaAST, SchemaIssue } from "effect"
import { HttpApi, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"

export interface ArgumentIssue {
  /** Where in the call's object: `["params", "docId"]`, `["payload", "taker", "tax_id"]`. */
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

/**
 * A call whose arguments the contract refuses, caught before anything is sent: a required part or
 * field missing (`params.docId is required`), or a value of the wrong form. `code` is
 * `invalid_argument`; `issues` lists every problem; `method` names the call (`documents.get`).
 */
export class InvalidArgument extends Error {
  readonly _tag = "InvalidArgument"
  readonly code = "invalid_argument"
  constructor(readonly method: string, readonly issues: ReadonlyArray<ArgumentIssue>) {
    super(
      `${method}: ${
        issues.map((issue) =>
          issue.path.length === 0
            ? issue.message
            : `${issue.path.join(".")}${/^(is|must) /.test(issue.message) ? " " : ": "}${issue.message}`
        ).join("; ")
      }`
    )
    this.name = "InvalidArgument"
  }
}

// The value a caller passed is never quoted: it may be a password or a certificate.
const leafMessage = (issue: SchemaIssue.Leaf): string => {
  switch (issue._tag) {
    case "MissingKey":
      return "is required"
    case "UnexpectedKey":
      return "is not part of this call"
    case "InvalidType":
      return `must be ${SchemaIssue.defaultLeafHook(new SchemaIssue.InvalidType(issue.ast)).replace(/^Expected /, "")}`
    case "InvalidValue":
    case "Forbidden":
      return typeof issue.annotations?.message === "string" ? issue.annotations.message : "is not valid"
    case "OneOf":
      return "is not valid"
  }
}

const format = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: leafMessage,
  // A filter's own message is written for people ("Idempotency-Key must be at most 255 characters");
  // without one, the default would spell out the check itself (a regular expression).
  checkHook: (issue) => SchemaIssue.defaultCheckHook(issue) ?? "is not valid"
})

const PARSE_OPTIONS: SchemaAST.ParseOptions = { errors: "all" }

type Part = "params" | "query" | "headers" | "payload"

/** The issues of one part of a call, under that part's name; none when it encodes. */
const issuesOf = (part: Part, schemas: ReadonlyArray<Schema.Top>, value: unknown): Array<ArgumentIssue> => {
  let first: Array<ArgumentIssue> | undefined
  for (const schema of schemas) {
    const exit = Schema.encodeUnknownExit(schema as Schema.Codec<unknown, unknown>)(value, PARSE_OPTIONS)
    if (Exit.isSuccess(exit)) return []
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error
    const issues = Schema.isSchemaError(error)
      ? format(error.issue).issues.map((issue) => ({
        path: [
          part,
          ...(issue.path ?? []).map((segment) => {
            const key = typeof segment === "object" ? segment.key : segment
            return typeof key === "number" ? key : String(key)
          })
        ],
        message: issue.message
      }))
      : [{ path: [part], message: "is not valid" }]
    first ??= issues
  }
  return first ?? []
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** Checks one endpoint's call: the object with its `params`, `query`, `headers` and `payload`. */
export type ArgumentCheck = (request: unknown) => ReadonlyArray<ArgumentIssue>

const checkFor = (endpoint: HttpApiEndpoint.Top): ArgumentCheck => {
  const payloads = [...endpoint.payload.values()].flatMap((entry) => "schemas" in entry ? entry.schemas : [])
  const parts: ReadonlyArray<readonly [Part, ReadonlyArray<Schema.Top>]> = [
    ["params", endpoint.params === undefined ? [] : [endpoint.params]],
    ["query", endpoint.query === undefined ? [] : [endpoint.query]],
    ["headers", endpoint.headers === undefined ? [] : [endpoint.headers]],
    ["payload", payloads]
  ]
  const declared = parts.filter(([, schemas]) => schemas.length > 0)
  return (request) => {
    if (declared.length === 0) return []
    if (request !== undefined && !isRecord(request)) {
      return [{ path: [], message: `takes one object with ${declared.map(([part]) => part).join(", ")}` }]
    }
    return declared.flatMap(([part, schemas]) => {
      const value = request?.[part]
      // A form or a stream is the caller's own body: the server checks it.
      if (part === "payload" && (value instanceof FormData || value instanceof ReadableStream)) return []
      const issues = issuesOf(part, schemas, value)
      if (value !== undefined || issues.length === 0) return issues
      // A part left out that is needed: checked as empty, so that each required field in it is named.
      const fields = issuesOf(part, schemas, {})
      return fields.length > 0 ? fields : [{ path: [part], message: "is required" }]
    })
  }
}

/** One check per method, keyed `group.endpoint` as the client names them. */
export const argumentChecks = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyMap<string, ArgumentCheck> => {
  const checks = new Map<string, ArgumentCheck>()
  HttpApi.reflect(api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group }) => checks.set(`${group.identifier}.${endpoint.identifier}`, checkFor(endpoint))
  })
  return checks
}
