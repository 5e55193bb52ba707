/**
 * The descriptions the contract's classes declare (`Schema.Class(…)(fields, { description })`,
 * `Schema.TaggedError(…)(…, fields, { httpApiStatus, description })`), by identifier. The OpenAPI
 * generator names a class's component after its encoded side (`DocumentEncoded`) and writes none of
 * the class's own annotations there, so the document would describe no class: the transform
 * (openapi.ts) puts them back from here.
 */
import { type Schema, type SchemaAST } from "effect"
import { HttpApi, type HttpApiGroup } from "effect/http-api"

const childrenOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> => {
  const encoded = (ast.encoding ?? []).map((link) => link.to)
  switch (ast._tag) {
    case "Declaration":
      return [...ast.typeParameters, ...encoded]
    case "Objects":
      return [
        ...ast.propertySignatures.map((property) => property.type),
        ...ast.indexSignatures.flatMap((signature) => [signature.parameter, signature.type]),
        ...encoded
      ]
    case "Arrays":
      return [...ast.elements, ...ast.rest, ...encoded]
    case "Union":
      return [...ast.types, ...encoded]
    case "Suspend":
      return [ast.thunk(), ...encoded]
    default:
      return encoded
  }
}

export const classDescriptions = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyMap<string, string> => {
  const descriptions = new Map<string, string>()
  const seen = new Set<SchemaAST.AST>()
  const visit = (ast: SchemaAST.AST): void => {
    if (seen.has(ast)) return
    seen.add(ast)
    const { description, identifier } = ast.annotations ?? {}
    if (ast._tag === "Declaration" && typeof identifier === "string" && typeof description === "string") {
      descriptions.set(identifier, description)
    }
    childrenOf(ast).forEach(visit)
  }
  const visitAll = (schemas: Iterable<Schema.Top | undefined>) => {
    for (const schema of schemas) if (schema !== undefined) visit(schema.ast)
  }
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors, successes }) => {
      visitAll([endpoint.params, endpoint.query, endpoint.headers])
      for (const payload of endpoint.payload.values()) if ("schemas" in payload) visitAll(payload.schemas)
      for (const schemas of [...successes.values(), ...errors.values()]) visitAll(schemas)
    }
  })
  return descriptions
}
