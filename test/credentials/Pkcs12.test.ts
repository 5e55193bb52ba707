import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { createPrivateKey, createPublicKey, sign, verify, X509Certificate } from "node:crypto"
import { readFileSync } from "node:fs"
import { checkCertificate, type ParsedCertificate, parsePkcs12 } from "../../src/credentials/Pkcs12.js"
import { makePkcs12, packWithForge, type Pkcs12Encryption, type TestPkcs12 } from "../support/certificates.js"

const PASSWORD = "s3nha-do-certificado"
const CNPJ = "11222333000181"
const CN = `EMPRESA TESTE LTDA:${CNPJ}`

// Generating a bundle costs a few openssl processes; share the common one.
let standard: TestPkcs12 | undefined
// The end-entity certificate alone: these tests read bundles, their chain is CertificateChain.test.ts's.
const standardBundle =
  (): TestPkcs12 => (standard ??= makePkcs12({ cn: CN, cnpjOid: CNPJ, password: PASSWORD, leafOnly: true }))

const expectPkcs12Failure = (pfx: Uint8Array, password: string) =>
  Effect.flip(parsePkcs12(pfx, password)).pipe(
    Effect.tap((error) =>
      Effect.sync(() => {
        expect(error._tag).toBe("Pkcs12Error")
        // Nothing the caller supplied may be echoed back.
        const rendered = `${error.message} ${JSON.stringify(error)} ${String(error)}`
        if (password.length > 0) expect(rendered).not.toContain(password)
      })
    )
  )

const normalizePem = (pem: string): string => pem.replace(/\r\n/g, "\n").trim()

