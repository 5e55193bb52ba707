/**
 * Request validation reports every issue. The framework decodes requests with Schema's default
 * `errors: "first"`, so a body with two bad fields would name only one; a client fixing a request
 * should learn all of them at once (SPEC §2, `issues`).
 */
import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Option, type Schema, SchemaAST } from "effect"

const allIssues = (schema: Schema.Schema.Any) =>
  schema.annotations({
    parseOptions: { errors: "all" },
    // Re-annotating drops an `identifier`; keep it so the OpenAPI document still names the schema.
    ...Option.match(SchemaAST.getIdentifierAnnotation(schema.ast), {
      onNone: () => ({}),
      onSome: (identifier) => ({ identifier })
    })
  })

const withAllIssues = (endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps) => {
  let out = endpoint
  if (Option.isSome(endpoint.pathSchema)) out = out.setPath(allIssues(endpoint.pathSchema.value))
  if (Option.isSome(endpoint.urlParamsSchema)) out = out.setUrlParams(allIssues(endpoint.urlParamsSchema.value))
  if (Option.isSome(endpoint.headersSchema)) out = out.setHeaders(allIssues(endpoint.headersSchema.value))
  if (Option.isSome(endpoint.payloadSchema)) out = out.setPayload(allIssues(endpoint.payloadSchema.value))
  return out
}

/**
 * The same API with every endpoint's path, query, header and body schema reporting all issues.
 * Applied once to the root contract, so no endpoint can forget it.
 */
export const reportingAllIssues = <A extends HttpApi.HttpApi.Any>(api: A): A => {
  // Groups and endpoints are reachable only through the `AnyWithProps` view of the API.
  const source = api as unknown as HttpApi.HttpApi.AnyWithProps
  let result = source
  for (const group of Object.values(source.groups)) {
    // `add` replaces an endpoint of the same name, and a group of the same identifier, in place.
    result = result.add(
      Object.values(group.endpoints).reduce<HttpApiGroup.HttpApiGroup.AnyWithProps>(
        (updated, endpoint) => updated.add(withAllIssues(endpoint)),
        group
      )
    )
  }
  return result as unknown as A
}
