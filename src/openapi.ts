/**
 * The OpenAPI document, derived from the contract. The framework declares its own decode error on
 * every endpoint; our middleware replaces it with `invalid_request`, so the document must not
 * advertise it.
 */
const FRAMEWORK_SCHEMAS = new Set(["HttpApiDecodeError", "Issue", "PropertyKey"])

const isFrameworkRef = (value: unknown) =>
  typeof value === "object" && value !== null && "$ref" in value &&
  typeof value.$ref === "string" && FRAMEWORK_SCHEMAS.has(value.$ref.replace("#/components/schemas/", ""))

const prune = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.filter((item) => !isFrameworkRef(item)).map(prune)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    const pruned = prune(value)
    // An anyOf left with one member is just that member.
    if (key === "schema" && typeof pruned === "object" && pruned !== null && "anyOf" in pruned &&
      Array.isArray(pruned.anyOf) && pruned.anyOf.length === 1) {
      out[key] = pruned.anyOf[0]
    } else {
      out[key] = pruned
    }
  }
  return out
}

/** Removes the framework's decode error from responses and components. */
export const withoutFrameworkErrors = (spec: Record<string, unknown>): Record<string, unknown> => {
  const pruned = prune(spec) as Record<string, unknown> & { components?: { schemas?: Record<string, unknown> } }
  for (const name of FRAMEWORK_SCHEMAS) delete pruned.components?.schemas?.[name]
  return pruned
}