describe("parsePkcs12", () => {
  it.effect("reads an OpenSSL 3 default bundle (PBES2, AES-256-CBC, SHA-256 MAC)", () =>
    Effect.gen(function*() {
      const bundle = standardBundle()
      const parsed = yield* parsePkcs12(bundle.pfx, PASSWORD)

      expect(parsed.subject).toBe(`CN=${CN},OU=Certificado PJ A1,O=ICP-Brasil,C=BR`)
      expect(parsed.subject).toBe(bundle.subject)
      expect(parsed.issuer).toBe("CN=AC TESTE ETD v1,OU=Teste,O=ICP-Brasil,C=BR")
      expect(parsed.issuer).toBe(bundle.issuer)
      expect(parsed.serialNumber).toBe(bundle.serialNumber)
      expect(parsed.serialNumber).toMatch(/^[0-9a-f]+$/)
      expect(parsed.fingerprintSha256).toBe(bundle.fingerprintSha256)
      expect(parsed.fingerprintSha256).toMatch(/^[0-9a-f]{64}$/)
      expect(parsed.taxId).toBe(CNPJ)
      expect(normalizePem(parsed.certificatePem)).toBe(normalizePem(bundle.certificatePem))

      const x509 = new X509Certificate(bundle.certificatePem)
      expect(parsed.notBefore.getTime()).toBe(new Date(x509.validFrom).getTime())
      expect(parsed.notAfter.getTime()).toBe(new Date(x509.validTo).getTime())
    }))

  it.effect("returns a usable PKCS#8 private key matching the certificate, hidden behind Redacted", () =>
    Effect.gen(function*() {
      const parsed = yield* parsePkcs12(standardBundle().pfx, PASSWORD)
      const pem = Redacted.value(parsed.privateKeyPem)
      expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/)
      expect(String(parsed.privateKeyPem)).not.toContain("PRIVATE KEY")
      expect(JSON.stringify(parsed)).not.toContain("PRIVATE KEY")

      const data = Buffer.from("<infNFSe>assinar</infNFSe>")
      const signature = sign("sha256", data, createPrivateKey(pem))
      expect(verify("sha256", data, createPublicKey(parsed.certificatePem), signature)).toBe(true)
    }))

  it.effect("escapes names per RFC 4514 and keeps UTF-8 text", () =>
    Effect.gen(function*() {
      const bundle = makePkcs12({ cn: `ACME, COMÉRCIO + CIA LTDA:${CNPJ}`, cnpjOid: CNPJ, password: PASSWORD })
      const parsed = yield* parsePkcs12(bundle.pfx, PASSWORD)
      expect(parsed.subject).toBe(`CN=ACME\\, COMÉRCIO \\+ CIA LTDA:${CNPJ},OU=Certificado PJ A1,O=ICP-Brasil,C=BR`)
      expect(parsed.taxId).toBe(CNPJ)
    }))

  it.effect("reports the serial number as openssl does, without DER sign padding", () =>
    Effect.gen(function*() {
      // High bit set: DER stores 00 F1 ..., the number is F1 ...
      const bundle = makePkcs12({ cn: CN, password: PASSWORD, serialHex: "F1E2D3C4B5A6978800" })
      const parsed = yield* parsePkcs12(bundle.pfx, PASSWORD)
      expect(bundle.serialNumber).toBe("f1e2d3c4b5a6978800")
      expect(parsed.serialNumber).toBe("f1e2d3c4b5a6978800")
    }))

  const encryptions: ReadonlyArray<Pkcs12Encryption> = ["default", "legacy", "3des"]
  for (const encryption of encryptions) {
    it.effect(`reads a bundle exported by openssl with encryption "${encryption}"`, () =>
      Effect.gen(function*() {
        const bundle = makePkcs12({ cn: CN, cnpjOid: CNPJ, password: PASSWORD, encryption, includeChain: true })
        const parsed = yield* parsePkcs12(bundle.pfx, PASSWORD)
        expect(parsed.fingerprintSha256).toBe(bundle.fingerprintSha256)
        const error = yield* expectPkcs12Failure(bundle.pfx, "senha-errada")
        expect(error.reason).toBe("wrong_password")
      }))
  }

  for (const algorithm of ["aes256", "aes128", "3des"] as const) {
    it.effect(`reads a bundle built by node-forge with ${algorithm}`, () =>
      Effect.gen(function*() {
        const bundle = standardBundle()
        const pfx = packWithForge({
          privateKeyPem: bundle.privateKeyPem,
          certificatePems: [bundle.certificatePem],
          password: PASSWORD,
          algorithm
        })
        const parsed = yield* parsePkcs12(pfx, PASSWORD)
        expect(parsed.fingerprintSha256).toBe(bundle.fingerprintSha256)
      }))
  }

  // forge feeds PBKDF2 the wrong bytes for non-ASCII passwords; Pkcs12Bundle.ts works around it.
  for (const encryption of ["default", "3des"] as const) {
    it.effect(`accepts a non-ASCII password (${encryption})`, () =>
      Effect.gen(function*() {
        const password = "Açaí-São_Paulo-€"
        const bundle = makePkcs12({ cn: CN, cnpjOid: CNPJ, password, encryption })
        const parsed = yield* parsePkcs12(bundle.pfx, password)
        expect(parsed.taxId).toBe(CNPJ)
        const wrong = yield* expectPkcs12Failure(bundle.pfx, "Acai-Sao_Paulo-€")
        expect(wrong.reason).toBe("wrong_password")
      }))
  }

  // Decrypting with forge's wrong key occasionally yields valid padding, so the failure shows up as
  // unreadable ASN.1 instead; these two OpenSSL bundles (one in ~130 made) fail that way.
  for (const fixture of ["non-ascii-password-a.p12", "non-ascii-password-b.p12"]) {
    it.effect(`accepts a non-ASCII password when forge's wrong key happens to unpad cleanly (${fixture})`, () =>
      Effect.gen(function*() {
        const pfx = new Uint8Array(readFileSync(new URL(`./fixtures/${fixture}`, import.meta.url)))
        const parsed = yield* parsePkcs12(pfx, "Açaí-São_Paulo-€")
        expect(parsed.subject).toBe("CN=Non-ASCII password bundle,O=Test fixture,C=BR")
        const wrong = yield* expectPkcs12Failure(pfx, "Acai-Sao_Paulo-€")
        expect(wrong.reason).toBe("wrong_password")
      }))
  }

  it.effect("accepts an empty password", () =>
    Effect.gen(function*() {
      const bundle = makePkcs12({ cn: CN, cnpjOid: CNPJ, password: "" })
      const parsed = yield* parsePkcs12(bundle.pfx, "")
      expect(parsed.taxId).toBe(CNPJ)
    }))

  it.effect("refuses a wrong password without echoing it", () =>
    Effect.gen(function*() {
      const error = yield* expectPkcs12Failure(standardBundle().pfx, "a-wrong-password-123")
      expect(error.reason).toBe("wrong_password")
      expect(error.message).toBe("The PKCS#12 password is incorrect")
    }))

  it.effect("refuses garbage, empty and truncated input as malformed", () =>
    Effect.gen(function*() {
      const pfx = standardBundle().pfx
      const inputs = [
        new Uint8Array(0),
        new Uint8Array(Buffer.from("this is not a pfx file at all")),
        new Uint8Array(Array.from({ length: 512 }, (_, i) => (i * 7919) % 256)),
        pfx.subarray(0, pfx.length / 2),
        new Uint8Array(Buffer.from(standardBundle().certificatePem))
      ]
      for (const input of inputs) {
        const error = yield* expectPkcs12Failure(input, PASSWORD)
        expect(error.reason).toBe("malformed")
      }
    }))

  it.effect("picks the end-entity certificate from an OpenSSL chain bundle", () =>
    Effect.gen(function*() {
      const bundle = makePkcs12({ cn: CN, cnpjOid: CNPJ, password: PASSWORD, includeChain: true })
      const parsed = yield* parsePkcs12(bundle.pfx, PASSWORD)
      expect(parsed.subject).toBe(bundle.subject)
      expect(parsed.fingerprintSha256).toBe(bundle.fingerprintSha256)
    }))

  it.effect("picks the end-entity certificate when the CA certificate comes first", () =>
    Effect.gen(function*() {
      const bundle = standardBundle()
      const pfx = packWithForge({
        privateKeyPem: bundle.privateKeyPem,
        certificatePems: [bundle.caCertificatePem, bundle.certificatePem],
        password: PASSWORD
      })
      const parsed = yield* parsePkcs12(pfx, PASSWORD)
      expect(parsed.fingerprintSha256).toBe(bundle.fingerprintSha256)
      expect(parsed.taxId).toBe(CNPJ)
    }))

  it.effect("refuses bundles without a certificate for the key, or without a key", () =>
    Effect.gen(function*() {
      const bundle = standardBundle()
      const keyOnly = packWithForge({ privateKeyPem: bundle.privateKeyPem, certificatePems: [], password: PASSWORD })
      expect((yield* expectPkcs12Failure(keyOnly, PASSWORD)).reason).toBe("no_certificate")

      const certOnly = packWithForge({ certificatePems: [bundle.certificatePem], password: PASSWORD })
      expect((yield* expectPkcs12Failure(certOnly, PASSWORD)).reason).toBe("no_private_key")

      // The end-entity key next to only someone else's (the CA's) certificate.
      const mismatched = packWithForge({
        privateKeyPem: bundle.privateKeyPem,
        certificatePems: [bundle.caCertificatePem],
        password: PASSWORD
      })
      expect((yield* expectPkcs12Failure(mismatched, PASSWORD)).reason).toBe("no_certificate")
    }))
})

