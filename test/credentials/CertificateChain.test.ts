/**
 * Only the owner of a tax id can verify it (SPEC §5, §8 "Trust"): a certificate verifies its tenant
 * only when it chains, through the CAs its PKCS#12 carries, to a trusted root (the shipped
 * ICP-Brasil ones, or the test root the test configuration adds through CREDENTIALS_EXTRA_CA_FILE),
 * every certificate of the path is valid, and the ICP-Brasil fields or the CN name the tenant's
 * tax id. Any other certificate is stored with `verified_chain: false` for test documents only.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { expectError, field } from "../support/accounts.js"
import {
  makePkcs12,
  type MakePkcs12Options,
  makeTestIntermediate,
  makeTestRoot,
  type TestPkcs12,
  testRoot
} from "../support/certificates.js"
import { cnpj, markEmailVerified, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const PFX_PASSWORD = "chain-test-pass"
const DAY = 86_400_000

const register = (taxId: string) =>
  Effect.gen(function*() {
    const email = uniqueEmail("chain")
    const registration = yield* rawRequest("POST", "/v1/auth/register", {
      body: { email, password: PASSWORD, name: "owner", tenant: { name: "Empresa Ltda", tax_id: taxId } }
    })
    expect(registration.status, registration.text).toBe(201)
    yield* markEmailVerified(String(field(field(registration.json, "user"), "id")))
    const login = yield* (yield* client()).auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    return { tenantId: String(field(field(registration.json, "tenant"), "id")), session: login.token }
  })

type Tenant = Effect.Success<ReturnType<typeof register>>

const upload = (tenant: Tenant, p12: TestPkcs12) =>
  rawRequest("POST", `/v1/tenants/${tenant.tenantId}/credentials`, {
    token: tenant.session,
    body: { pkcs12: Buffer.from(p12.pfx).toString("base64"), password: PFX_PASSWORD }
  })

const verifiedOf = (tenant: Tenant) =>
  Effect.map(
    rawRequest("GET", `/v1/tenants/${tenant.tenantId}`, { token: tenant.session }),
    (response) => field(response.json, "verified")
  )

/** An e-CNPJ-shaped certificate for `taxId` (CNPJ in 2.16.76.1.3.3 and after the CN's colon). */
const eCnpj = (taxId: string, options: Partial<MakePkcs12Options> = {}): TestPkcs12 =>
  makePkcs12({ cn: `EMPRESA LTDA:${taxId}`, cnpjOid: taxId, password: PFX_PASSWORD, freshKey: true, ...options })

/** Uploads `p12` for a new tenant of `taxId`: 201 with `verified_chain` as expected, and the tenant's `verified`. */
const stores = (taxId: string, p12: TestPkcs12, verifiedChain: boolean) =>
  Effect.gen(function*() {
    const tenant = yield* register(taxId)
    const response = yield* upload(tenant, p12)
    expect(response.status, response.text).toBe(201)
    expect(field(response.json, "verified_chain")).toBe(verifiedChain)
    expect(yield* verifiedOf(tenant)).toBe(verifiedChain)
    const listed = yield* rawRequest("GET", `/v1/tenants/${tenant.tenantId}/credentials`, { token: tenant.session })
    expect((field(listed.json, "data") as ReadonlyArray<unknown>).map((c) => field(c, "verified_chain"))).toEqual([
      verifiedChain
    ])
    return tenant
  })

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 180_000, excludeTestServices: true })(
    `certificate chain (${database})`,
    (it) => {
      it.effect("a self-signed certificate with any CNPJ is stored unverified and leaves the tax id to its owner", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          // Certificates first: openssl blocks the event loop (see TaxIdOwnership.test.ts).
          const selfSigned = eCnpj(taxId, { selfSigned: true })
          const genuine = eCnpj(taxId)
          const squatter = yield* stores(taxId, selfSigned, false)

          // The real owner registers the same CNPJ, proves it, and holds it alone from then on.
          const owner = yield* register(taxId)
          const proven = yield* upload(owner, genuine)
          expect(proven.status, proven.text).toBe(201)
          expect(field(proven.json, "verified_chain")).toBe(true)
          expect(yield* verifiedOf(owner)).toBe(true)
          expect(yield* verifiedOf(squatter)).toBe(false)
          // The squatter cannot take it back with its self-signed certificate, or at all.
          const again = yield* upload(squatter, selfSigned)
          expect(again.status, again.text).toBe(201)
          expect(yield* verifiedOf(squatter)).toBe(false)
          expectError(yield* upload(squatter, genuine), 409, "conflict")
        }))

      it.effect("an e-CNPJ chain under the configured test root verifies; the bundle's CA completes the path", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          const p12 = eCnpj(taxId, { responsibleOid: `0101198052998224725${"0".repeat(32)}` })
          const other = cnpj()
          const withRoot = eCnpj(other, { includeChain: true })
          yield* stores(taxId, p12, true)
          // The root in the bundle too changes nothing: a root is trusted by configuration, not by the file.
          yield* stores(other, withRoot, true)
        }))

      it.effect("a chain under a root that is not configured does not verify, even when the file carries the root", () =>
        Effect.gen(function*() {
          const unknownRoot = makeTestRoot("AC RAIZ DESCONHECIDA")
          const issuer = makeTestIntermediate("AC DESCONHECIDA v1", unknownRoot)
          const taxId = cnpj()
          yield* stores(taxId, eCnpj(taxId, { issuer, includeChain: true }), false)
        }))

      it.effect("an expired intermediate, or one that is not a CA, breaks the path", () =>
        Effect.gen(function*() {
          const expired = makeTestIntermediate("AC EXPIRADA v1", testRoot(), {
            notBefore: new Date(Date.now() - 800 * DAY),
            notAfter: new Date(Date.now() - DAY)
          })
          const notCa = makeTestIntermediate("EMPRESA QUE NAO E AC", testRoot(), { ca: false })
          const first = cnpj()
          const second = cnpj()
          yield* stores(first, eCnpj(first, { issuer: expired }), false)
          yield* stores(second, eCnpj(second, { issuer: notCa }), false)
        }))

      it.effect("a bundle without its issuing CA does not verify: the path cannot be built", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          yield* stores(taxId, eCnpj(taxId, { leafOnly: true }), false)
        }))

      it.effect("a trusted leaf whose otherName names another CNPJ is refused, whatever its CN says", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          const p12 = makePkcs12({
            cn: `EMPRESA LTDA:${taxId}`,
            cnpjOid: cnpj(),
            password: PFX_PASSWORD,
            freshKey: true
          })
          const tenant = yield* register(taxId)
          expectError(yield* upload(tenant, p12), 422, "certificate_tax_id_mismatch")
          expect(yield* verifiedOf(tenant)).toBe(false)
        }))

      it.effect("a trusted leaf with the CNPJ only after the CN's colon verifies", () =>
        Effect.gen(function*() {
          const taxId = cnpj()
          yield* stores(
            taxId,
            makePkcs12({ cn: `EMPRESA LTDA:${taxId}`, password: PFX_PASSWORD, freshKey: true }),
            true
          )
        }))
    }
  )
}
