import { Schema } from "effect"

/** A schema's JSON Schema: the root schema, with its definitions under `$defs` when it has any. */
export const jsonSchemaOf = (schema: Schema.Top): Record<string, unknown> => {
  const document = Schema.toJsonSchemaDocument(schema)
  return Object.keys(document.definitions).length === 0
    ? { ...document.schema }
    : { ...document.schema, $defs: document.definitions }
}
