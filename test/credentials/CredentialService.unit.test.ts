/**
 * CredentialService alone, its neighbours mocked: an upload is checked against the tenant before
 * anything is sealed or stored, and one that loses the race for the tenant's active credential is
 * retried in a fresh transaction, so it replaces the winner instead of failing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { CertificateTrust, makeCertificateTrust } from "../../src/credentials/CertificateTrust.js"
import { CredentialRepo } from "../../src/credentials/CredentialRepo.js"
import { CredentialService } from "../../src/credentials/CredentialService.js"
import { CredentialVault } from "../../src/credentials/CredentialVault.js"
import { Pkcs12Opener } from "../../src/credentials/Pkcs12Opener.js"
import { ActiveCredentialTaken } from "../../src/domain/Credential.js"
import { Conflict } from "../../src/domain/Errors.js"
import { asId } from "../../src/domain/Ids.js"
import { emptyRegistration } from "../../src/domain/Registration.js"
import { TaxIdOwnership } from "../../src/tenants/TaxIdOwnership.js"
import { TenantService } from "../../src/tenants/TenantService.js"
import { makePkcs12, type TestPkcs12, testRoot } from "../support/certificates.js"
import { recordingTransaction } from "../support/recordingTransaction.js"
import { cnpj } from "../support/taxIds.js"

const TENANT = asId("tenant", "ten_unit")
const TENANT_TAX_ID = cnpj()
const PASSWORD = "unit-test-pass"

// Generating a bundle costs a few openssl processes; share them.
let ours: TestPkcs12 | undefined
const ourCertificate =
  () => (ours ??= makePkcs12({ cn: `EMPRESA LTDA:${TENANT_TAX_ID}`, cnpjOid: TENANT_TAX_ID, password: PASSWORD }))

/**
 * The service over a tenant with `TENANT_TAX_ID` (or none), whose `insert` fails `conflicts` times
 * first; with `taxIdTaken`, another tenant has proven the tax id.
 */
const setup = (
  options: { readonly tenantExists?: boolean; readonly conflicts?: number; readonly taxIdTaken?: boolean } = {}
) => {
  const log: Array<string> = []
  let conflicts = options.conflicts ?? 0
  const layer = CredentialService.layerNoDeps.pipe(
    Layer.provide([
      Layer.mock(TenantService, {
        issuer: () =>
          Effect.succeed(
            options.tenantExists === false
              ? Option.none()
              : Option.some({
                name: "Empresa Ltda",
                taxId: TENANT_TAX_ID,
                status: "active" as const,
                monthlyQuota: 100,
                verified: false,
                registration: emptyRegistration,
                simplesNacional: "not_opted" as const,
                noteMailEnabled: true,
                taxIdVerifiedByAnother: false
              })
          )
      }),
      Layer.mock(TaxIdOwnership, {
        verify: () =>
          Effect.suspend(() => {
            log.push("mark verified")
            return options.taxIdTaken ? Effect.fail(new Conflict()) : Effect.void
          })
      }),
      Layer.mock(CredentialVault, {
        sealMaterial: () => {
          log.push("seal")
          return { envelope: "v1:k1:sealed", masterKeyId: "k1" }
        }
      }),
      Layer.mock(CredentialRepo, {
        replaceActive: () => Effect.sync(() => void log.push("replace active")),
        insert: (credential) =>
          Effect.suspend(() => {
            log.push("insert")
            if (conflicts === 0) return Effect.void
            conflicts -= 1
            return Effect.fail(new ActiveCredentialTaken({ tenantId: credential.tenantId }))
          })
      }),
      recordingTransaction(log),
      // The real opener: these tests upload real bundles; trusted when they chain to the test root.
      Pkcs12Opener.layer,
      Layer.succeed(CertificateTrust, makeCertificateTrust([testRoot().certPem]))
    ])
  )
  return { layer, log }
}

const upload = (pfx: Uint8Array) =>
  Effect.flatMap(
    CredentialService,
    (service) =>
      service.upload(
        TENANT,
        { pkcs12: Buffer.from(pfx).toString("base64"), password: Redacted.make(PASSWORD) },
        asId("user", "usr_unit")
      )
  )

describe("CredentialService", () => {
  // Live clock: the certificates are valid from an hour ago in real time.
  it.live("refuses a certificate issued to another CNPJ, naming both, before anything is sealed or stored", () => {
    const { layer, log } = setup()
    const other = cnpj()
    const theirs = makePkcs12({ cn: `OUTRA LTDA:${other}`, cnpjOid: other, password: PASSWORD })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(upload(theirs.pfx))
      expect(error._tag).toBe("CertificateTaxIdMismatch")
      expect(error.message).toBe(`The certificate was issued to ${other}, not to the tenant's tax id ${TENANT_TAX_ID}.`)
      expect(log).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.live("an unknown tenant is 404 and nothing is stored", () => {
    const { layer, log } = setup({ tenantExists: false })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(upload(ourCertificate().pfx))
      expect(error._tag).toBe("NotFound")
      expect(log).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.live("stores the new credential as the active one, replacing the previous, in one transaction", () => {
    const { layer, log } = setup()
    return Effect.gen(function*() {
      const credential = yield* upload(ourCertificate().pfx)
      expect({ status: credential.status, tax_id: credential.tax_id }).toEqual({
        status: "active",
        tax_id: TENANT_TAX_ID
      })
      expect(log).toEqual(["seal", "BEGIN", "replace active", "insert", "mark verified", "COMMIT"])
    }).pipe(Effect.provide(layer))
  })

  it.live("losing the race for the active credential retries the whole transaction, so the upload replaces the winner", () => {
    const { layer, log } = setup({ conflicts: 2 })
    return Effect.gen(function*() {
      const credential = yield* upload(ourCertificate().pfx)
      expect(credential.status).toBe("active")
      const attempt = ["BEGIN", "replace active", "insert"]
      expect(log).toEqual([
        "seal",
        ...attempt,
        "ROLLBACK",
        ...attempt,
        "ROLLBACK",
        ...attempt,
        "mark verified",
        "COMMIT"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.live("a tax id another tenant proved first is 409 conflict at once: the credential is rolled back, not retried", () => {
    const { layer, log } = setup({ taxIdTaken: true })
    return Effect.gen(function*() {
      const error = yield* Effect.flip(upload(ourCertificate().pfx))
      expect(error._tag).toBe("Conflict")
      expect(log).toEqual(["seal", "BEGIN", "replace active", "insert", "mark verified", "ROLLBACK"])
    }).pipe(Effect.provide(layer))
  })
})
