/**
 * Certificates come from many issuers and tools (SPEC §8): every shape below is made at test time
 * with the `openssl` CLI and uploaded through `POST /v1/tenants/{id}/credentials`, as JSON and as
 * multipart. A valid one is accepted with the tenant's tax id; anything else gets its 4xx code,
 * never a 500.
 *
 * The keys (four RSA, one RSA-PSS, one EC) are generated once and shared; each case gets its own
 * tenant and CNPJ, because a tax id proven by one tenant's certificate is that tenant's alone.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { execFileSync } from "node:child_process"
import { randomBytes, X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, it as vitestIt } from "vitest"
import { packWithForge } from "../support/certificates.js"
import { markEmailVerified, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { alphanumericCnpj, cnpj } from "../support/taxIds.js"
import { client, makeTestApp, testDatabases } from "../support/TestApp.js"

const DAY = 86_400_000

const opensslAvailable = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

type Pbe = "aes" | "legacy" | "3des"

// How `openssl pkcs12 -export` encrypts: the OpenSSL 3 default (PBES2: PBKDF2/HMAC-SHA-256 +
// AES-256-CBC, SHA-256 MAC), OpenSSL 1.x's (3DES key, RC2-40 certificates, SHA-1 MAC), and
// what Windows and most Brazilian CAs export (3DES throughout, SHA-1 MAC).
const pbeArgs: Record<Pbe, ReadonlyArray<string>> = {
  aes: [],
  legacy: ["-legacy"],
  "3des": ["-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-macalg", "sha1"]
}

interface IssueOptions {
  /** `-subj` form; "/" is the empty subject. */
  readonly subject: string
  readonly key: string
  readonly issuer: "root" | "intermediate"
  /** `basicConstraints=critical,CA:FALSE`; absent when false. */
  readonly basicConstraints: boolean
  /** Value of the subjectAltName otherName 2.16.76.1.3.3. */
  readonly sanCnpj?: string
  /** No extension at all (keyUsage and SAN included). */
  readonly bare?: boolean
  readonly notBefore?: Date
  readonly notAfter?: Date
  /** The CA's signature digest; default SHA-256. */
  readonly md?: "sha256" | "sha512"
}

const CA_CONFIG = `
[ ca ]
default_ca = test_ca
[ test_ca ]
database = index.txt
serial = serial
new_certs_dir = .
default_md = sha256
policy = anything
unique_subject = no
email_in_dn = no
[ anything ]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = optional
`

// GeneralizedTime, which `openssl ca -startdate/-enddate` accepts for any year.
const asn1Time = (d: Date): string => d.toISOString().replace(/[-:T]/g, "").replace(/\.\d{3}Z$/, "Z")

/** One scratch directory holding the keys and CAs, and the openssl invocations that use them. */
class Workbench {
  private count = 0
  constructor(readonly dir: string) {}

