/**
 * Writes one JSON Schema per webhook event type to schemas/events/<type>.json, from the Effect
 * Schemas the service itself uses (src/webhooks/Events.ts). `npm run events-schemas`; a test fails
 * when the checked-in files are stale.
 */
import { JSONSchema } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { eventEnvelope, eventTypes } from "../src/webhooks/Events.js"

export const renderEventSchemas = (): ReadonlyArray<{ readonly file: string; readonly content: string }> =>
  eventTypes.map((type) => ({
    file: `${type}.json`,
    content: JSON.stringify(
      { $id: `https://etd.example/schemas/events/${type}.json`, ...JSONSchema.make(eventEnvelope(type)) },
      null,
      2
    ) + "\n"
  }))

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = new URL("../schemas/events/", import.meta.url)
  mkdirSync(dir, { recursive: true })
  for (const { content, file } of renderEventSchemas()) writeFileSync(new URL(file, dir), content)
  console.log(`wrote ${eventTypes.length} event schemas to schemas/events/`)
}
