/**
 * What is kept of a bundle once its key and certificate are chosen. The fields come from forge's
 * parse, not `node:crypto`'s `X509Certificate`: that one formats names differently (one attribute a
 * line, least specific first), prints a negative serial with a minus sign, cannot read ICP-Brasil's
 * otherNames, and a second parser could refuse certificates forge accepted.
 */
import * as Redacted from "effect/Redacted"
import forge from "node-forge"
import { createHash } from "node:crypto"
import { formatDistinguishedName } from "./CertificateName.js"
import { extractTaxId } from "./CertificateTaxId.js"

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
  /** The bundle's other certificates (the issuing CAs, when it carries them), for path validation. */
  readonly chainPems: ReadonlyArray<string>
}

const certificateDer = (cert: forge.pki.Certificate): Buffer =>
  // forge keeps the parsed tbsCertificate, so re-encoding yields the original DER bytes.
  Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes(), "latin1")

const normalizeSerial = (hex: string): string => {
  const h = hex.toLowerCase()
  const stripped = h.replace(/^(00)+/, "")
  return stripped === "" ? "00" : stripped
}

// forge writes CRLF; LF is what everything else (files, XML signatures, node:crypto) expects.
const lf = (pem: string): string => pem.replace(/\r\n/g, "\n")

// forge turns a UTCTime or GeneralizedTime holding anything but digits into an Invalid Date, which
// compares false with every instant: it would pass the validity check and fail only when stored.
const validityDate = (date: Date): Date => {
  if (Number.isNaN(date.getTime())) throw new RangeError("certificate validity is not a date")
  return date
}

/** Throws when forge cannot re-encode what it parsed, or a validity bound is not a date. */
export const describeCertificate = (
  cert: forge.pki.Certificate,
  key: forge.pki.rsa.PrivateKey,
  others: ReadonlyArray<forge.pki.Certificate> = []
): ParsedCertificate => {
  const keyInfo = forge.pki.wrapRsaPrivateKey(forge.pki.privateKeyToAsn1(key))
  return {
    subject: formatDistinguishedName(cert.subject.attributes),
    issuer: formatDistinguishedName(cert.issuer.attributes),
    serialNumber: normalizeSerial(cert.serialNumber),
    notBefore: validityDate(cert.validity.notBefore),
    notAfter: validityDate(cert.validity.notAfter),
    fingerprintSha256: createHash("sha256").update(certificateDer(cert)).digest("hex"),
    taxId: extractTaxId(cert),
    privateKeyPem: Redacted.make(lf(forge.pki.privateKeyInfoToPem(keyInfo))),
    certificatePem: lf(forge.pki.certificateToPem(cert)),
    chainPems: others.map((other) => lf(forge.pki.certificateToPem(other)))
  }
}