  openssl(args: ReadonlyArray<string>, env: Record<string, string> = {}): void {
    execFileSync("openssl", args, {
      cwd: this.dir,
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
  }

  read(file: string): Buffer {
    return readFileSync(join(this.dir, file))
  }

  write(file: string, content: string): void {
    writeFileSync(join(this.dir, file), content)
  }

  private next(prefix: string): string {
    this.count += 1
    return `${prefix}${this.count}`
  }

  setUp(): void {
    this.write("ca.cnf", CA_CONFIG)
    this.write("index.txt", "")
    this.write("serial", `${randomBytes(8).toString("hex")}\n`)
    for (const key of ["root", "intermediate", "leaf", "other"]) this.openssl(["genrsa", "-out", `${key}.key`, "2048"])
    this.openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ec.key"])
    this.openssl(["genpkey", "-algorithm", "RSA-PSS", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "pss.key"])
    const ca = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]
    const rootSubject = "/C=BR/O=ICP-Brasil/CN=AC Raiz Teste"
    this.openssl([
      "req",
      "-x509",
      "-new",
      "-key",
      "root.key",
      "-days",
      "3650",
      "-subj",
      rootSubject,
      ...ca,
      "-out",
      "root.pem"
    ])
    this.write(
      "intermediate.ext",
      "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n"
    )
    const intermediateSubject = "/C=BR/O=ICP-Brasil/CN=AC Intermediaria Teste"
    this.openssl(["req", "-new", "-key", "intermediate.key", "-subj", intermediateSubject, "-out", "intermediate.csr"])
    this.sign({
      csr: "intermediate.csr",
      issuer: "root",
      ext: "intermediate.ext",
      out: "intermediate.pem",
      notBefore: new Date(Date.now() - DAY),
      notAfter: new Date(Date.now() + 3000 * DAY)
    })
    this.write("chain.pem", `${this.read("intermediate.pem")}${this.read("root.pem")}`)
  }

  private sign(
    o: { csr: string; issuer: string; ext: string | null; out: string; notBefore: Date; notAfter: Date; md?: string }
  ) {
    this.openssl([
      "ca",
      "-batch",
      "-config",
      "ca.cnf",
      "-md",
      o.md ?? "sha256",
      "-cert",
      `${o.issuer}.pem`,
      "-keyfile",
      `${o.issuer}.key`,
      "-in",
      o.csr,
      "-out",
      o.out,
      "-notext",
      "-utf8",
      "-preserveDN",
      "-startdate",
      asn1Time(o.notBefore),
      "-enddate",
      asn1Time(o.notAfter),
      ...(o.ext === null ? [] : ["-extfile", o.ext])
    ])
  }

  /** Issues a certificate; returns its PEM file name. */
  issue(options: IssueOptions): string {
    const name = this.next("cert")
    this.openssl(["req", "-new", "-key", options.key, "-utf8", "-subj", options.subject, "-out", `${name}.csr`])
    const lines = options.bare === true ? [] : [
      ...(options.basicConstraints ? ["basicConstraints=critical,CA:FALSE"] : []),
      "keyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment",
      ...(options.sanCnpj === undefined ? [] : [
        "subjectAltName=@alt_names",
        "[ alt_names ]",
        `otherName.1 = 2.16.76.1.3.3;UTF8:${options.sanCnpj}`,
        "email.1 = certificados@example.com"
      ])
    ]
    if (lines.length > 0) this.write(`${name}.ext`, `${lines.join("\n")}\n`)
    const notBefore = options.notBefore ?? new Date(Date.now() - 3_600_000)
    this.sign({
      csr: `${name}.csr`,
      issuer: options.issuer,
      ext: lines.length > 0 ? `${name}.ext` : null,
      out: `${name}.pem`,
      notBefore,
      notAfter: options.notAfter ?? new Date(notBefore.getTime() + 365 * DAY),
      md: options.md
    })
    return `${name}.pem`
  }

  /** `openssl pkcs12 -export`; `key`/`cert` null mean `-nocerts`/`-nokeys`. */
  export(
    options: { key: string | null; cert: string | null; certfile?: string; pbe: Pbe; password: string }
  ): Uint8Array {
    const out = `${this.next("bundle")}.p12`
    this.openssl(
      [
        "pkcs12",
        "-export",
        ...(options.key === null ? ["-nokeys"] : ["-inkey", options.key]),
        ...(options.cert === null ? ["-nocerts"] : ["-in", options.cert]),
        ...(options.certfile === undefined ? [] : ["-certfile", options.certfile]),
        "-name",
        "certificado A1",
        "-passout",
        "env:ETD_P12_PASSWORD",
        ...pbeArgs[options.pbe],
        "-out",
        out
      ],
      { ETD_P12_PASSWORD: options.password }
    )
    return new Uint8Array(this.read(out))
  }

  der(pem: string): Uint8Array {
    const out = `${this.next("der")}.der`
    this.openssl(["x509", "-in", pem, "-outform", "DER", "-out", out])
    return new Uint8Array(this.read(out))
  }
}

interface Upload {
  readonly pfx: Uint8Array
  /** What the client sends, not necessarily the bundle's password. */
  readonly password: string
  readonly tenantTaxId: string
  /** For accepted uploads: the certificate the service must have picked. */
  readonly certificatePem?: string
}

type Expected = { readonly status: 201 } | { readonly status: 422; readonly code: string; readonly mentions?: string }

interface Case {
  readonly name: string
  readonly expected: Expected
  readonly make: (bench: Workbench) => Upload
}

const BUNDLE_PASSWORD = `pfx-${randomBytes(6).toString("hex")}`
const company = "EMPRESA EXEMPLO LTDA"
// In -subj, "/" separates RDNs, so one inside the CN (a punctuated CNPJ) is escaped.
const subjectOf = (cn: string) => `/C=BR/O=ICP-Brasil/OU=Certificado PJ A1/CN=${cn.replace(/\//g, "\\/")}`

/** An ICP-Brasil-like leaf under the intermediate, CNPJ in the SAN and after the CN, exported. */
const accepted = (
  name: string,
  shape: { pbe: Pbe; basicConstraints: boolean; chain?: boolean; password?: string; taxId?: () => string }
): Case => ({
  name,
  expected: { status: 201 },
  make: (bench) => {
    const taxId = (shape.taxId ?? cnpj)()
    const cert = bench.issue({
      subject: subjectOf(`${company}:${taxId}`),
      key: "leaf.key",
      issuer: "intermediate",
      basicConstraints: shape.basicConstraints,
      sanCnpj: taxId
    })
    const password = shape.password ?? BUNDLE_PASSWORD
    const pfx = bench.export({
      key: "leaf.key",
      cert,
      certfile: shape.chain === true ? "chain.pem" : undefined,
      pbe: shape.pbe,
      password
    })
    return { pfx, password, tenantTaxId: taxId, certificatePem: bench.read(cert).toString() }
  }
})

/** A leaf of the given shape in a default (AES) bundle. */
const leaf = (
  name: string,
  expected: Expected,
  shape: (taxId: string) => Omit<IssueOptions, "key" | "issuer" | "basicConstraints"> & Partial<IssueOptions>
): Case => ({
  name,
  expected,
  make: (bench) => {
    const taxId = cnpj()
    const cert = bench.issue({ key: "leaf.key", issuer: "intermediate", basicConstraints: false, ...shape(taxId) })
    const pfx = bench.export({ key: "leaf.key", cert, pbe: "aes", password: BUNDLE_PASSWORD })
    return { pfx, password: BUNDLE_PASSWORD, tenantTaxId: taxId, certificatePem: bench.read(cert).toString() }
  }
})

const refused = (code: string, mentions?: string): Expected => ({
  status: 422,
  code,
  ...(mentions === undefined ? {} : { mentions })
})

const cases: ReadonlyArray<Case> = [
  // Encryption × basicConstraints: the 500 of issue 16 was the AES bundle without it.
  accepted("OpenSSL 3 default (PBKDF2 + AES-256), no basicConstraints", { pbe: "aes", basicConstraints: false }),
  accepted("OpenSSL 3 default (PBKDF2 + AES-256), basicConstraints CA:FALSE", { pbe: "aes", basicConstraints: true }),
  accepted("legacy 3DES key + RC2-40 certificates (-legacy), no basicConstraints", {
    pbe: "legacy",
    basicConstraints: false
  }),
  accepted("legacy 3DES key + RC2-40 certificates (-legacy), basicConstraints CA:FALSE", {
    pbe: "legacy",
    basicConstraints: true
  }),
  accepted("3DES throughout with a SHA-1 MAC (Windows), no basicConstraints", { pbe: "3des", basicConstraints: false }),
  // Chains: root + intermediate after the leaf (-certfile); the leaf must be the one kept.
  accepted("chain root + intermediate + leaf, AES, leaf without basicConstraints", {
    pbe: "aes",
    basicConstraints: false,
    chain: true
  }),
  accepted("chain root + intermediate + leaf, legacy, leaf with basicConstraints", {
    pbe: "legacy",
    basicConstraints: true,
    chain: true
  }),
  accepted("empty password, AES", { pbe: "aes", basicConstraints: true, password: "" }),
  accepted("empty password, legacy", { pbe: "legacy", basicConstraints: false, password: "" }),
  accepted("alphanumeric CNPJ in the SAN and the CN", { pbe: "aes", basicConstraints: true, taxId: alphanumericCnpj }),
  // Where the CNPJ is, and subjects that are unusual but valid.
  leaf(
    "CNPJ only in the SAN (CN without a suffix)",
    { status: 201 },
    (taxId) => ({ subject: subjectOf(company), sanCnpj: taxId })
  ),
  leaf("CNPJ only after the CN (no SAN)", { status: 201 }, (taxId) => ({ subject: subjectOf(`${company}:${taxId}`) })),
  leaf("CNPJ only after the CN, with punctuation", { status: 201 }, (taxId) => ({
    subject: subjectOf(
      `${company}:${taxId.slice(0, 2)}.${taxId.slice(2, 5)}.${taxId.slice(5, 8)}/${taxId.slice(8, 12)}-${
        taxId.slice(12)
      }`
    )
  })),
  leaf(
    "no extensions at all, CNPJ after the CN",
    { status: 201 },
    (taxId) => ({ subject: subjectOf(`${company}:${taxId}`), bare: true })
  ),
  leaf("signed with SHA-512 (as ICP-Brasil's v5 chain)", { status: 201 }, (taxId) => ({
    subject: subjectOf(`${company}:${taxId}`),
    sanCnpj: taxId,
    md: "sha512"
  })),
  leaf(
    "no CN (CNPJ in the SAN)",
    { status: 201 },
    (taxId) => ({ subject: "/C=BR/O=EMPRESA EXEMPLO LTDA", sanCnpj: taxId })
  ),
  leaf("empty subject (CNPJ in the SAN)", { status: 201 }, (taxId) => ({ subject: "/", sanCnpj: taxId })),
  {
    name: "alphanumeric CNPJ only after the CN",
    expected: { status: 201 },
    make: (bench) => {
      const taxId = alphanumericCnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "leaf.key",
        issuer: "root",
        basicConstraints: false
      })
      const pfx = bench.export({ key: "leaf.key", cert, pbe: "legacy", password: BUNDLE_PASSWORD })
      return { pfx, password: BUNDLE_PASSWORD, tenantTaxId: taxId, certificatePem: bench.read(cert).toString() }
    }
  },
  // Refusals.
  leaf("no CNPJ anywhere", refused("certificate_tax_id_mismatch"), () => ({ subject: subjectOf(company) })),
  leaf("another company's CNPJ", refused("certificate_tax_id_mismatch"), () => {
    const other = cnpj()
    return { subject: subjectOf(`${company}:${other}`), sanCnpj: other }
  }),
  leaf("expired", refused("certificate_expired"), (taxId) => ({
    subject: subjectOf(`${company}:${taxId}`),
    sanCnpj: taxId,
    notBefore: new Date(Date.now() - 400 * DAY),
    notAfter: new Date(Date.now() - DAY)
  })),
  leaf("not yet valid", refused("certificate_not_yet_valid"), (taxId) => ({
    subject: subjectOf(`${company}:${taxId}`),
    sanCnpj: taxId,
    notBefore: new Date(Date.now() + 10 * DAY),
    notAfter: new Date(Date.now() + 400 * DAY)
  })),
  ...(["aes", "legacy", "3des"] as const).map((pbe): Case => ({
    name: `wrong password (${pbe})`,
    expected: refused("certificate_password_incorrect"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "leaf.key",
        issuer: "intermediate",
        basicConstraints: true
      })
      return {
        pfx: bench.export({ key: "leaf.key", cert, pbe, password: BUNDLE_PASSWORD }),
        password: `${BUNDLE_PASSWORD}x`,
        tenantTaxId: taxId
      }
    }
  })),
  {
    name: "empty password sent for a protected bundle",
    expected: refused("certificate_password_incorrect"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "leaf.key",
        issuer: "intermediate",
        basicConstraints: false
      })
      return {
        pfx: bench.export({ key: "leaf.key", cert, pbe: "aes", password: BUNDLE_PASSWORD }),
        password: "",
        tenantTaxId: taxId
      }
    }
  },
  {
    // `openssl pkcs12 -export` refuses to pair a key with a certificate it does not match, so
    // node-forge packs this one (from openssl's key and certificate).
    name: "key matching none of the certificates",
    expected: refused("invalid_certificate", "no certificate matching its private key"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "leaf.key",
        issuer: "intermediate",
        basicConstraints: false
      })
      const pfx = packWithForge({
        privateKeyPem: bench.read("other.key").toString(),
        certificatePems: [bench.read(cert).toString(), bench.read("intermediate.pem").toString()],
        password: BUNDLE_PASSWORD
      })
      return { pfx, password: BUNDLE_PASSWORD, tenantTaxId: taxId }
    }
  },
  {
    name: "a key without any certificate (-nocerts)",
    expected: refused("invalid_certificate", "no certificate matching its private key"),
    make: (bench) => ({
      pfx: bench.export({ key: "leaf.key", cert: null, pbe: "aes", password: BUNDLE_PASSWORD }),
      password: BUNDLE_PASSWORD,
      tenantTaxId: cnpj()
    })
  },
  {
    name: "certificates without the key (-nokeys)",
    expected: refused("invalid_certificate", "no RSA private key"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "leaf.key",
        issuer: "intermediate",
        basicConstraints: false,
        sanCnpj: taxId
      })
      return {
        pfx: bench.export({ key: null, cert, certfile: "chain.pem", pbe: "aes", password: BUNDLE_PASSWORD }),
        password: BUNDLE_PASSWORD,
        tenantTaxId: taxId
      }
    }
  },
  {
    name: "an EC key and certificate (A1 certificates are RSA)",
    expected: refused("invalid_certificate", "no RSA private key"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "ec.key",
        issuer: "intermediate",
        basicConstraints: true,
        sanCnpj: taxId
      })
      return {
        pfx: bench.export({ key: "ec.key", cert, certfile: "chain.pem", pbe: "aes", password: BUNDLE_PASSWORD }),
        password: BUNDLE_PASSWORD,
        tenantTaxId: taxId
      }
    }
  },
  {
    // forge reads the key but not a certificate whose key is RSA-PSS, so no certificate matches.
    name: "an RSA-PSS key and certificate",
    expected: refused("invalid_certificate"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "pss.key",
        issuer: "intermediate",
        basicConstraints: true,
        sanCnpj: taxId
      })
      return {
        pfx: bench.export({ key: "pss.key", cert, pbe: "aes", password: BUNDLE_PASSWORD }),
        password: BUNDLE_PASSWORD,
        tenantTaxId: taxId
      }
    }
  },
  {
    // Hand-edited after signing: DER still reads, the notBefore UTCTime holds letters. Unchecked,
    // its Invalid Date passed both validity comparisons and failed later, when stored.
    name: "a validity date that is not a date",
    expected: refused("invalid_certificate"),
    make: (bench) => {
      const taxId = cnpj()
      const cert = bench.issue({
        subject: subjectOf(`${company}:${taxId}`),
        key: "leaf.key",
        issuer: "intermediate",
        basicConstraints: true,
        sanCnpj: taxId
      })
      const der = Buffer.from(bench.der(cert))
      der.write("AAAAAAAAAAAAZ", der.indexOf(Buffer.from([0x17, 0x0d])) + 2, "latin1")
      const pem = `-----BEGIN CERTIFICATE-----\n${
        der.toString("base64").replace(/.{64}/g, "$&\n")
      }\n-----END CERTIFICATE-----\n`
      const pfx = packWithForge({
        privateKeyPem: bench.read("leaf.key").toString(),
        certificatePems: [pem],
        password: BUNDLE_PASSWORD
      })
      return { pfx, password: BUNDLE_PASSWORD, tenantTaxId: taxId }
    }
  },
  {
    name: "a PEM certificate instead of a PKCS#12",
    expected: refused("invalid_certificate"),
    make: (bench) => ({
      pfx: new Uint8Array(bench.read("intermediate.pem")),
      password: BUNDLE_PASSWORD,
      tenantTaxId: cnpj()
    })
  },
  {
    name: "a DER certificate instead of a PKCS#12",
    expected: refused("invalid_certificate"),
    make: (bench) => ({ pfx: bench.der("intermediate.pem"), password: BUNDLE_PASSWORD, tenantTaxId: cnpj() })
  },
  {
    name: "a PEM private key instead of a PKCS#12",
    expected: refused("invalid_certificate"),
    make: (bench) => ({ pfx: new Uint8Array(bench.read("leaf.key")), password: BUNDLE_PASSWORD, tenantTaxId: cnpj() })
  }
]

