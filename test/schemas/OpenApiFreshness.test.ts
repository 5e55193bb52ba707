import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { renderOpenApi } from "../../scripts/generate-openapi.js"

describe("schemas/openapi.json", () => {
  it("matches the contract (run `npm run openapi` after changing an Api.ts)", () => {
    const checkedIn = readFileSync(new URL("../../schemas/openapi.json", import.meta.url), "utf8")
    expect(checkedIn).toBe(renderOpenApi())
  })

  it("does not advertise the framework's own decode error", () => {
    expect(renderOpenApi()).not.toContain("HttpApiDecodeError")
  })
})
