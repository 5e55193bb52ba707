/**
 * The node-forge ASN.1 boundary shared by the PKCS#12 and certificate readers. forge carries bytes
 * as "binary strings" (one character per byte) and types node values loosely; these helpers keep
 * that in one place.
 */
import forge from "node-forge"

export type Asn1 = forge.asn1.Asn1

export const Class = forge.asn1.Class

// Universal tag numbers (X.680); forge's Type enum lacks several string types.
export const Tag = {
  INTEGER: 2,
  OCTET_STRING: 4,
  OID: 6,
  UTF8_STRING: 12,
  SEQUENCE: 16,
  NUMERIC_STRING: 18,
  PRINTABLE_STRING: 19,
  T61_STRING: 20,
  IA5_STRING: 22,
  VISIBLE_STRING: 26,
  BMP_STRING: 30
} as const

export const binaryString = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1")

/** Non-strict, because real-world bundles (Windows exports) are not always minimal DER. */
export const parseDer = (binary: string): Asn1 | null => {
  try {
    return forge.asn1.fromDer(binary, false)
  } catch {
    return null
  }
}

export const childrenOf = (node: Asn1): ReadonlyArray<Asn1> => (Array.isArray(node.value) ? node.value : [])

export const bytesOf = (node: Asn1): string | null => (typeof node.value === "string" ? node.value : null)

export const decodeUtf16Be = (bytes: string): string => {
  let out = ""
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    out += String.fromCharCode((bytes.charCodeAt(i) << 8) | bytes.charCodeAt(i + 1))
  }
  return out
}

export const decodeUtf8 = (bytes: string): string | null => {
  try {
    return forge.util.decodeUtf8(bytes)
  } catch {
    return null
  }
}

export const isPrintableAscii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s)
