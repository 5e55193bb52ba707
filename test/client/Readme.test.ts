/**
 * client/README.md lists every method of the client with what it takes and returns, and every field
 * of a note, a substitution and the registration with the national element it becomes: both are
 * written from the contract (`npm run client:readme`), and go stale the moment the contract changes
 * without them.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import {
  readmeClientFields,
  readmeClientMethods,
  renderClientFields,
  renderClientMethods
} from "../../scripts/client-methods.js"
import { createClient } from "../../src/client/index.js"

describe("client/README.md", () => {
  it("holds the method reference as the contract writes it (npm run client:readme)", () => {
    expect(readmeClientMethods()).toBe(renderClientMethods())
  })

  it("holds the field reference as the contract writes it (npm run client:readme)", () => {
    expect(readmeClientFields()).toBe(renderClientFields())
  })

  it("tells each tax field's national element, nested fields and array items included", () => {
    const rows = new Map(
      [...(readmeClientFields() ?? "").matchAll(/^\| `([a-z_.[\]]+)` \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!])
    )
    expect(rows.get("iss.withheld_by")).toContain("`tpRetISSQN`")
    expect(rows.get("federal.pis_cofins.withheld")).toContain("`tpRetPisCofins`")
    expect(rows.get("federal.irrf_withheld")).toContain("`vRetIRRF`")
    expect(rows.get("approximate_taxes.rates.federal")).toContain("`pTotTribFed`")
    expect(rows.get("amounts.deduction_documents[].fiscal_document_number")).toContain("`nDocFisc`")
    expect(rows.get("reason")).toContain("`subst/xMotivo`")
    expect(rows.get("municipal_registration")).toContain("`prest/IM`")
    expect([...rows.values()].filter((meaning) => meaning === "")).toEqual([])
  })

  it("lists every method the client has, with its request, input and output", () => {
    const readme = readFileSync(new URL("../../client/README.md", import.meta.url), "utf8")
    const client = createClient({ baseUrl: "http://127.0.0.1:1" })
    const methods = Object.entries(client).flatMap(([group, endpoints]) =>
      Object.keys(endpoints).map((name) => `${group}.${name}`)
    )
    expect(methods.length).toBeGreaterThan(50)
    const rows = new Map(
      [...readme.matchAll(/^\| `([a-zA-Z]+\.[a-zA-Z]+)` \| (.*) \|$/gm)].map((m) => [m[1]!, m[2]!.split(" | ")])
    )
    expect(methods.filter((method) => !rows.has(method))).toEqual([])
    for (const method of methods) {
      const [summary, request, takes, returns] = rows.get(method)!
      expect(summary, method).not.toBe("")
      expect(request, method).toMatch(/^`(GET|POST|PATCH|PUT|DELETE) \/\S*`$/)
      expect(takes, method).not.toBe("")
      expect(returns, method).not.toBe("")
    }
  })
})
