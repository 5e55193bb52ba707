/**
 * What a reader of the reference (the /docs page, or a client generated from schemas/openapi.json)
 * is told: every component schema says what it is, no number shows JavaScript's safe-integer limit
 * as if it were the contract's, and the bearer schemes are spelled as tools compare them.
 */
import { describe, expect, it } from "@effect/vitest"
import { renderOpenApi } from "../../scripts/generate-openapi.js"
import { isValidCnpj } from "../../src/domain/TaxId.js"

interface Property {
  readonly examples?: ReadonlyArray<unknown>
}

interface Document {
  readonly components: {
    readonly schemas: Record<
      string,
      { readonly description?: string; readonly properties?: Record<string, Property> }
    >
    readonly securitySchemes: Record<string, { readonly type: string; readonly scheme?: string }>
  }
}

const text = renderOpenApi()
const document = JSON.parse(text) as Document

describe("the OpenAPI document as a reference", () => {
  it("describes every component schema, classes and errors included", () => {
    const schemas = Object.entries(document.components.schemas)
    // Classes and errors are most of the contract: their descriptions come through ClassDescriptions.ts.
    expect(schemas.length).toBeGreaterThan(100)
    for (const name of ["Document", "Tenant", "ApiKey", "NotFound", "InsufficientScope", "WebhookEndpoint"]) {
      expect(document.components.schemas[name]?.description).toBeTruthy()
    }
    expect(schemas.filter(([, schema]) => !schema.description?.trim()).map(([name]) => name)).toEqual([])
  })

  it("never shows the safe-integer range (±9007199254740991) as a bound", () => {
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER))
    // The contract's own bounds stay: `grace_days` is 0 to 30.
    expect(text).toMatch(/"minimum": 0,\s*"maximum": 30/)
  })

  it("gives the main resources' fields examples as the API really sends them", () => {
    const example = (schema: string, property: string) =>
      document.components.schemas[schema]?.properties?.[property]?.examples?.[0]
    expect(example("Document", "id")).toMatch(/^doc_[0-9a-z]{26}$/)
    expect(example("Tenant", "id")).toMatch(/^ten_[0-9a-z]{26}$/)
    expect(isValidCnpj(String(example("Tenant", "tax_id")))).toBe(true)
    const createdAt = String(example("Document", "created_at"))
    expect(new Date(createdAt).toISOString()).toBe(createdAt)
    expect(example("Document", "number")).toBeGreaterThan(0)
  })

  it("names its bearer schemes `bearer`, as tools compare them (Scalar otherwise renders Basic)", () => {
    const schemes = Object.values(document.components.securitySchemes).filter((scheme) => scheme.type === "http")
    expect(schemes.length).toBeGreaterThan(0)
    for (const scheme of schemes) expect(scheme.scheme).toBe("bearer")
  })
})
