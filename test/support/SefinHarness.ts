/**
 * What the tests of the `sefin` adapter against the local authority share: a tenant's A1 material
 * held by a vault the test controls, and documents and submissions numbered one after the other.
 */
import { Effect, Layer, Option, Redacted } from "effect"
import type { Submission, SubmissionDocument } from "../../src/authority/TaxAuthority.js"
import { type CredentialMaterial, CredentialVault, NoActiveCredential } from "../../src/credentials/CredentialVault.js"
import { asId } from "../../src/domain/Ids.js"
import { plainAmounts } from "./amounts.js"
import { makePkcs12, type TestPkcs12 } from "./certificates.js"
import { registeredIssuer } from "./registration.js"

export const TENANT = asId("tenant", "ten_sefin")
const PASSWORD = "senha"
export const DAY = 86_400_000

export const certificateFor = (taxId: string, options: { freshKey?: boolean } = {}) =>
  makePkcs12({ cn: `EMPRESA ${taxId} LTDA:${taxId}`, cnpjOid: taxId, password: PASSWORD, ...options })

export const materialOf = (
  p12: TestPkcs12,
  credentialId: string,
  notAfter = new Date(Date.now() + 365 * DAY)
): CredentialMaterial => ({
  credentialId,
  notAfter,
  verifiedChain: true,
  certificatePem: p12.certificatePem,
  privateKeyPem: Redacted.make(p12.privateKeyPem)
})

/** A vault whose answer the test changes as it goes (a new upload, none at all). */
export const vaultHolding = (initial: CredentialMaterial | null) => {
  let current = initial
  const layer = Layer.mock(CredentialVault, {
    sealMaterial: () => {
      throw new Error("not expected")
    },
    activeFor: (tenantId) =>
      current === null
        ? Effect.fail(new NoActiveCredential({ tenantId, message: "The tenant has no active credential." }))
        : Effect.succeed(current),
    signing: (_, at) =>
      Effect.succeed(
        current !== null && current.notAfter.getTime() > at.getTime()
          ? Option.some({ verifiedChain: current.verifiedChain })
          : Option.none()
      )
  })
  return { layer, set: (material: CredentialMaterial | null) => void (current = material) }
}

let number = 0
export const document = (issuerTaxId: string, overrides: Partial<SubmissionDocument> = {}): SubmissionDocument => ({
  environment: "test",
  issuer: registeredIssuer(issuerTaxId, "Empresa Ltda"),
  series: "1",
  number: ++number,
  issueDate: "2026-11-20",
  createdAt: new Date(),
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  intermediary: null,
  tax: {},
  amounts: plainAmounts(100000, "2.00"),
  notes: null,
  ...overrides
})

export const submission = (doc: SubmissionDocument): Submission => ({
  tenantId: TENANT,
  submissionId: `DPS${doc.service.municipality_code}2${doc.issuer.taxId}${doc.series.padStart(5, "0")}${
    String(doc.number).padStart(15, "0")
  }`,
  document: doc
})
