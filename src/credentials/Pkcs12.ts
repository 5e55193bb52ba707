/**
 * ICP-Brasil A1 certificates: reading a PKCS#12 (.pfx) bundle and deciding whether it may be used
 * by a tenant.
 *
 * node-forge does the PKCS#12 work. It reads both the legacy bundles most Brazilian CAs and Windows
 * still produce (pbeWithSHAAnd3-KeyTripleDES-CBC for the key, pbeWithSHAAnd40BitRC2-CBC or 3DES
 * for the certificates, SHA-1 MAC) and the OpenSSL 3 default (PBES2 = PBKDF2/HMAC-SHA-256 +
 * AES-256-CBC, SHA-256 MAC). Only RSA keys are supported, which is what ICP-Brasil A1 issues.
 *
 * forge is synchronous pure JavaScript: a bundle with an absurd PBKDF2 iteration count would hold
 * the event loop. Callers must cap the upload size and should only expose this to authenticated
 * tenant administrators.
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import forge from "node-forge"

// ---------------------------------------------------------------------------------------------
// Public types and errors
// ---------------------------------------------------------------------------------------------

export interface ParsedCertificate {
  /** RFC 4514 order (most specific first), e.g. `CN=EMPRESA LTDA:12345678000195,O=ICP-Brasil,C=BR`. */
  readonly subject: string
  readonly issuer: string
  /** Lower-case hex, without the sign-padding zero byte DER may add. */
  readonly serialNumber: string
  readonly notBefore: Date
  readonly notAfter: Date
  /** Lower-case hex of SHA-256 over the certificate's DER, no colons. */
  readonly fingerprintSha256: string
  /** Normalized CNPJ (or CPF for an e-CPF certificate) the certificate was issued to, if any. */
  readonly taxId: string | null
  /** PKCS#8 PEM of the private key. */
  readonly privateKeyPem: Redacted.Redacted<string>
  readonly certificatePem: string
}

export const Pkcs12ErrorReason = Schema.Literals(["wrong_password", "malformed", "no_certificate", "no_private_key"])
export type Pkcs12ErrorReason = typeof Pkcs12ErrorReason.Type

export class Pkcs12Error extends Schema.TaggedError<Pkcs12Error>()("Pkcs12Error", {
  reason: Pkcs12ErrorReason,
  message: Schema.String
}) {}

export const CertificateRejectedReason = Schema.Literals(["expired", "not_yet_valid", "tax_id_mismatch", "tax_id_missing"])
export type CertificateRejectedReason = typeof CertificateRejectedReason.Type

export class CertificateRejected extends Schema.TaggedError<CertificateRejected>()("CertificateRejected", {
  reason: CertificateRejectedReason,
  message: Schema.String
}) {}

// The messages are fixed strings on purpose: forge's own errors are not passed through, so nothing
// derived from the password or the decrypted content can reach a response or a log.
const pkcs12Messages: Record<Pkcs12ErrorReason, string> = {
  wrong_password: "The PKCS#12 password is incorrect",
  malformed: "The file is not a readable PKCS#12 (.pfx/.p12) bundle",
  no_certificate: "The PKCS#12 bundle has no certificate matching its private key",
  no_private_key: "The PKCS#12 bundle has no RSA private key"
}

const pkcs12Error = (reason: Pkcs12ErrorReason): Pkcs12Error =>
  new Pkcs12Error({ reason, message: pkcs12Messages[reason] })

// ---------------------------------------------------------------------------------------------
// Tax ids
// ---------------------------------------------------------------------------------------------

/** Keeps only [0-9A-Z], so "12.345.678/0001-95" and "12345678000195" compare equal. */
export const normalizeTaxIdChars = (s: string): string => s.toUpperCase().replace(/[^0-9A-Z]/g, "")

// Alphanumeric CNPJs (from July 2026): 12 characters [0-9A-Z] + 2 numeric check digits.
const CNPJ_SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/
const CPF_SHAPE = /^[0-9]{11}$/
// ICP-Brasil fills fields that do not apply with zeros.
const ALL_ZEROS = /^0+$/

