/**
 * Test certificates shaped like ICP-Brasil A1 ones, generated at test time with the `openssl` CLI
 * (no private key is committed). One throw-away hierarchy per test process, shaped like ICP-Brasil's:
 * a root (`testRoot`, which the test configuration trusts through CREDENTIALS_EXTRA_CA_FILE, see
 * `testTrustFile`) issues an intermediate CA (`testCa`), which signs every end-entity certificate;
 * bundles carry the intermediate, as a real export with its certification path does. `openssl ca`
 * is used because, unlike `x509 -req` in OpenSSL 3.0, it accepts arbitrary validity dates, so
 * expired and not-yet-valid certificates need no fake clock.
 */
import forge from "node-forge"
import { execFileSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** `OCTETSTRING(PRINTABLESTRING)`: the DER of a PrintableString inside the OCTET STRING. */
export type OtherNameStringType =
  | "UTF8"
  | "PRINTABLESTRING"
  | "IA5STRING"
  | "OCTETSTRING"
  | "OCTETSTRING(PRINTABLESTRING)"

// openssl's ASN1_generate_nconf syntax for the otherName value.
const otherNameValue = (type: OtherNameStringType, value: string): string => {
  if (type !== "OCTETSTRING(PRINTABLESTRING)") return `${type}:${value}`
  const bytes = Buffer.from(value, "latin1")
  const der = Buffer.concat([Buffer.from([0x13, bytes.length]), bytes])
  return `FORMAT:HEX,OCTETSTRING:${der.toString("hex")}`
}

/**
 * How `openssl pkcs12 -export` encrypts the bundle:
 * - `default`: OpenSSL 3 default, PBES2 (PBKDF2 HMAC-SHA-256, AES-256-CBC), SHA-256 MAC
 * - `legacy`: `-legacy`, 3DES key + RC2-40 certificates, SHA-1 MAC (OpenSSL 1.x default)
 * - `3des`: 3DES for key and certificates, SHA-1 MAC (what Windows and most Brazilian CAs export)
 */
export type Pkcs12Encryption = "default" | "legacy" | "3des"

export interface MakePkcs12Options {
  /** e.g. "EMPRESA TESTE LTDA:11222333000181" */
  readonly cn: string
  readonly organization?: string
  /** Value of the subjectAltName otherName 2.16.76.1.3.3 (CNPJ); omitted when undefined. */
  readonly cnpjOid?: string
  readonly cnpjOidType?: OtherNameStringType
  /** Value of the subjectAltName otherName 2.16.76.1.3.1 (e-CPF holder data). */
  readonly personDataOid?: string
  /**
   * Value of the otherName 2.16.76.1.3.4 (an e-CNPJ's responsible person: birth date, CPF, NIS, RG,
   * issuer); omitted when undefined.
   */
  readonly responsibleOid?: string
  /** Default: one hour ago. */
  readonly notBefore?: Date
  /** Default: `notBefore` + `days`. */
  readonly notAfter?: Date
  /** Default 365. */
  readonly days?: number
  readonly password: string
  /** Also put the root certificate in the bundle (the issuing CA is always there unless `leafOnly`). */
  readonly includeChain?: boolean
  /** Only the end-entity certificate in the bundle, as some exports make it. */
  readonly leafOnly?: boolean
  /** The CA that signs the certificate; default `testCa()`, under the configured test root. */
  readonly issuer?: TestCa
  /** Self-signed, as one `openssl req -x509` makes it: no CA at all. */
  readonly selfSigned?: boolean
  readonly encryption?: Pkcs12Encryption
  /** Hex serial number; default 16 random bytes. */
  readonly serialHex?: string
  /** Generate a new key instead of the one shared by this process's certificates. */
  readonly freshKey?: boolean
}

export interface TestPkcs12 {
  readonly pfx: Uint8Array
  readonly certificatePem: string
  readonly privateKeyPem: string
  /** The issuing CA's certificate and key (the certificate's own when self-signed). */
  readonly caCertificatePem: string
  readonly caPrivateKeyPem: string
  /** As `openssl x509` reports them, normalized: lower-case hex without colons. */
  readonly fingerprintSha256: string
  readonly serialNumber: string
  /** `openssl x509 -nameopt RFC2253`. */
  readonly subject: string
  readonly issuer: string
}

const openssl = (args: ReadonlyArray<string>, options: { cwd: string; env?: Record<string, string> }): string =>
  execFileSync("openssl", args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"]
  })

