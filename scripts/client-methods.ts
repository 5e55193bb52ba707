/**
 * Writes the method reference of client/README.md (between its `client-methods` markers) from the
 * contract: every method the client has, group by group, with what it takes and what it returns;
 * and (between its `client-fields` markers) every field of a note to issue, of a substitution and of
 * the provider's registration with its meaning and the national element it becomes, from the OpenAPI
 * document's descriptions. `npm run client:readme`; test/client/Readme.test.ts fails when the
 * README's copy is stale.
 */
import { type Schema, SchemaAST } from "effect"
import { HttpApi, HttpApiSchema, OpenApi } from "effect/http-api"
import { readFileSync, writeFileSync } from "node:fs"
import { Api } from "../src/Api.js"
import { renderOpenApi } from "./generate-openapi.js"

const START = "<!-- client-methods:start (npm run client:readme) -->"
const END = "<!-- client-methods:end -->"

const code = (text: string) => `\`${text}\``

/** `{ tenantId, docId }`, optional fields marked `?`; a named schema by its name. */
const shape = (schema: Schema.Top): string => {
  const name = SchemaAST.resolveIdentifier(schema.ast)
  if (name !== undefined) return code(name)
  const ast = SchemaAST.toType(schema.ast)
  if (ast._tag !== "Objects") return code(ast._tag)
  const fields = ast.propertySignatures.map((field) => {
    const key = typeof field.name === "string" && /^[a-zA-Z_]\w*$/.test(field.name)
      ? field.name
      : JSON.stringify(String(field.name))
    return `${key}${field.type.context?.isOptional === true ? "?" : ""}`
  })
  return code(`{ ${fields.join(", ")} }`)
}

const output = (schema: Schema.Top): string => {
  if (HttpApiSchema.isWithHeaders(schema)) {
    const body = SchemaAST.toType(schema.schema.ast)._tag === "String" ? "string" : "Uint8Array"
    return `${code(`{ body: ${body}, headers }`)} ([files](#files))`
  }
  const ast = SchemaAST.toType(schema.ast)
  if (ast._tag === "Void" || ast._tag === "Undefined") return "nothing (`void`)"
  const data = ast._tag === "Objects" ? ast.propertySignatures.find((field) => field.name === "data") : undefined
  if (data !== undefined && SchemaAST.resolveIdentifier(schema.ast) === undefined) {
    const item = SchemaAST.toType(data.type)
    const element = item._tag === "Arrays" ? item.rest[0] : undefined
    const name = element === undefined ? undefined : SchemaAST.resolveIdentifier(element)
    return `a page of ${code(name ?? "object")} ([lists](#lists))`
  }
  return shape(schema)
}

interface Method {
  readonly group: string
  readonly row: string
}

const methods = (): ReadonlyArray<Method> => {
  const rows: Array<Method> = []
  HttpApi.reflect(Api, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group, successes }) => {
      const inputs: Array<string> = []
      if (endpoint.params !== undefined) inputs.push(`params: ${shape(endpoint.params)}`)
      if (endpoint.query !== undefined) inputs.push(`query: ${shape(endpoint.query)}`)
      if (endpoint.headers !== undefined) inputs.push(`headers: ${shape(endpoint.headers)}`)
      const payloads = [...endpoint.payload.values()].flatMap((entry) => "schemas" in entry ? entry.schemas : [])
      if (payloads.length > 0) inputs.push(`payload: ${payloads.map(shape).join(" or ")}`)
      const returns = [...successes.values()].flat().map(output)
      const summary = endpoint.annotations.mapUnsafe.get(OpenApi.Summary.key)
      rows.push({
        group: group.identifier,
        row: `| ${code(`${group.identifier}.${endpoint.identifier}`)} | ${
          typeof summary === "string" ? summary : ""
        } | ${code(`${endpoint.method} ${endpoint.path}`)} | ${inputs.length > 0 ? inputs.join("<br>") : "—"} | ${
          returns.join(" or ")
        } |`
      })
    }
  })
  return rows
}

