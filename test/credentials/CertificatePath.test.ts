/**
 * Path validation (src/credentials/CertificatePath.ts) on its own: what makes a path, and what
 * breaks it, decided at a given instant; and the work a bundle stuffed with certificates can cost.
 */
import { describe, expect, it } from "@effect/vitest"
import { validatePath } from "../../src/credentials/CertificatePath.js"
import { makePkcs12, makeTestIntermediate, makeTestRoot, testCa, testRoot } from "../support/certificates.js"
import { cnpj } from "../support/taxIds.js"

const DAY = 86_400_000
// The test root is valid from the moment it is made (lazily, by the first test that needs it).
const now = () => new Date()

describe("validatePath", () => {
  it("trusts a leaf whose bundle carries its CA, under a trusted root, and names the root", () => {
    const p12 = makePkcs12({ cn: `EMPRESA LTDA:${cnpj()}`, password: "x" })
    const verdict = validatePath({
      leafPem: p12.certificatePem,
      intermediatePems: [testCa().certPem],
      anchorPems: [testRoot().certPem],
      at: now()
    })
    expect(verdict).toEqual({ trusted: true, root: "AC RAIZ TESTE ETD" })
    // The same path without the CA, or under other roots, is not one.
    expect(
      validatePath({ leafPem: p12.certificatePem, intermediatePems: [], anchorPems: [testRoot().certPem], at: now() })
        .trusted
    ).toBe(false)
    const stranger = makeTestRoot("AC RAIZ ESTRANHA")
    expect(
      validatePath({
        leafPem: p12.certificatePem,
        intermediatePems: [testCa().certPem, testRoot().certPem],
        anchorPems: [stranger.certPem],
        at: now()
      }).trusted
    ).toBe(false)
  })

  it("takes an intermediate only within its validity: the same path verifies inside it, not before or after", () => {
    // The test root is valid from its creation on, so the window lies ahead of now.
    const window = makeTestIntermediate("AC JANELA v1", testRoot(), {
      notBefore: new Date(now().getTime() + 2 * DAY),
      notAfter: new Date(now().getTime() + 10 * DAY)
    })
    const p12 = makePkcs12({ cn: `EMPRESA LTDA:${cnpj()}`, password: "x", issuer: window })
    const at = (days: number) =>
      validatePath({
        leafPem: p12.certificatePem,
        intermediatePems: [window.certPem],
        anchorPems: [testRoot().certPem],
        at: new Date(now().getTime() + days * DAY)
      }).trusted
    expect(at(5)).toBe(true)
    expect(at(0)).toBe(false)
    expect(at(20)).toBe(false)
  })

  it("respects a CA's path length: one that allows no CA below it cannot have a second one under it", () => {
    const trusted = (pathLength: number) => {
      const upper = makeTestIntermediate(`AC SUPERIOR ${pathLength}`, testRoot(), { pathLength })
      const lower = makeTestIntermediate(`AC INFERIOR ${pathLength}`, upper)
      const p12 = makePkcs12({ cn: `EMPRESA LTDA:${cnpj()}`, password: "x", issuer: lower })
      return validatePath({
        leafPem: p12.certificatePem,
        intermediatePems: [lower.certPem, upper.certPem],
        anchorPems: [testRoot().certPem],
        at: now()
      }).trusted
    }
    expect(trusted(1)).toBe(true)
    expect(trusted(0)).toBe(false)
  })

  it("refuses a root offered as the tenant's own certificate", () => {
    const verdict = validatePath({
      leafPem: testRoot().certPem,
      intermediatePems: [],
      anchorPems: [testRoot().certPem],
      at: now()
    })
    expect(verdict.trusted).toBe(false)
  })

  it("stays bounded with a bundle full of CAs that name the leaf's issuer but do not sign it", () => {
    const p12 = makePkcs12({ cn: `EMPRESA LTDA:${cnpj()}`, password: "x" })
    // Same subject as the real issuer, other keys: each passes the name check and fails the signature.
    const decoys = Array.from({ length: 3 }, () => makeTestIntermediate("AC TESTE ETD v1", testRoot()).certPem)
    const intermediatePems = Array.from({ length: 200 }, (_, i) => decoys[i % decoys.length]!)
    const started = performance.now()
    const verdict = validatePath({
      leafPem: p12.certificatePem,
      intermediatePems: [...intermediatePems, testCa().certPem],
      anchorPems: [testRoot().certPem],
      at: now()
    })
    // Only the first ten certificates of a bundle are looked at: the real CA came too late.
    expect(verdict.trusted).toBe(false)
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