const OID_CNPJ = "2.16.76.1.3.3"
// e-CPF holder data: birth date (8) + CPF (11) + NIS (11) + RG (15) + issuer (6).
const OID_PERSON_DATA = "2.16.76.1.3.1"
const OID_SUBJECT_ALT_NAME = "2.5.29.17"
const OID_COMMON_NAME = "2.5.4.3"

const asCnpj = (raw: string): string | null => {
  const n = normalizeTaxIdChars(raw)
  return CNPJ_SHAPE.test(n) && !ALL_ZEROS.test(n) ? n : null
}

const asCpf = (raw: string): string | null => {
  const n = normalizeTaxIdChars(raw)
  return CPF_SHAPE.test(n) && !ALL_ZEROS.test(n) ? n : null
}

// ---------------------------------------------------------------------------------------------
// ASN.1 helpers (the node-forge boundary)
// ---------------------------------------------------------------------------------------------

type Asn1 = forge.asn1.Asn1

const { Class } = forge.asn1

const childrenOf = (node: Asn1): ReadonlyArray<Asn1> => (Array.isArray(node.value) ? node.value : [])
const bytesOf = (node: Asn1): string | null => (typeof node.value === "string" ? node.value : null)

const decodeUtf16Be = (bytes: string): string => {
  let out = ""
  for (let i = 0; i + 1 < bytes.length; i += 2) {
    out += String.fromCharCode((bytes.charCodeAt(i) << 8) | bytes.charCodeAt(i + 1))
  }
  return out
}

const decodeUtf8 = (bytes: string): string | null => {
  try {
    return forge.util.decodeUtf8(bytes)
  } catch {
    return null
  }
}

const isPrintableAscii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s)

// Universal tag numbers (X.680); forge's Type enum lacks several string types.
const Tag = {
  OCTET_STRING: 4,
  OID: 6,
  UTF8_STRING: 12,
  NUMERIC_STRING: 18,
  PRINTABLE_STRING: 19,
  T61_STRING: 20,
  IA5_STRING: 22,
  VISIBLE_STRING: 26,
  BMP_STRING: 30
} as const

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

