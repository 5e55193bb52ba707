/**
 * The OpenAPI document is derived from the contract. Effect 4 names a component after the encoded
 * side of its schema (`DocumentEncoded`); integrators' generated clients use the component names,
 * so the document keeps the contract's own names (`Document`).
 */
const ENCODED = /Encoded$/

const renameRefs = (node: unknown, renamed: ReadonlyMap<string, string>): unknown => {
  if (Array.isArray(node)) return node.map((item) => renameRefs(item, renamed))
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      const name = value.replace("#/components/schemas/", "")
      out[key] = renamed.has(name) ? `#/components/schemas/${renamed.get(name)}` : value
    } else {
      out[key] = renameRefs(value, renamed)
    }
  }
  return out
}

/** Drops the `Encoded` suffix from component names, wherever the plain name is free. */
export const withContractNames = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = spec["components"] as { schemas?: Record<string, unknown> } | undefined
  const schemas = components?.schemas ?? {}
  const renamed = new Map<string, string>()
  for (const name of Object.keys(schemas)) {
    const plain = name.replace(ENCODED, "")
    if (plain !== name && !(plain in schemas)) renamed.set(name, plain)
  }
  const out = renameRefs(spec, renamed) as Record<string, unknown> & { components?: { schemas?: Record<string, unknown> } }
  if (out.components?.schemas) {
    out.components.schemas = Object.fromEntries(
      Object.entries(out.components.schemas).map(([name, schema]) => [renamed.get(name) ?? name, schema])
    )
  }
  return out
}
