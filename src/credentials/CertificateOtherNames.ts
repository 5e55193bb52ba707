/**
 * The otherName entries of a certificate's subjectAltName, where ICP-Brasil puts the holder's CNPJ
 * and e-CPF data. Neither `node:crypto` (prints them as `othername:<unsupported>`) nor
 * `@peculiar/x509` (rejects otherNames other than UPN and GUID) exposes them, so they are read
 * from forge's ASN.1 here.
 */
import forge from "node-forge"
import {
  type Asn1,
  bytesOf,
  childrenOf,
  Class,
  decodeUtf16Be,
  decodeUtf8,
  isPrintableAscii,
  parseDer,
  Tag
} from "./Pkcs12Asn1.js"

const OID_SUBJECT_ALT_NAME = "2.5.29.17"

/**
 * The text of an otherName value. ICP-Brasil specifies OCTET STRING, but issuers (and test tools)
 * also use UTF8String, PrintableString or IA5String, and some wrap a string inside the OCTET STRING.
 */
const asn1Text = (node: Asn1, depth = 0): string | null => {
  const bytes = bytesOf(node)
  if (node.tagClass !== Class.UNIVERSAL || bytes === null || depth > 2) return null
  const tag: number = node.type
  switch (tag) {
    case Tag.UTF8_STRING:
      return decodeUtf8(bytes)
    case Tag.PRINTABLE_STRING:
    case Tag.IA5_STRING:
    case Tag.NUMERIC_STRING:
    case Tag.VISIBLE_STRING:
    case Tag.T61_STRING:
      return bytes
    case Tag.BMP_STRING:
      return decodeUtf16Be(bytes)
    case Tag.OCTET_STRING: {
      if (isPrintableAscii(bytes)) return bytes
      try {
        return asn1Text(forge.asn1.fromDer(bytes, true), depth + 1)
      } catch {
        return null
      }
    }
    default:
      return null
  }
}

interface RawExtension {
  readonly id: string
  readonly value: string
}

// forge leaves `Certificate.extensions` untyped; check the two fields we rely on.
const isRawExtension = (u: unknown): u is RawExtension =>
  typeof u === "object" &&
  u !== null &&
  "id" in u &&
  typeof u.id === "string" &&
  "value" in u &&
  typeof u.value === "string"

/** (OID, text) pairs, in certificate order; entries whose value is not text are skipped. */
export const otherNames = (cert: forge.pki.Certificate): ReadonlyArray<readonly [string, string]> => {
  const extensions: ReadonlyArray<unknown> = cert.extensions
  const san = extensions.find((e): e is RawExtension => isRawExtension(e) && e.id === OID_SUBJECT_ALT_NAME)
  const names = san === undefined ? null : parseDer(san.value)
  if (names === null) return []
  const out: Array<readonly [string, string]> = []
  for (const gn of childrenOf(names)) {
    // otherName is [0] IMPLICIT SEQUENCE { type-id OID, value [0] EXPLICIT ANY }.
    if (gn.tagClass !== Class.CONTEXT_SPECIFIC || gn.type !== 0) continue
    const [typeId, wrapped] = childrenOf(gn)
    if (typeId === undefined || wrapped === undefined || typeId.type !== Tag.OID) continue
    const oidBytes = bytesOf(typeId)
    const inner = childrenOf(wrapped)[0]
    if (oidBytes === null || inner === undefined) continue
    const text = asn1Text(inner)
    if (text !== null) out.push([forge.asn1.derToOid(oidBytes), text])
  }
  return out
}
