/**
 * Field descriptions where readers find them. The OpenAPI document (and the typed client's reference
 * built from it) shows a schema's *encoded* side, the JSON a client sends, but `annotate` writes on
 * the *decoded* side: on a transformation (trimmed or normalized text, `Series`) the two are
 * different nodes, and the description never reaches the document. On a schema with checks,
 * `annotate` writes on its last check, and the document drops the annotations of a check that has
 * no JSON Schema of its own.
 */
import * as Schema from "effect/Schema"

export type FieldDocumentation = { readonly description: string }

/**
 * Describes a field on both sides: the encoded one, which the OpenAPI document shows, and the
 * decoded one, which code reads back (`Schema.resolveAnnotations`).
 */
export const described = (annotations: FieldDocumentation) => <S extends Schema.Top>(self: S): S["Rebuild"] =>
  Schema.annotateEncoded<S>(annotations)(Schema.annotate<S>(annotations)(self) as S) as S["Rebuild"]

/**
 * For a filter JSON Schema cannot express (a real calendar date, an upper bound on a decimal
 * string): the document omits the constraint, as an approximation, but keeps the annotations a
 * caller puts on the filter, which `annotate` does when the filter is a schema's last check.
 */
export const omittedFromJsonSchema = { toJsonSchema: () => [{}, true] as const }
