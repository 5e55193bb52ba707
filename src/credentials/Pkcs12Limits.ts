/**
 * A cheap look at a PKCS#12 bundle before node-forge opens it. forge runs the bundle's key
 * derivations (PBKDF2, the PKCS#12 KDF) synchronously with whatever iteration count the file
 * names: one count of 2^31 holds a thread for hours, and a hundred bags of 100 000 iterations each
 * add up to minutes. The counts sit in clear ASN.1 (MacData, pkcs-12PbeParams, PBKDF2-params are all
 * `SEQUENCE { salt OCTET STRING, iterations INTEGER, … }`), so their sum can be read without the
 * password, whichever way the file encodes its OCTET STRINGs (primitive, or constructed in chunks as
 * BER allows).
 *
 * What this cannot see: a bag nested inside an *encrypted* SafeContents carries a count that only
 * appears once the outer layer is decrypted. The worker's time limit (`Pkcs12Opener.ts`) bounds
 * that case; this check only turns the visible cases into a clear answer before any work is done.
 */
import { type Asn1, binaryString, Class, parseDer, Tag } from "./Pkcs12Asn1.js"

/** Far above what real exporters use for one derivation (OpenSSL 2048, Windows 2000, Java 10 000). */
export const MAX_PKCS12_ITERATIONS = 100_000
/** The whole file: a MAC and a few bags at the largest single count still fit. */
export const MAX_PKCS12_TOTAL_ITERATIONS = 300_000

const { UNIVERSAL } = Class
const { OCTET_STRING, INTEGER, SEQUENCE } = Tag
const MAX_DEPTH = 24
const MAX_NODES = 20_000

export interface IterationCounts {
  /** The largest single count. */
  readonly largest: number
  /** The sum of every count, i.e. the derivation work opening the file asks for. */
  readonly total: number
}

const integerValue = (bytes: string): number =>
  // More than 6 bytes is beyond any sane count; report it as infinite rather than lose precision.
  bytes.length > 6 ? Number.POSITIVE_INFINITY : [...bytes].reduce((n, c) => n * 256 + c.charCodeAt(0), 0)

const isOctetString = (node: Asn1): boolean => node.tagClass === UNIVERSAL && node.type === OCTET_STRING

/** The bytes of an OCTET STRING, joining the chunks of a constructed one; null past the node budget. */
const octets = (node: Asn1, budget: { nodes: number }): string | null => {
  budget.nodes -= 1
  if (budget.nodes < 0) return null
  if (typeof node.value === "string") return node.value
  let joined = ""
  for (const chunk of node.value) {
    if (!isOctetString(chunk)) return null
    const part = octets(chunk, budget)
    if (part === null) return null
    joined += part
  }
  return joined
}

/**
 * The key-derivation iteration counts visible without the password; null if the file is not DER.
 * Hitting the node or depth budget means the structure is not a plausible A1 bundle: infinite.
 */
export const iterationCounts = (pfx: Uint8Array): IterationCounts | null => {
  const root = parseDer(binaryString(pfx))
  if (root === null) return null
  let largest = 0
  let total = 0
  const budget = { nodes: MAX_NODES }
  let exhausted = false
  const walk = (node: Asn1, depth: number): void => {
    if (exhausted) return
    budget.nodes -= 1
    if (depth > MAX_DEPTH || budget.nodes < 0) {
      exhausted = true
      return
    }
    if (isOctetString(node)) {
      // ContentInfo wraps the AuthenticatedSafe and the SafeContents in OCTET STRINGs of DER.
      const bytes = octets(node, budget)
      if (bytes === null) {
        exhausted = true
        return
      }
      if (bytes.charCodeAt(0) === 0x30) {
        const inner = parseDer(bytes)
        if (inner !== null) walk(inner, depth + 1)
      }
      return
    }
    if (!Array.isArray(node.value)) return
    const children = node.value
    children.forEach((child, i) => {
      const previous = children[i - 1]
      if (
        node.tagClass === UNIVERSAL && node.type === SEQUENCE && previous !== undefined && isOctetString(previous) &&
        child.tagClass === UNIVERSAL && child.type === INTEGER && typeof child.value === "string"
      ) {
        const count = integerValue(child.value)
        largest = Math.max(largest, count)
        total += count
      }
      walk(child, depth + 1)
    })
  }
  walk(root, 0)
  return exhausted ? { largest: Number.POSITIVE_INFINITY, total: Number.POSITIVE_INFINITY } : { largest, total }
}

/** Whether opening the file stays within the derivation budget. */
export const withinWorkBudget = (counts: IterationCounts): boolean =>
  counts.largest <= MAX_PKCS12_ITERATIONS && counts.total <= MAX_PKCS12_TOTAL_ITERATIONS
