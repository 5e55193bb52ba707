/**
 * Whether a tenant's certificate chains to a trusted root (SPEC §8 "Trust"): a path from the
 * end-entity certificate through the intermediates its PKCS#12 carries to one of the trust anchors,
 * every certificate of it valid at the given instant, every issuer a CA allowed to sign
 * certificates (basicConstraints cA, keyUsage keyCertSign when present, path length respected),
 * every signature checked, no critical extension left unprocessed (RFC 5280 §6.1, without
 * revocation and policy processing).
 *
 * Bounded work: at most `MAX_BUNDLE_CERTIFICATES` intermediates are considered and a path has at
 * most `MAX_PATH_CAS` CAs below the root, so a bundle stuffed with certificates costs a few dozen
 * signature checks, each native and sub-millisecond.
 */
import { X509Certificate } from "node:crypto"
import { type CertificateExtensions, extensionsOf } from "./CertificateExtensions.js"

export const MAX_BUNDLE_CERTIFICATES = 10
export const MAX_PATH_CAS = 5

export type PathVerdict =
  | { readonly trusted: true; readonly root: string }
  | { readonly trusted: false; readonly reason: string }

interface Node {
  readonly x509: X509Certificate
  readonly extensions: CertificateExtensions
}

const nodeOf = (pem: string): Node | null => {
  try {
    const x509 = new X509Certificate(pem)
    const extensions = extensionsOf(new Uint8Array(x509.raw))
    return extensions === null ? null : { x509, extensions }
  } catch {
    return null
  }
}

const validAt = (node: Node, at: Date): boolean =>
  at.getTime() >= node.x509.validFromDate.getTime() && at.getTime() <= node.x509.validToDate.getTime()

/** The CN of a subject, for messages; the whole subject when it has none. */
const commonName = (x509: X509Certificate): string => /(?:^|\n)CN=([^\n]*)/.exec(x509.subject)?.[1] ?? x509.subject

/**
 * Whether `issuer` may have issued `child` at `at`, `below` CAs lying between `child` and the leaf.
 * OpenSSL's `checkIssued` compares the names and key identifiers; the signature is checked last,
 * as the most expensive step.
 */
const issues = (issuer: Node, child: Node, below: number, at: Date): boolean =>
  child.x509.checkIssued(issuer.x509) &&
  issuer.extensions.ca &&
  issuer.extensions.keyCertSign !== false &&
  !issuer.extensions.unknownCritical &&
  (issuer.extensions.pathLength === null || below <= issuer.extensions.pathLength) &&
  validAt(issuer, at) &&
  child.x509.verify(issuer.x509.publicKey)

export interface PathInput {
  readonly leafPem: string
  /** The other certificates of the bundle, in any order; beyond the bound they are ignored. */
  readonly intermediatePems: ReadonlyArray<string>
  readonly anchorPems: ReadonlyArray<string>
  readonly at: Date
}

export const validatePath = (input: PathInput): PathVerdict => {
  const leaf = nodeOf(input.leafPem)
  if (leaf === null) return { trusted: false, reason: "the certificate could not be read for path validation" }
  if (leaf.extensions.unknownCritical) {
    return { trusted: false, reason: "the certificate has a critical extension that cannot be processed" }
  }
  const anchors = input.anchorPems.flatMap((pem) => nodeOf(pem) ?? [])
  if (anchors.some((anchor) => anchor.x509.fingerprint256 === leaf.x509.fingerprint256)) {
    return { trusted: false, reason: "the certificate is itself a root, not one issued to a taxpayer" }
  }
  const candidates = input.intermediatePems
    .slice(0, MAX_BUNDLE_CERTIFICATES)
    .flatMap((pem) => nodeOf(pem) ?? [])
    .filter((node) => node.x509.fingerprint256 !== leaf.x509.fingerprint256)

  // Depth-first over the intermediates, each used once per path; `below` counts the CAs under `child`.
  const search = (child: Node, below: number, used: ReadonlySet<string>): string | null => {
    const anchor = anchors.find((root) => issues(root, child, below, input.at))
    if (anchor !== undefined) return commonName(anchor.x509)
    if (below >= MAX_PATH_CAS) return null
    for (const next of candidates) {
      if (used.has(next.x509.fingerprint256) || !issues(next, child, below, input.at)) continue
      const root = search(next, below + 1, new Set([...used, next.x509.fingerprint256]))
      if (root !== null) return root
    }
    return null
  }

  const root = search(leaf, 0, new Set())
  return root !== null
    ? { trusted: true, root }
    : {
      trusted: false,
      reason: "the certificate does not chain to an ICP-Brasil root: no path of valid certificate authorities " +
        "from it to a trusted root (export the .pfx with every certificate of the certification path)"
    }
}
