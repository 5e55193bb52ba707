/**
 * The X.509 extensions path validation acts on, read from a certificate's DER. `node:crypto`'s
 * `X509Certificate` tells whether a certificate is a CA but not its path length, its key usage bits
 * or which extensions are critical, so those are read here from forge's ASN.1 (structure only: no
 * key is parsed, so any key algorithm reads).
 */
import forge from "node-forge"
import { type Asn1, binaryString, bytesOf, childrenOf, Class, parseDer, Tag } from "./Pkcs12Asn1.js"

const OID_BASIC_CONSTRAINTS = "2.5.29.19"
const OID_KEY_USAGE = "2.5.29.15"
const BOOLEAN = 1
const BIT_STRING = 3

/**
 * Extensions a relying party may meet marked critical in ICP-Brasil and test hierarchies and that
 * do not restrict the path; a critical one outside this list (name or policy constraints, which this
 * check does not process) makes the certificate unusable, as RFC 5280 §6.1.3 requires.
 */
const UNDERSTOOD = new Set([
  OID_BASIC_CONSTRAINTS,
  OID_KEY_USAGE,
  "2.5.29.14", // subjectKeyIdentifier
  "2.5.29.35", // authorityKeyIdentifier
  "2.5.29.17", // subjectAltName
  "2.5.29.32", // certificatePolicies
  "2.5.29.37", // extKeyUsage
  "2.5.29.31", // cRLDistributionPoints
  "1.3.6.1.5.5.7.1.1" // authorityInfoAccess
])

export interface CertificateExtensions {
  /** basicConstraints cA. */
  readonly ca: boolean
  /** basicConstraints pathLenConstraint: how many CAs may follow this one; null when unbounded. */
  readonly pathLength: number | null
  /** keyUsage keyCertSign; null when the certificate has no keyUsage extension. */
  readonly keyCertSign: boolean | null
  /** A critical extension this check does not understand. */
  readonly unknownCritical: boolean
}

const isUniversal = (node: Asn1, tag: number): boolean => node.tagClass === Class.UNIVERSAL && node.type === tag

const integer = (bytes: string): number =>
  bytes.length > 4 ? Number.MAX_SAFE_INTEGER : [...bytes].reduce((n, c) => n * 256 + c.charCodeAt(0), 0)

const basicConstraints = (value: Asn1 | null): { ca: boolean; pathLength: number | null } => {
  let ca = false
  let pathLength: number | null = null
  for (const field of value === null ? [] : childrenOf(value)) {
    const bytes = bytesOf(field) ?? ""
    if (isUniversal(field, BOOLEAN)) ca = bytes.charCodeAt(0) !== 0
    if (isUniversal(field, Tag.INTEGER)) pathLength = integer(bytes)
  }
  return { ca, pathLength }
}

// BIT STRING: one byte of unused-bit count, then the bits; keyCertSign is bit 5 of the first byte.
const keyCertSignOf = (value: Asn1 | null): boolean => {
  const bytes = value !== null && isUniversal(value, BIT_STRING) ? bytesOf(value) : null
  return bytes !== null && bytes.length > 1 && (bytes.charCodeAt(1) & 0x04) !== 0
}

/** null when the DER is not a certificate this can read. */
export const extensionsOf = (der: Uint8Array): CertificateExtensions | null => {
  const certificate = parseDer(binaryString(der))
  const tbs = certificate === null ? undefined : childrenOf(certificate)[0]
  if (tbs === undefined) return null
  // extensions [3] EXPLICIT SEQUENCE OF Extension; a v1 certificate has none.
  const wrapper = childrenOf(tbs).find((node) => node.tagClass === Class.CONTEXT_SPECIFIC && node.type === 3)
  const sequence = wrapper === undefined ? undefined : childrenOf(wrapper)[0]
  const list = sequence === undefined ? [] : childrenOf(sequence)
  let result: CertificateExtensions = { ca: false, pathLength: null, keyCertSign: null, unknownCritical: false }
  for (const extension of list) {
    const [oidNode, ...rest] = childrenOf(extension)
    const oidBytes = oidNode === undefined ? null : bytesOf(oidNode)
    if (oidBytes === null) return null
    const oid = forge.asn1.derToOid(oidBytes)
    const critical = rest.some((node) => isUniversal(node, BOOLEAN) && (bytesOf(node) ?? "").charCodeAt(0) !== 0)
    const octets = rest.find((node) => isUniversal(node, Tag.OCTET_STRING))
    const value = octets === undefined ? null : parseDer(bytesOf(octets) ?? "")
    if (oid === OID_BASIC_CONSTRAINTS) result = { ...result, ...basicConstraints(value) }
    else if (oid === OID_KEY_USAGE) result = { ...result, keyCertSign: keyCertSignOf(value) }
    else if (critical && !UNDERSTOOD.has(oid)) result = { ...result, unknownCritical: true }
  }
  return result
}
