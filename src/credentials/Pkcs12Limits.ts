/**
 * A cheap look at a PKCS#12 bundle before node-forge opens it. forge runs the bundle's key
 * derivations (PBKDF2, the PKCS#12 KDF) synchronously with whatever iteration count the file
 * names, so a crafted 1 KiB file asking for 2^31 iterations would hold the event loop for hours.
 * The counts sit in clear ASN.1 (MacData, pkcs-12PbeParams, PBKDF2-params are all
 * `SEQUENCE { salt OCTET STRING, iterations INTEGER, … }`), so they can be read without the password.
 *
 * Residual risk, accepted: a key bag nested inside an *encrypted* SafeContents carries its own count
 * that only becomes visible after the outer layer is decrypted with the right password, i.e. by the
 * uploader of their own file, who must be an owner or admin of the tenant.
 */
import { type Asn1, binaryString, Class, parseDer, Tag } from "./Pkcs12Asn1.js"

/** Far above what real exporters use (OpenSSL 2048, Windows 2000, Java 10 000). */
export const MAX_PKCS12_ITERATIONS = 100_000

const { UNIVERSAL } = Class
const { OCTET_STRING, INTEGER, SEQUENCE } = Tag
const MAX_DEPTH = 24
const MAX_NODES = 20_000

const integerValue = (bytes: string): number =>
  // More than 6 bytes is beyond any sane count; report it as infinite rather than lose precision.
  bytes.length > 6 ? Number.POSITIVE_INFINITY : [...bytes].reduce((n, c) => n * 256 + c.charCodeAt(0), 0)

/** The largest key-derivation iteration count visible without the password; null if the file is not DER. */
export const largestIterationCount = (pfx: Uint8Array): number | null => {
  const root = parseDer(binaryString(pfx))
  if (root === null) return null
  let largest = 0
  let visited = 0
  const walk = (node: Asn1, depth: number): void => {
    visited += 1
    if (depth > MAX_DEPTH || visited > MAX_NODES) return
    if (Array.isArray(node.value)) {
      const children = node.value
      children.forEach((child, i) => {
        const previous = children[i - 1]
        if (
          node.tagClass === UNIVERSAL && node.type === SEQUENCE && previous !== undefined &&
          previous.tagClass === UNIVERSAL && previous.type === OCTET_STRING &&
          child.tagClass === UNIVERSAL && child.type === INTEGER && typeof child.value === "string"
        ) {
          largest = Math.max(largest, integerValue(child.value))
        }
        walk(child, depth + 1)
      })
    } else if (node.tagClass === UNIVERSAL && node.type === OCTET_STRING && typeof node.value === "string") {
      // ContentInfo wraps the AuthenticatedSafe and the SafeContents in OCTET STRINGs of DER.
      if (node.value.charCodeAt(0) === 0x30) {
        const inner = parseDer(node.value)
        if (inner !== null) walk(inner, depth + 1)
      }
    }
  }
  walk(root, 0)
  // Hitting the node budget means the structure is not a plausible A1 bundle.
  return visited > MAX_NODES ? Number.POSITIVE_INFINITY : largest
}