const uploads = new Map<string, Upload>()
let workDir: string | undefined

/** A registered owner of a new tenant with the given tax id, logged in. */
const ownerOf = (taxId: string) =>
  Effect.gen(function*() {
    const email = uniqueEmail("pfx")
    const api = yield* client()
    const registration = yield* api.auth.register({
      payload: {
        email,
        password: Redacted.make(PASSWORD),
        name: "pfx",
        tenant: { name: "Empresa Exemplo Ltda", tax_id: taxId }
      }
    })
    yield* markEmailVerified(registration.user.id)
    const login = yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    return { tenantId: registration.tenant!.id, session: login.token }
  })

const send = (owner: { tenantId: string; session: string }, upload: Upload, encoding: "json" | "multipart") =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const url = `/v1/tenants/${owner.tenantId}/credentials`
    let request = HttpClientRequest.post(url).pipe(HttpClientRequest.bearerToken(owner.session))
    if (encoding === "json") {
      request = HttpClientRequest.bodyJsonUnsafe(request, {
        pkcs12: Buffer.from(upload.pfx).toString("base64"),
        password: upload.password
      })
    } else {
      const form = new FormData()
      form.append("file", new Blob([upload.pfx], { type: "application/x-pkcs12" }), "certificado.pfx")
      form.append("password", upload.password)
      request = HttpClientRequest.bodyFormData(request, form)
    }
    const response = yield* http.execute(request)
    const text = yield* response.text
    return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> }
  }).pipe(Effect.scoped)