describe("tax id extraction", () => {
  const taxIdOf = (bundle: TestPkcs12) => Effect.map(parsePkcs12(bundle.pfx, PASSWORD), (p) => p.taxId)

  it.effect("falls back to the CN suffix when there is no 2.16.76.1.3.3", () =>
    Effect.gen(function*() {
      expect(yield* taxIdOf(makePkcs12({ cn: CN, password: PASSWORD }))).toBe(CNPJ)
    }))

  it.effect("prefers 2.16.76.1.3.3 over the CN suffix", () =>
    Effect.gen(function*() {
      const bundle = makePkcs12({ cn: "EMPRESA TESTE LTDA:99888777000166", cnpjOid: CNPJ, password: PASSWORD })
      expect(yield* taxIdOf(bundle)).toBe(CNPJ)
    }))

  const oidTypes = ["UTF8", "PRINTABLESTRING", "IA5STRING", "OCTETSTRING", "OCTETSTRING(PRINTABLESTRING)"] as const
  for (const cnpjOidType of oidTypes) {
    it.effect(`reads 2.16.76.1.3.3 encoded as ${cnpjOidType}`, () =>
      Effect.gen(function*() {
        const bundle = makePkcs12({ cn: "EMPRESA TESTE LTDA", cnpjOid: CNPJ, cnpjOidType, password: PASSWORD })
        expect(yield* taxIdOf(bundle)).toBe(CNPJ)
      }))
  }

  it.effect("accepts alphanumeric CNPJs, in the OID and in the CN", () =>
    Effect.gen(function*() {
      const fromOid = makePkcs12({ cn: "EMPRESA NOVA LTDA", cnpjOid: "12ABC34501DE35", password: PASSWORD })
      expect(yield* taxIdOf(fromOid)).toBe("12ABC34501DE35")
      const fromCn = makePkcs12({ cn: "EMPRESA NOVA LTDA:12ABC34501DE35", password: PASSWORD })
      expect(yield* taxIdOf(fromCn)).toBe("12ABC34501DE35")
    }))

  it.effect("falls back to the e-CPF holder data (2.16.76.1.3.1, CPF at positions 9-19)", () =>
    Effect.gen(function*() {
      const personData = "15081980" + "12345678909" + "00000000000" + "000000000000000" + "000000"
      const bundle = makePkcs12({ cn: "FULANO DE TAL", personDataOid: personData, password: PASSWORD })
      expect(yield* taxIdOf(bundle)).toBe("12345678909")
    }))

  it.effect("ignores zero-filled values and reports null when nothing identifies the taxpayer", () =>
    Effect.gen(function*() {
      expect(yield* taxIdOf(makePkcs12({ cn: "EMPRESA SEM CNPJ", password: PASSWORD }))).toBeNull()
      const zeros = makePkcs12({ cn: "EMPRESA ZERADA", cnpjOid: "00000000000000", password: PASSWORD })
      expect(yield* taxIdOf(zeros)).toBeNull()
    }))
})

