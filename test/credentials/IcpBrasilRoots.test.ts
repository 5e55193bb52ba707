/**
 * The ICP-Brasil roots shipped in trust/icp-brasil/: each file's certificate has the SHA-256
 * fingerprint published for it (trust/icp-brasil/README.md names the sources the fingerprints
 * were cross-checked against), is a self-signed CA that may sign certificates, and is valid now.
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash, X509Certificate } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { icpBrasilRootPems } from "../../src/credentials/IcpBrasilRoots.js"

const dir = join(import.meta.dirname, "../../trust/icp-brasil")

/** SHA-256 of each root's DER, as ITI's repository and independent integrations list them. */
const expected: Record<string, { readonly cn: string; readonly sha256: string; readonly notAfter: string }> = {
  "ac-raiz-brasileira-v5.pem": {
    cn: "Autoridade Certificadora Raiz Brasileira v5",
    sha256: "caa53fc6091c6951887c976e378f6ef89aa6377c55d97b6475422b71ed7e9b17",
    notAfter: "2029-03-02T23:59:38.000Z"
  },
  "ac-raiz-brasileira-v10.pem": {
    cn: "Autoridade Certificadora Raiz Brasileira v10",
    sha256: "6e0bff069a26994c15de2c4888cc54af84882e5495b7fbf66be9ccffec7489f6",
    notAfter: "2032-07-01T12:00:59.000Z"
  },
  "ac-raiz-brasileira-v12.pem": {
    cn: "Autoridade Certificadora Raiz Brasileira v12",
    sha256: "d8478e37ce19c690cf657381e68fe600e4e1a042536830f06847e03e554c4b01",
    notAfter: "2037-10-22T12:00:24.000Z"
  }
}

describe("shipped ICP-Brasil roots", () => {
  it("are exactly the expected files", () => {
    expect(readdirSync(dir).filter((name) => name.endsWith(".pem")).sort()).toEqual(Object.keys(expected).sort())
    expect(icpBrasilRootPems()).toHaveLength(Object.keys(expected).length)
  })

  for (const [file, root] of Object.entries(expected)) {
    it(`${file}: ${root.cn}, SHA-256 ${root.sha256.slice(0, 16)}…`, () => {
      const pem = readFileSync(join(dir, file), "utf8")
      expect(pem.match(/BEGIN CERTIFICATE/g)).toHaveLength(1)
      const x509 = new X509Certificate(pem)
      expect(createHash("sha256").update(x509.raw).digest("hex")).toBe(root.sha256)
      expect(x509.subject).toContain(`CN=${root.cn}`)
      expect(x509.subject).toContain("O=ICP-Brasil")
      expect(x509.issuer).toBe(x509.subject)
      expect(x509.ca).toBe(true)
      expect(x509.verify(x509.publicKey)).toBe(true)
      expect(x509.validToDate.toISOString()).toBe(root.notAfter)
      expect(x509.validToDate.getTime()).toBeGreaterThan(Date.now())
    })
  }
})
