/**
 * The local authority's own public-key material: a throw-away certificate authority, the HTTPS
 * server certificate it issues for 127.0.0.1 and localhost, and the certificate the authority signs
 * its NFS-e and events with (as the real national system signs with its own certificate).
 *
 * RSA keys come from node:crypto (2048 bits, native and fast); node-forge assembles the X.509
 * certificates. Everything is made once per process and shared by every local authority started in
 * it: key generation is the slow part, and tests start many instances. Nothing here is ever written
 * to disk by this module; callers who need the CA on disk (main.ts) write the public PEM only.
 */
import forge from "node-forge"
import { generateKeyPairSync, randomBytes } from "node:crypto"

export interface IssuedCertificate {
  readonly certificatePem: string
  readonly privateKeyPem: string
}

export interface LocalAuthorityKeys {
  /** The CA certificate clients must trust to reach the local authority. */
  readonly caCertificatePem: string
  /** TLS server certificate for 127.0.0.1 and localhost, issued by the CA. */
  readonly server: IssuedCertificate
  /** The authority's signing certificate for NFS-e and events, issued by the CA. */
  readonly signer: IssuedCertificate
}

const rsaKeyPair = (): { privateKeyPem: string; publicKey: forge.pki.PublicKey } => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  })
  return { privateKeyPem: privateKey, publicKey: forge.pki.publicKeyFromPem(publicKey) }
}

// Positive, without a leading zero byte, as forge writes the hex verbatim into the DER INTEGER.
const serialNumber = (): string => {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0]! & 0x7f) | 0x10
  return bytes.toString("hex")
}

const subjectOf = (commonName: string): Array<forge.pki.CertificateField> => [
  { name: "countryName", value: "BR" },
  { name: "organizationName", value: "Autoridade local de testes NFS-e" },
  { name: "commonName", value: commonName }
]

const DAY = 86_400_000

const makeCertificate = (options: {
  readonly publicKey: forge.pki.PublicKey
  readonly subject: Array<forge.pki.CertificateField>
  readonly issuer: Array<forge.pki.CertificateField>
  readonly extensions: Array<Record<string, unknown>>
  readonly signingKey: forge.pki.rsa.PrivateKey
  readonly days: number
}): forge.pki.Certificate => {
  const certificate = forge.pki.createCertificate()
  certificate.publicKey = options.publicKey
  certificate.serialNumber = serialNumber()
  // Backdated an hour: clocks of a test machine and of a container may disagree a little.
  certificate.validity.notBefore = new Date(Date.now() - 3_600_000)
  certificate.validity.notAfter = new Date(Date.now() + options.days * DAY)
  certificate.setSubject(options.subject)
  certificate.setIssuer(options.issuer)
  certificate.setExtensions(options.extensions)
  certificate.sign(options.signingKey, forge.md.sha256.create())
  return certificate
}

const generate = (): LocalAuthorityKeys => {
  const caKeys = rsaKeyPair()
  const caKey = forge.pki.privateKeyFromPem(caKeys.privateKeyPem)
  const caSubject = subjectOf("AC LOCAL NFS-e TESTES")
  const ca = makeCertificate({
    publicKey: caKeys.publicKey,
    subject: caSubject,
    issuer: caSubject,
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
      { name: "subjectKeyIdentifier" }
    ],
    signingKey: caKey,
    days: 3650
  })

  const issue = (commonName: string, extensions: Array<Record<string, unknown>>): IssuedCertificate => {
    const keys = rsaKeyPair()
    const certificate = makeCertificate({
      publicKey: keys.publicKey,
      subject: subjectOf(commonName),
      issuer: caSubject,
      extensions: [
        { name: "basicConstraints", cA: false, critical: true },
        ...extensions,
        { name: "subjectKeyIdentifier" },
        { name: "authorityKeyIdentifier", keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() }
      ],
      signingKey: caKey,
      days: 825
    })
    return { certificatePem: forge.pki.certificateToPem(certificate), privateKeyPem: keys.privateKeyPem }
  }

  return {
    caCertificatePem: forge.pki.certificateToPem(ca),
    server: issue("localhost", [
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      // type 7 = iPAddress, type 2 = dNSName
      { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }, { type: 2, value: "localhost" }] }
    ]),
    signer: issue("SEFIN NACIONAL LOCAL (assinatura de NFS-e)", [
      { name: "keyUsage", digitalSignature: true, nonRepudiation: true, critical: true }
    ])
  }
}

let keys: LocalAuthorityKeys | undefined

/** The process's local authority keys, generated on first use. */
export const localAuthorityKeys = (): LocalAuthorityKeys => {
  keys ??= generate()
  return keys
}