describe("checkCertificate", () => {
  const DAY = 86_400_000
  const notBefore = new Date("2026-01-01T00:00:00Z")
  const notAfter = new Date("2027-01-01T00:00:00Z")
  const cert: Pick<ParsedCertificate, "notBefore" | "notAfter" | "taxId"> = { notBefore, notAfter, taxId: CNPJ }

  const rejection = (
    parsed: Pick<ParsedCertificate, "notBefore" | "notAfter" | "taxId">,
    now: Date,
    tenantTaxId = CNPJ
  ) => Effect.map(Effect.flip(checkCertificate(parsed, { now, tenantTaxId })), (e) => e.reason)

  it.effect("accepts a valid certificate of the tenant, ignoring punctuation and bounds inclusive", () =>
    Effect.gen(function*() {
      expect(yield* checkCertificate(cert, { now: new Date("2026-06-01T00:00:00Z"), tenantTaxId: CNPJ })).toBe(cert)
      yield* checkCertificate(cert, { now: notBefore, tenantTaxId: "11.222.333/0001-81" })
      yield* checkCertificate(cert, { now: notAfter, tenantTaxId: " 11222333000181 " })
      const alnum = { ...cert, taxId: "12ABC34501DE35" }
      yield* checkCertificate(alnum, { now: notBefore, tenantTaxId: "12.abc.345/01de-35" })
    }))

  it.effect("rejects expired, not-yet-valid, other-tenant and tax-id-less certificates", () =>
    Effect.gen(function*() {
      expect(yield* rejection(cert, new Date(notAfter.getTime() + 1))).toBe("expired")
      expect(yield* rejection(cert, new Date(notBefore.getTime() - DAY))).toBe("not_yet_valid")
      expect(yield* rejection(cert, new Date("2026-06-01T00:00:00Z"), "99.888.777/0001-66")).toBe("tax_id_mismatch")
      expect(yield* rejection({ ...cert, taxId: null }, new Date("2026-06-01T00:00:00Z"))).toBe("tax_id_missing")
    }))

  it.effect("rejects a certificate that really is expired, against the wall clock", () =>
    Effect.gen(function*() {
      const bundle = makePkcs12({
        cn: CN,
        cnpjOid: CNPJ,
        password: PASSWORD,
        notBefore: new Date(Date.now() - 400 * DAY),
        notAfter: new Date(Date.now() - 35 * DAY)
      })
      const parsed = yield* parsePkcs12(bundle.pfx, PASSWORD)
      expect(yield* rejection(parsed, new Date())).toBe("expired")

      const future = makePkcs12({
        cn: CN,
        cnpjOid: CNPJ,
        password: PASSWORD,
        notBefore: new Date(Date.now() + 10 * DAY),
        days: 365
      })
      expect(yield* rejection(yield* parsePkcs12(future.pfx, PASSWORD), new Date())).toBe("not_yet_valid")
    }))
})