if (!opensslAvailable) {
  describe("OpenSSL-made PKCS#12 bundles", () => {
    vitestIt.skip("skipped: the `openssl` CLI is not installed, and these fixtures are made with it", () => {})
  })
} else {
  beforeAll(() => {
    workDir = mkdtempSync(join(tmpdir(), "etd-openssl-bundles-"))
    const bench = new Workbench(workDir)
    bench.setUp()
    for (const c of cases) uploads.set(c.name, c.make(bench))
  }, 60_000)
  afterAll(() => {
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true })
  })

  for (const database of testDatabases) {
    // One registration per case, all from one address: well past the sign-up limit meant for people.
    layer(makeTestApp(database, { loginRateLimit: { perMinute: 1000 } }), {
      timeout: 120_000,
      excludeTestServices: true
    })(
      `OpenSSL-made PKCS#12 bundles over HTTP (${database})`,
      (it) => {
        for (const c of cases) {
          it.effect(`${c.name} → ${c.expected.status === 201 ? "201" : `${c.expected.status} ${c.expected.code}`}`, () =>
            Effect.gen(function*() {
              const upload = uploads.get(c.name)!
              const owner = yield* ownerOf(upload.tenantTaxId)
              for (const encoding of ["json", "multipart"] as const) {
                const response = yield* send(owner, upload, encoding)
                const where = `${encoding}: ${response.text}`
                if (c.expected.status === 201) {
                  expect(response.status, where).toBe(201)
                  const picked = new X509Certificate(upload.certificatePem!)
                  expect(response.json, where).toMatchObject({
                    object: "credential",
                    status: "active",
                    tax_id: upload.tenantTaxId,
                    fingerprint_sha256: picked.fingerprint256.replace(/:/g, "").toLowerCase(),
                    serial_number: picked.serialNumber.toLowerCase().replace(/^(00)+(?=.)/, "")
                  })
                } else {
                  expect({ status: response.status, code: response.json["code"] }, where).toEqual({
                    status: c.expected.status,
                    code: c.expected.code
                  })
                  expect(typeof response.json["message"]).toBe("string")
                  if (c.expected.mentions !== undefined) {
                    expect(response.json["message"], where).toContain(c.expected.mentions)
                  }
                }
                if (upload.password.length > 0) expect(response.text).not.toContain(upload.password)
              }
            }))
        }
      }
    )
  }
}
