/**
 * Opening a PKCS#12 bundle with its password and taking out its RSA keys and certificates.
 *
 * node-forge reads both the legacy bundles most Brazilian CAs and Windows still produce
 * (pbeWithSHAAnd3-KeyTripleDES-CBC for the key, pbeWithSHAAnd40BitRC2-CBC or 3DES for the
 * certificates, SHA-1 MAC) and the OpenSSL 3 default (PBES2 = PBKDF2/HMAC-SHA-256 + AES-256-CBC,
 * SHA-256 MAC).
 */
import * as Effect from "effect/Effect"
import forge from "node-forge"
import { type Asn1, binaryString, childrenOf, isPrintableAscii, parseDer } from "./Pkcs12Asn1.js"
import { type Pkcs12Error, pkcs12Error } from "./Pkcs12Error.js"

export interface Pkcs12Contents {
  readonly keys: ReadonlyArray<forge.pki.rsa.PrivateKey>
  readonly certificates: ReadonlyArray<forge.pki.Certificate>
}

// forge reports failures only through its error messages.
const isDecryptionFailure = (e: unknown): boolean =>
  e instanceof Error &&
  (e.message.includes("Failed to decrypt PKCS#12 SafeContents") ||
    e.message.includes("Unable to decrypt PKCS#8 ShroudedKeyBag"))

const isMacFailure = (e: unknown): boolean =>
  e instanceof Error && e.message.includes("PKCS#12 MAC could not be verified")

const classify = (e: unknown): Pkcs12Error =>
  pkcs12Error(isMacFailure(e) || isDecryptionFailure(e) ? "wrong_password" : "malformed")

/**
 * forge derives PBES2 (PBKDF2) keys from the password's UTF-16 code units truncated to bytes, while
 * OpenSSL and Windows use its UTF-8 bytes; the legacy PKCS#12 KDF and the MAC (BMPString) agree.
 * So a non-ASCII password passes the MAC and then fails to decrypt an AES bundle: usually with a
 * padding error, but about once in a hundred bundles the wrong key yields valid padding and the
 * failure surfaces later as unreadable ASN.1. Any failure other than the MAC's is therefore
 * retried: having passed the MAC, the password is known to be right, so decrypt again with the
 * UTF-8 bytes, MAC removed because forge would otherwise check it against the re-encoded password.
 */
const decodePfx = (pfx: Asn1, password: string): forge.pkcs12.Pkcs12Pfx => {
  try {
    return forge.pkcs12.pkcs12FromAsn1(pfx, false, password)
  } catch (e) {
    if (isMacFailure(e) || isPrintableAscii(password)) throw e
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

const contentsOf = (p12: forge.pkcs12.Pkcs12Pfx): Pkcs12Contents => ({
  keys: [...bagsOf(p12, forge.pki.oids.pkcs8ShroudedKeyBag), ...bagsOf(p12, forge.pki.oids.keyBag)].flatMap((b) =>
    b.key ? [b.key] : []
  ),
  certificates: bagsOf(p12, forge.pki.oids.certBag).flatMap((b) => (b.cert ? [b.cert] : []))
})

/** forge is synchronous: this runs every key derivation the bundle asks for on the calling thread. */
export const openPkcs12 = (pfx: Uint8Array, password: string): Effect.Effect<Pkcs12Contents, Pkcs12Error> =>
  Effect.suspend(() => {
    const asn = parseDer(binaryString(pfx))
    if (asn === null) return Effect.fail(pkcs12Error("malformed"))
    return Effect.map(Effect.try({ try: () => decodePfx(asn, password), catch: classify }), contentsOf)
  })
