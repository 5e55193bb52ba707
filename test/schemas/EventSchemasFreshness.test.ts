import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { renderEventSchemas } from "../../scripts/generate-event-schemas.js"
import { eventTypes } from "../../src/domain/Events.js"

describe("schemas/events/*.json", () => {
  it("match the event schemas (run `npm run events-schemas` after changing an event payload)", () => {
    for (const { content, file } of renderEventSchemas()) {
      const checkedIn = readFileSync(new URL(`../../schemas/events/${file}`, import.meta.url), "utf8")
      expect(checkedIn, file).toBe(content)
    }
  })

  it("cover every event type of SPEC §9, and nothing else", () => {
    const files = readdirSync(new URL("../../schemas/events/", import.meta.url)).sort()
    expect(files).toEqual(eventTypes.map((type) => `${type}.json`).sort())
  })
})