/** The section between the markers, as the README must hold it. */
export const renderClientMethods = (): string => {
  const sections: Array<string> = []
  const all = methods()
  for (const group of [...new Set(all.map((method) => method.group))]) {
    sections.push(
      `#### ${group}\n\n| Method | What it does | Request | Takes | Returns |\n|---|---|---|---|---|\n${
        all.filter((method) => method.group === group).map((method) => method.row).join("\n")
      }`
    )
  }
  return `${START}\n\n${sections.join("\n\n")}\n\n${END}`
}

const FIELDS_START = "<!-- client-fields:start (npm run client:readme) -->"
const FIELDS_END = "<!-- client-fields:end -->"

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** The payloads whose fields the README lists, by component of the OpenAPI document. */
const FIELD_TABLES: ReadonlyArray<{ readonly component: string; readonly title: string }> = [
  { component: "NewDocument", title: "A note to issue (`payload` of `documents.issueForKey` and `documents.issue`)" },
  { component: "SubstituteDocument", title: "A substitution (`payload` of `substitution.substituteForKey`)" },
  {
    component: "RegistrationChanges",
    title: "The provider's registration (`payload.registration` of `tenants.update`)"
  }
]

/** One row per field, nested fields by their dotted path (`[]` for an array's items). */
const fieldRows = (components: Record<string, Json>, schema: Json, prefix: string): ReadonlyArray<string> => {
  const resolved = (node: Json): Json => {
    const ref = node["$ref"]
    if (typeof ref === "string") return resolved(components[ref.replace("#/components/schemas/", "")] ?? {})
    const members = Array.isArray(node["anyOf"]) ? node["anyOf"].filter(isObject) : []
    const named = members.filter((member) => member["type"] !== "null")
    if (named.length === 1) return resolved(named[0]!)
    return isObject(node["items"]) ? resolved(node["items"]) : node
  }
  const properties = resolved(schema)["properties"]
  if (!isObject(properties)) return []
  return Object.entries(properties).flatMap(([name, property]) => {
    if (!isObject(property)) return []
    const path = `${prefix}${name}`
    const target = resolved(property)
    const description = typeof property["description"] === "string"
      ? property["description"]
      : typeof target["description"] === "string"
      ? target["description"]
      : ""
    const isArray = property["type"] === "array" ||
      (Array.isArray(property["anyOf"]) && property["anyOf"].some((m) => isObject(m) && m["type"] === "array"))
    const row = `| ${code(path)} | ${description.replace(/\|/g, "\\|").replace(/\s*\n\s*/g, " ")} |`
    // The substitution's `document` is the note above: its fields are not repeated.
    if (name === "document" && prefix === "") return [row]
    return [row, ...fieldRows(components, property, `${path}${isArray ? "[]" : ""}.`)]
  })
}

/** The field reference between its markers, as the README must hold it. */
export const renderClientFields = (): string => {
  const components = (JSON.parse(renderOpenApi()) as { components: { schemas: Record<string, Json> } }).components
    .schemas
  const tables = FIELD_TABLES.map(({ component, title }) =>
    `#### ${title}\n\n| Field | Meaning |\n|---|---|\n${
      fieldRows(components, components[component] ?? {}, "").join("\n")
    }`
  )
  return `${FIELDS_START}\n\n${tables.join("\n\n")}\n\n${FIELDS_END}`
}

const README = new URL("../client/README.md", import.meta.url)

const between = (start: string, end: string): string | undefined => {
  const readme = readFileSync(README, "utf8")
  const from = readme.indexOf(start)
  const to = readme.indexOf(end)
  return from < 0 || to < from ? undefined : readme.slice(from, to + end.length)
}

/** The README's current section, or undefined when its markers are missing. */
export const readmeClientMethods = (): string | undefined => between(START, END)

/** The README's current field reference, or undefined when its markers are missing. */
export const readmeClientFields = (): string | undefined => between(FIELDS_START, FIELDS_END)

if (import.meta.url === `file://${process.argv[1]}`) {
  const methods = readmeClientMethods()
  if (methods === undefined) throw new Error(`client/README.md lacks the markers ${START} … ${END}`)
  const fields = readmeClientFields()
  if (fields === undefined) throw new Error(`client/README.md lacks the markers ${FIELDS_START} … ${FIELDS_END}`)
  const readme = readFileSync(README, "utf8")
  writeFileSync(README, readme.replace(methods, renderClientMethods()).replace(fields, renderClientFields()))
  console.log("wrote the method and field references of client/README.md")
}
