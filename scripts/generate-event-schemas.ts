/**
 * Writes one JSON Schema per webhook event type to schemas/events/<type>.json, from the Effect
 * Schemas the service itself uses (src/domain/Events.ts). `npm run events-schemas`; a test fails
 * when the checked-in files are stale.
 */
import { JsonSchema, Schema } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { eventEnvelope, eventTypes } from "../src/domain/Events.js"

/** A standalone draft-07 document: receivers' validators (ajv and most others) default to it. */
const draft07 = (schema: Schema.Top) => {
  const document = JsonSchema.toDocumentDraft07(Schema.toJsonSchemaDocument(schema))
  const definitions = Object.keys(document.definitions).length > 0 ? { definitions: document.definitions } : {}
  return { $schema: JsonSchema.META_SCHEMA_URI_DRAFT_07, ...document.schema, ...definitions }
}

export const renderEventSchemas = (): ReadonlyArray<{ readonly file: string; readonly content: string }> =>
  eventTypes.map((type) => ({
    file: `${type}.json`,
    content: JSON.stringify(
      { $id: `https://etd.example/schemas/events/${type}.json`, ...draft07(eventEnvelope(type)) },
      null,
      2
    ) +
      "\n"
  }))

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = new URL("../schemas/events/", import.meta.url)
  mkdirSync(dir, { recursive: true })
  for (const { content, file } of renderEventSchemas()) writeFileSync(new URL(file, dir), content)
  console.log(`wrote ${eventTypes.length} event schemas to schemas/events/`)
}