/** otherName entries of the subjectAltName, as (OID, text) pairs. */
const otherNames = (cert: forge.pki.Certificate): ReadonlyArray<readonly [string, string]> => {
  const extensions: ReadonlyArray<unknown> = cert.extensions
  const san = extensions.find((e): e is RawExtension => isRawExtension(e) && e.id === OID_SUBJECT_ALT_NAME)
  if (san === undefined) return []
  let names: Asn1
  try {
    names = forge.asn1.fromDer(san.value, false)
  } catch {
    return []
  }
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

// ---------------------------------------------------------------------------------------------
// Distinguished names
// ---------------------------------------------------------------------------------------------

const RDN_NAMES: Record<string, string> = {
  "2.5.4.3": "CN",
  "2.5.4.6": "C",
  "2.5.4.7": "L",
  "2.5.4.8": "ST",
  "2.5.4.9": "STREET",
  "2.5.4.10": "O",
  "2.5.4.11": "OU",
  "2.5.4.5": "serialNumber",
  "1.2.840.113549.1.9.1": "emailAddress",
  "0.9.2342.19200300.100.1.1": "UID",
  "0.9.2342.19200300.100.1.25": "DC"
}

const escapeRdnValue = (v: string): string =>
  v
    .replace(/[\\"+,;<>]/g, (c) => `\\${c}`)
    .replace(/\0/g, "\\00")
    .replace(/^([ #])/, "\\$1")
    .replace(/ $/, "\\ ")

const attributeText = (attr: forge.pki.CertificateField): string => {
  if (typeof attr.value !== "string") return ""
  // forge hands over the raw bytes of the string, and types valueTagClass as a tag class while
  // storing the universal tag number there.
  const tag: number | undefined = attr.valueTagClass
  if (tag === Tag.UTF8_STRING) return decodeUtf8(attr.value) ?? attr.value
  if (tag === Tag.BMP_STRING) return decodeUtf16Be(attr.value)
  return attr.value
}

const formatName = (attributes: ReadonlyArray<forge.pki.CertificateField>): string =>
  [...attributes]
    .reverse()
    .map((a) => `${RDN_NAMES[a.type ?? ""] ?? a.type ?? "?"}=${escapeRdnValue(attributeText(a))}`)
    .join(",")

const commonName = (cert: forge.pki.Certificate): string | null => {
  const cns = cert.subject.attributes.filter((a) => a.type === OID_COMMON_NAME)
  const last = cns[cns.length - 1]
  return last === undefined ? null : attributeText(last)
}

// ---------------------------------------------------------------------------------------------
// Certificate fields
// ---------------------------------------------------------------------------------------------

/** The taxpayer a certificate was issued to: SAN CNPJ, CN suffix, then the e-CPF fields. */
export const extractTaxId = (cert: forge.pki.Certificate): string | null => {
  const others = otherNames(cert)
  for (const [oid, text] of others) {
    if (oid === OID_CNPJ) {
      const cnpj = asCnpj(text)
      if (cnpj !== null) return cnpj
    }
  }
  const cnSuffix = /:\s*([0-9A-Za-z./-]+)\s*$/.exec(commonName(cert) ?? "")?.[1]
  const cnCnpj = cnSuffix === undefined ? null : asCnpj(cnSuffix)
  if (cnCnpj !== null) return cnCnpj
  for (const [oid, text] of others) {
    if (oid === OID_PERSON_DATA) {
      const cpf = asCpf(text.slice(8, 19))
      if (cpf !== null) return cpf
    }
  }
  return cnSuffix === undefined ? null : asCpf(cnSuffix)
}

const certificateDer = (cert: forge.pki.Certificate): Buffer =>
  // forge keeps the parsed tbsCertificate, so re-encoding yields the original DER bytes.
  Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), "latin1")

const normalizeSerial = (hex: string): string => {
  const h = hex.toLowerCase()
  const stripped = h.replace(/^(00)+/, "")
  return stripped === "" ? "00" : stripped
}

const isCa = (cert: forge.pki.Certificate): boolean => {
  const bc = cert.getExtension("basicConstraints")
  return bc !== undefined && "cA" in bc && bc.cA === true
}

const keyMatches = (key: forge.pki.rsa.PrivateKey, cert: forge.pki.Certificate): boolean => {
  const pub = cert.publicKey
  return "n" in pub && "e" in pub && pub.n.equals(key.n) && pub.e.equals(key.e)
}

// forge writes CRLF; LF is what everything else (files, XML signatures, node:crypto) expects.
const lf = (pem: string): string => pem.replace(/\r\n/g, "\n")

const describe = (cert: forge.pki.Certificate, key: forge.pki.rsa.PrivateKey): ParsedCertificate => {
  const der = certificateDer(cert)
  const keyInfo = forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(key))
  return {
    subject: formatName(cert.subject.attributes),
    issuer: formatName(cert.issuer.attributes),
    serialNumber: normalizeSerial(cert.serialNumber),
    notBefore: cert.validity.notBefore,
    notAfter: cert.validity.notAfter,
    fingerprintSha256: createHash("sha256").update(der).digest("hex"),
    taxId: extractTaxId(cert),
    privateKeyPem: Redacted.make(lf(forge.pki.privateKeyInfoToPem(keyInfo))),
    certificatePem: lf(forge.pki.certificateToPem(cert))
  }
}

// ---------------------------------------------------------------------------------------------
// PKCS#12
// ---------------------------------------------------------------------------------------------

const isForgeDecryptionFailure = (e: unknown): boolean =>
  e instanceof Error &&
  (e.message.includes("Failed to decrypt PKCS#12 SafeContents") ||
    e.message.includes("Unable to decrypt PKCS#8 ShroudedKeyBag"))

const isForgeMacFailure = (e: unknown): boolean =>
  e instanceof Error && e.message.includes("PKCS#12 MAC could not be verified")

const classify = (e: unknown): Pkcs12Error =>
  pkcs12Error(isForgeMacFailure(e) || isForgeDecryptionFailure(e) ? "wrong_password" : "malformed")

/**
 * forge derives PBES2 (PBKDF2) keys from the password's UTF-16 code units truncated to bytes, while
 * OpenSSL and Windows use its UTF-8 bytes; the legacy PKCS#12 KDF and the MAC (BMPString) agree.
 * So a non-ASCII password passes the MAC and then fails to decrypt an AES bundle. Having passed the
 * MAC, the password is known to be right: decrypt again with the UTF-8 bytes, MAC removed because
 * forge would otherwise check it against the re-encoded password.
 */
const decodePfx = (pfx: Asn1, password: string): forge.pkcs12.Pkcs12Pfx => {
  try {
    return forge.pkcs12.pkcs12FromAsn1(pfx, false, password)
  } catch (e) {
    if (!isForgeDecryptionFailure(e) || isPrintableAscii(password)) throw e
    const withoutMac = forge.asn1.create(pfx.tagClass, pfx.type, pfx.constructed, childrenOf(pfx).slice(0, 2))
    try {
      return forge.pkcs12.pkcs12FromAsn1(withoutMac, false, forge.util.encodeUtf8(password))
    } catch {
      throw e
    }
  }
}

const bagsOf = (p12: forge.pkcs12.Pkcs12Pfx, bagType: string): ReadonlyArray<forge.pkcs12.Bag> =>
  p12.getBags({ bagType })[bagType] ?? []

/**
 * Parses an A1 bundle with its password. When it carries a chain, the end-entity certificate is
 * the one whose public key matches the private key (a non-CA one if several do).
 */
export const parsePkcs12 = (pfx: Uint8Array, password: string): Effect.Effect<ParsedCertificate, Pkcs12Error> =>
  Effect.suspend(() => {
    let p12: forge.pkcs12.Pkcs12Pfx
    try {
      // Non-strict: real-world bundles (Windows exports) are not always minimal DER.
      const asn = forge.asn1.fromDer(Buffer.from(pfx.buffer, pfx.byteOffset, pfx.byteLength).toString("latin1"), false)
      p12 = decodePfx(asn, password)
    } catch (e) {
      return Effect.fail(classify(e))
    }

    const keys = [
      ...bagsOf(p12, forge.pki.oids.pkcs8ShroudedKeyBag),
      ...bagsOf(p12, forge.pki.oids.keyBag)
    ].flatMap((b) => (b.key ? [b.key] : []))
    const certs = bagsOf(p12, forge.pki.oids.certBag).flatMap((b) => (b.cert ? [b.cert] : []))

    if (keys.length === 0) return Effect.fail(pkcs12Error("no_private_key"))
    const pairs = keys.flatMap((key) =>
      certs.filter((cert) => keyMatches(key, cert)).map((cert) => ({ key, cert }))
    )
    const chosen = pairs.find((p) => !isCa(p.cert)) ?? pairs[0]
    if (chosen === undefined) return Effect.fail(pkcs12Error("no_certificate"))
    return Effect.try({ try: () => describe(chosen.cert, chosen.key), catch: () => pkcs12Error("malformed") })
  })

// ---------------------------------------------------------------------------------------------
// Acceptance
// ---------------------------------------------------------------------------------------------

const iso = (d: Date): string => d.toISOString()

/**
 * Whether a certificate may be stored for a tenant at `now`: within its validity period (bounds
 * inclusive, as in RFC 5280) and issued to the tenant's tax id.
 */
export const checkCertificate = <A extends Pick<ParsedCertificate, "notBefore" | "notAfter" | "taxId">>(
  parsed: A,
  options: { readonly now: Date; readonly tenantTaxId: string }
): Effect.Effect<A, CertificateRejected> => {
  const now = options.now.getTime()
  if (now > parsed.notAfter.getTime()) {
    return Effect.fail(
      new CertificateRejected({
        reason: "expired",
        message: `The certificate expired at ${iso(parsed.notAfter)}`
      })
    )
  }
  if (now < parsed.notBefore.getTime()) {
    return Effect.fail(
      new CertificateRejected({
        reason: "not_yet_valid",
        message: `The certificate is not valid before ${iso(parsed.notBefore)}`
      })
    )
  }
  if (parsed.taxId === null) {
    return Effect.fail(
      new CertificateRejected({
        reason: "tax_id_missing",
        message: "The certificate does not carry a CNPJ (subjectAltName 2.16.76.1.3.3 or CN suffix)"
      })
    )
  }
  if (normalizeTaxIdChars(parsed.taxId) !== normalizeTaxIdChars(options.tenantTaxId)) {
    return Effect.fail(
      new CertificateRejected({
        reason: "tax_id_mismatch",
        message: "The certificate was issued to a different tax id than the tenant's"
      })
    )
  }
  return Effect.succeed(parsed)
}
