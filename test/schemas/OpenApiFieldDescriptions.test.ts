/**
 * Every field an integrator sends to issue, substitute or register is explained in the OpenAPI
 * document, and each one that ends up in the national DPS/NFS-e names the element it becomes. Helpers
 * that transform or check a field (trimming, normalizing, extra filters) once hid their callers'
 * descriptions from the document, so this walks the generated document itself.
 */
import { describe, expect, it } from "@effect/vitest"
import { renderOpenApi } from "../../scripts/generate-openapi.js"

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const document = JSON.parse(renderOpenApi()) as { components: { schemas: Record<string, Json> } }
const components = document.components.schemas

const refName = (node: Json): string | undefined =>
  typeof node["$ref"] === "string" ? node["$ref"].replace("#/components/schemas/", "") : undefined

/** The property's own description, else (a bare reference, or one or null) that of its component. */
const descriptionOf = (property: Json): string | undefined => {
  if (typeof property["description"] === "string") return property["description"]
  const members = Array.isArray(property["anyOf"]) ? property["anyOf"].filter(isObject) : [property]
  const named = members.filter((member) => member["type"] !== "null")
  if (named.length !== 1) return undefined
  const name = refName(named[0]!)
  if (name !== undefined) return descriptionOf(components[name] ?? {})
  return typeof named[0]!["description"] === "string" ? named[0]!["description"] : undefined
}

interface Field {
  readonly path: string
  readonly description: string | undefined
}

/** Every property of the roots and of everything they reference, inline objects and arrays included. */
const fieldsOf = (roots: ReadonlyArray<string>): ReadonlyArray<Field> => {
  const fields: Array<Field> = []
  const seen = new Set<string>()
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) return node.forEach((item) => walk(item, path))
    if (!isObject(node)) return
    const name = refName(node)
    if (name !== undefined) {
      if (!seen.has(name)) {
        seen.add(name)
        walk(components[name], name)
      }
      return
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && isObject(value)) {
        for (const [property, schema] of Object.entries(value)) {
          if (!isObject(schema)) continue
          fields.push({ path: `${path}.${property}`, description: descriptionOf(schema) })
          walk(schema, `${path}.${property}`)
        }
      } else {
        walk(value, path)
      }
    }
  }
  for (const root of roots) {
    expect(components[root], root).toBeDefined()
    seen.add(root)
    walk(components[root], root)
  }
  return fields
}

const ROOTS = ["NewDocument", "SubstituteDocument", "Registration", "RegistrationChanges"]

/**
 * Fields of ours that no national element holds, each for a reason its description gives, by
 * component (`NewDocument_1` is the substitution's copy of `NewDocument`) and property.
 */
const NOT_NATIONAL = new Set([
  // The kind of document and the caller's own reference: the service's, never sent.
  "NewDocument.type",
  "NewDocument.reference",
  // The DPS's national address has no state: the municipality code implies it.
  "Address.state",
  // Goods invoices (NF-e) only, said so in the description.
  "Registration.state_registration",
  "Registration.crt",
  // The new note as a whole: its own fields are checked one by one.
  "SubstituteDocument.document"
])

/** `RegistrationChanges.crt` is listed as `Registration.crt`, `NewDocument_1.type` as `NewDocument.type`. */
const listedAs = (path: string) => path.replace(/^NewDocument_1\./u, "NewDocument.").replace(/^RegistrationChanges\./u, "Registration.")

describe("the OpenAPI document's fields", () => {
  const fields = fieldsOf(ROOTS)

  it("walks the document, substitution and registration schemas down to their leaves", () => {
    const paths = fields.map((field) => field.path)
    for (
      const path of [
        "Registration.legal_name",
        "RegistrationChanges.municipal_registration",
        "RegistrationAddress.postal_code",
        "ApproximateTaxes.rates.federal",
        "IssDetails.municipal_benefit.reduction_rate",
        "DeductionDocument.fiscal_document_number",
        "ForeignAddress.city",
        "SubstituteDocument.reason"
      ]
    ) expect(paths).toContain(path)
    expect(fields.length).toBeGreaterThan(120)
  })

  it("describes every field", () => {
    expect(fields.filter((field) => !field.description?.trim()).map((field) => field.path)).toEqual([])
  })

  it("names the national element each field becomes", () => {
    const unnamed = fields.filter((field) =>
      !NOT_NATIONAL.has(listedAs(field.path)) && !/\bbecomes? (?:the [A-Za-z-]+'s )?`[^`]+`/iu.test(field.description ?? "")
    )
    expect(unnamed.map((field) => `${field.path}: ${field.description ?? "(none)"}`)).toEqual([])
  })

  it("keeps a field's own description where a helper transforms or checks it", () => {
    const property = (component: string, name: string) => {
      const properties = components[component]?.["properties"]
      return isObject(properties) && isObject(properties[name]) ? descriptionOf(properties[name]) : undefined
    }
    // boundedText (trimmed, then checked), Percentage (pattern and bound), TaxId (normalized).
    expect(property("Taker", "name")).toContain("`xNome`")
    expect(property("AmountsInput", "deduction_rate")).toContain("`vDedRed/pDR`")
    expect(property("Taker", "tax_id")).toContain("`CPF` or `CNPJ`")
    expect(property("RegistrationChanges", "municipal_registration")).toContain("`prest/IM`")
    expect(property("RegistrationAddress", "postal_code")).toContain("`CEP`")
  })
})
