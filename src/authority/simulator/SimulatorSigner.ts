/**
 * The built-in simulator's own signing certificate, for the goods notes it authorizes. A goods note
 * (NF-e, NFC-e) must carry an XML signature to be a note at all (the official schema requires it),
 * and the simulator holds no tenant's certificate: it signs in its own name, a self-signed
 * certificate that says it stands for no one, so its notes are well-formed and verifiable but never
 * mistaken for a tenant's. Made once per process, on the first goods note.
 */
import forge from "node-forge"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import type { NoteSigner } from "../sefaz/SignedNote.js"

const SUBJECT: Array<forge.pki.CertificateField> = [
  { name: "countryName", value: "BR" },
  { name: "organizationName", value: "etd-service" },
  { name: "commonName", value: "SIMULADOR DE AUTORIZADOR - SEM VALOR FISCAL" }
]

const make = (): NoteSigner => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  })
  const certificate = forge.pki.createCertificate()
  certificate.publicKey = forge.pki.publicKeyFromPem(publicKey)
  // A positive serial with no leading zero byte (forge writes the hex into the DER integer as it is).
  const serial = randomBytes(16)
  serial[0] = (serial[0]! & 0x7f) | 0x10
  certificate.serialNumber = serial.toString("hex")
  certificate.validity.notBefore = new Date(Date.now() - 3_600_000)
  certificate.validity.notAfter = new Date(Date.now() + 3650 * 86_400_000)
  certificate.setSubject(SUBJECT)
  certificate.setIssuer(SUBJECT)
  certificate.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, nonRepudiation: true, critical: true }
  ])
  certificate.sign(forge.pki.privateKeyFromPem(privateKey), forge.md.sha256.create())
  return { privateKeyPem: privateKey, certificatePem: forge.pki.certificateToPem(certificate) }
}

let signer: NoteSigner | undefined

export const simulatorSigner = (): NoteSigner => (signer ??= make())