const scratch = (): string => mkdtempSync(join(tmpdir(), "etd-certs-"))

const genrsa = (dir: string, file: string): string => {
  openssl(["genrsa", "-out", file, "2048"], { cwd: dir })
  return readFileSync(join(dir, file), "utf8")
}

/** A certificate authority of a test hierarchy: its key, its certificate, and the certificates above it. */
export interface TestCa {
  readonly keyPem: string
  readonly certPem: string
  /** Its issuers' certificates up to and including the root; empty for a root. */
  readonly above: ReadonlyArray<string>
}

let root: TestCa | undefined
let ca: TestCa | undefined
let trustFile: string | undefined
let sharedKeyPem: string | undefined

/** A self-signed root CA, valid twenty years. */
export const makeTestRoot = (cn: string): TestCa => {
  const dir = scratch()
  try {
    const keyPem = genrsa(dir, "ca.key")
    openssl(
      [
        "req",
        "-x509",
        "-new",
        "-key",
        "ca.key",
        "-days",
        "7300",
        "-utf8",
        "-subj",
        `/C=BR/O=ICP-Brasil/OU=Teste/CN=${cn}`,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        "-out",
        "ca.pem"
      ],
      { cwd: dir }
    )
    return { keyPem, certPem: readFileSync(join(dir, "ca.pem"), "utf8"), above: [] }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** An intermediate CA under `issuer`; `valid` bounds default to one hour ago until twenty years on. */
export const makeTestIntermediate = (
  cn: string,
  issuer: TestCa,
  valid: {
    readonly notBefore?: Date
    readonly notAfter?: Date
    readonly ca?: boolean
    /** basicConstraints pathLenConstraint: how many CAs may follow it. */
    readonly pathLength?: number
  } = {}
): TestCa => {
  const dir = scratch()
  try {
    const keyPem = genrsa(dir, "sub.key")
    openssl([
      "req",
      "-new",
      "-key",
      "sub.key",
      "-utf8",
      "-subj",
      `/C=BR/O=ICP-Brasil/OU=Teste/CN=${cn}`,
      "-out",
      "sub.csr"
    ], {
      cwd: dir
    })
    writeFileSync(
      join(dir, "ext.cnf"),
      valid.ca === false
        ? "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        : `basicConstraints=critical,CA:TRUE${
          valid.pathLength === undefined ? "" : `,pathlen:${valid.pathLength}`
        }\nkeyUsage=critical,keyCertSign,cRLSign\n`
    )
    const notBefore = valid.notBefore ?? new Date(Date.now() - 3_600_000)
    const certPem = signWithCa(dir, issuer, "sub.csr", {
      notBefore,
      notAfter: valid.notAfter ?? new Date(notBefore.getTime() + 7300 * 86_400_000),
      serialHex: randomSerial()
    })
    return { keyPem, certPem, above: [issuer.certPem, ...issuer.above] }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The root the test configuration trusts (CREDENTIALS_EXTRA_CA_FILE). Kept in memory only. */
export const testRoot = (): TestCa => (root ??= makeTestRoot("AC RAIZ TESTE ETD"))

/** The CA that signs end-entity certificates by default, under `testRoot()`. */
export const testCa = (): TestCa => (ca ??= makeTestIntermediate("AC TESTE ETD v1", testRoot()))

/**
 * A PEM file with `testRoot()`, for CREDENTIALS_EXTRA_CA_FILE. Named by its content, once per
 * process: vitest's workers do not reliably run the exit hooks that would remove it.
 */
export const testTrustFile = (): string => {
  if (trustFile !== undefined) return trustFile
  const pem = testRoot().certPem
  const file = join(tmpdir(), `etd-test-root-${createHash("sha256").update(pem).digest("hex").slice(0, 16)}.pem`)
  writeFileSync(file, pem)
  trustFile = file
  return file
}

const endEntityKey = (dir: string, fresh: boolean): string => {
  if (fresh || sharedKeyPem === undefined) {
    const pem = genrsa(dir, "ee.key")
    if (!fresh) sharedKeyPem = pem
    return pem
  }
  writeFileSync(join(dir, "ee.key"), sharedKeyPem)
  return sharedKeyPem
}

// GeneralizedTime, which `openssl ca -startdate/-enddate` accepts for any year.
const asn1Time = (d: Date): string => d.toISOString().replace(/[-:T]/g, "").replace(/\.\d{3}Z$/, "Z")

const CA_CONFIG = `
[ ca ]
default_ca = test_ca
[ test_ca ]
database = index.txt
serial = serial
new_certs_dir = .
default_md = sha256
policy = policy_any
unique_subject = no
email_in_dn = no
[ policy_any ]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
`

const pbeArgs: Record<Pkcs12Encryption, ReadonlyArray<string>> = {
  default: [],
  legacy: ["-legacy"],
  "3des": ["-certpbe", "PBE-SHA1-3DES", "-keypbe", "PBE-SHA1-3DES", "-macalg", "sha1"]
}

// 16 random bytes, positive and without a leading zero byte, like real CAs' serials.
const randomSerial = (): string => {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0]! & 0x7f) | 0x10
  return bytes.toString("hex")
}

const hexOf = (line: string): string => line.slice(line.indexOf("=") + 1).trim().replace(/:/g, "").toLowerCase()

/**
 * `csr` (in `dir`) signed by `issuer` with the extensions of `dir/ext.cnf`, or by its own key
 * (`dir/ee.key`) when `issuer` is null; the certificate's PEM.
 */
const signWithCa = (
  dir: string,
  issuer: TestCa | null,
  csr: string,
  options: { readonly notBefore: Date; readonly notAfter: Date; readonly serialHex: string }
): string => {
  if (issuer !== null) {
    writeFileSync(join(dir, "ca.key"), issuer.keyPem)
    writeFileSync(join(dir, "ca.pem"), issuer.certPem)
  }
  writeFileSync(join(dir, "ca.cnf"), CA_CONFIG)
  writeFileSync(join(dir, "index.txt"), "")
  writeFileSync(join(dir, "serial"), options.serialHex + "\n")
  openssl(
    [
      "ca",
      "-batch",
      "-config",
      "ca.cnf",
      ...(issuer === null ? ["-selfsign", "-keyfile", "ee.key"] : ["-cert", "ca.pem", "-keyfile", "ca.key"]),
      "-in",
      csr,
      "-out",
      "signed.pem",
      "-notext",
      "-utf8",
      "-preserveDN",
      "-startdate",
      asn1Time(options.notBefore),
      "-enddate",
      asn1Time(options.notAfter),
      "-extfile",
      "ext.cnf"
    ],
    { cwd: dir }
  )
  return readFileSync(join(dir, "signed.pem"), "utf8")
}

/**
 * An A1-like bundle: end-entity certificate issued by `issuer` (default the test CA), its key, and
 * the issuing CA (with the root too when `includeChain`, none when `leafOnly` or self-signed).
 */
export const makePkcs12 = (options: MakePkcs12Options): TestPkcs12 => {
  const authority = options.selfSigned === true ? null : (options.issuer ?? testCa())
  const dir = scratch()
  try {
    const privateKeyPem = endEntityKey(dir, options.freshKey === true)

    const altNames = [
      ...(options.cnpjOid === undefined
        ? []
        : [`otherName:2.16.76.1.3.3;${otherNameValue(options.cnpjOidType ?? "UTF8", options.cnpjOid)}`]),
      ...(options.personDataOid === undefined ? [] : [`otherName:2.16.76.1.3.1;OCTETSTRING:${options.personDataOid}`]),
      ...(options.responsibleOid === undefined ? [] : [`otherName:2.16.76.1.3.4;OCTETSTRING:${options.responsibleOid}`])
    ]
    // A section, not an inline list: the hex form of a value contains a comma.
    writeFileSync(
      join(dir, "ext.cnf"),
      [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,nonRepudiation,keyEncipherment",
        "extendedKeyUsage=clientAuth,emailProtection",
        ...(altNames.length > 0
          ? ["subjectAltName=@alt_names", "[ alt_names ]", ...altNames.map((n, i) => n.replace(":", `.${i + 1} = `))]
          : [])
      ].join("\n") + "\n"
    )

    // In -subj, '/' separates RDNs and '+' joins attributes into one RDN.
    const rdn = (value: string) => value.replace(/[\\/+]/g, (c) => `\\${c}`)
    const subject = `/C=BR/O=${rdn(options.organization ?? "ICP-Brasil")}/OU=Certificado PJ A1/CN=${rdn(options.cn)}`
    openssl(["req", "-new", "-key", "ee.key", "-utf8", "-subj", subject, "-out", "ee.csr"], { cwd: dir })

    const notBefore = options.notBefore ?? new Date(Date.now() - 3_600_000)
    const notAfter = options.notAfter ?? new Date(notBefore.getTime() + (options.days ?? 365) * 86_400_000)
    writeFileSync(
      join(dir, "ee.pem"),
      signWithCa(dir, authority, "ee.csr", { notBefore, notAfter, serialHex: options.serialHex ?? randomSerial() })
    )

    const chain = authority === null || options.leafOnly === true
      ? []
      : options.includeChain === true
      ? [authority.certPem, ...authority.above]
      : [authority.certPem]
    writeFileSync(join(dir, "chain.pem"), chain.join(""))
    openssl(
      [
        "pkcs12",
        "-export",
        "-inkey",
        "ee.key",
        "-in",
        "ee.pem",
        ...(chain.length > 0 ? ["-certfile", "chain.pem"] : []),
        "-name",
        "test certificate",
        "-passout",
        "env:ETD_TEST_P12_PASSWORD",
        ...pbeArgs[options.encryption ?? "default"],
        "-out",
        "bundle.p12"
      ],
      { cwd: dir, env: { ETD_TEST_P12_PASSWORD: options.password } }
    )

    const x509 = (flag: string, ...extra: Array<string>) =>
      openssl(["x509", "-in", "ee.pem", "-noout", flag, ...extra], { cwd: dir }).trim()
    return {
      pfx: new Uint8Array(readFileSync(join(dir, "bundle.p12"))),
      certificatePem: readFileSync(join(dir, "ee.pem"), "utf8"),
      privateKeyPem,
      caCertificatePem: authority?.certPem ?? readFileSync(join(dir, "ee.pem"), "utf8"),
      caPrivateKeyPem: authority?.keyPem ?? privateKeyPem,
      fingerprintSha256: hexOf(x509("-fingerprint", "-sha256")),
      serialNumber: hexOf(x509("-serial")),
      subject: x509("-subject", "-nameopt", "RFC2253").replace(/^subject=/, ""),
      issuer: x509("-issuer", "-nameopt", "RFC2253").replace(/^issuer=/, "")
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A bundle assembled by node-forge instead of OpenSSL, for shapes `openssl pkcs12` will not
 * produce: certificates in a chosen order, a key without certificate, a certificate without key.
 */
export const packWithForge = (options: {
  readonly privateKeyPem?: string
  readonly certificatePems: ReadonlyArray<string>
  readonly password: string
  readonly algorithm?: "aes128" | "aes192" | "aes256" | "3des"
}): Uint8Array => {
  const key = options.privateKeyPem === undefined ? null : forge.pki.privateKeyFromPem(options.privateKeyPem)
  const certs = options.certificatePems.map((pem) => forge.pki.certificateFromPem(pem))
  // forge dereferences certs[0] unless it gets null for "no certificate"; @types/node-forge does
  // not admit null there although the implementation handles it, hence the cast.
  const noCertificate = null as unknown as Array<forge.pki.Certificate>
  const asn = forge.pkcs12.toPkcs12Asn1(key, certs.length === 0 ? noCertificate : certs, options.password, {
    algorithm: options.algorithm ?? "3des"
  })
  return new Uint8Array(Buffer.from(forge.asn1.toDer(asn).getBytes(), "latin1"))
}

/** Re-exports a bundle's key and certificate with a chosen PBKDF2 iteration count (openssl is fast at it). */
export const reexportWithIterations = (p12: TestPkcs12, password: string, iterations: number): Uint8Array => {
  const dir = mkdtempSync(join(tmpdir(), "etd-iter-"))
  try {
    writeFileSync(join(dir, "key.pem"), p12.privateKeyPem)
    writeFileSync(join(dir, "cert.pem"), p12.certificatePem)
    execFileSync("openssl", [
      "pkcs12",
      "-export",
      "-inkey",
      "key.pem",
      "-in",
      "cert.pem",
      "-iter",
      String(iterations),
      "-passout",
      "env:P",
      "-out",
      "out.p12"
    ], { cwd: dir, env: { ...process.env, P: password }, stdio: ["ignore", "pipe", "pipe"] })
    return new Uint8Array(readFileSync(join(dir, "out.p12")))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
