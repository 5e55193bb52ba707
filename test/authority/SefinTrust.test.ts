/**
 * What a SEFIN connection trusts by default (SefinTransport.ts): the ICP-Brasil roots shipped in
 * trust/icp-brasil/ (production's and produção restrita's chains end there), on top of Node's own
 * roots, plus the environment's extra bundle when one is configured.
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash, X509Certificate } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as tls from "node:tls"
import { sefinTrustedRoots } from "../../src/authority/sefin/SefinTransport.js"
import { testRoot } from "../support/certificates.js"

const dir = join(import.meta.dirname, "../../trust/icp-brasil")

const fingerprint = (pem: string) => createHash("sha256").update(new X509Certificate(pem).raw).digest("hex")

/** Each shipped root's fingerprint, read from the files themselves rather than through the loader. */
const shippedRoots = readdirSync(dir).filter((name) => name.endsWith(".pem")).map((name) => ({
  name,
  sha256: fingerprint(readFileSync(join(dir, name), "utf8"))
}))

describe("SEFIN TLS trust", () => {
  it("trusts every ICP-Brasil root shipped in trust/icp-brasil/, and keeps Node's default roots", () => {
    expect(shippedRoots.map((r) => r.name).sort()).toEqual([
      "ac-raiz-brasileira-v10.pem",
      "ac-raiz-brasileira-v12.pem",
      "ac-raiz-brasileira-v5.pem"
    ])
    const trusted = sefinTrustedRoots(undefined).map(fingerprint)
    for (const root of shippedRoots) expect(trusted, root.name).toContain(root.sha256)
    for (const root of tls.getCACertificates("default")) expect(trusted).toContain(fingerprint(root))
  })

  it("adds the configured extra bundle, and an empty one adds nothing", () => {
    const withExtra = sefinTrustedRoots(testRoot().certPem).map(fingerprint)
    expect(withExtra).toContain(fingerprint(testRoot().certPem))
    for (const root of shippedRoots) expect(withExtra).toContain(root.sha256)
    expect(sefinTrustedRoots("  \n")).toEqual(sefinTrustedRoots(undefined))
  })
})
