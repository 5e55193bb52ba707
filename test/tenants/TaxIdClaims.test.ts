/**
 * What the tenants that share a tax id are told (SPEC §5), over HTTP on both databases: when one
 * proves it, the others get `tenant.tax_id_verified_elsewhere` and show why they lost their live
 * claim (`tax_id_status`); an operator's undoing of a verification is audited, told to the tenant,
 * and opens the tax id to the others' proof again.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TaxIdStatusChangeObject } from "../../src/domain/Events.js"
import { asId, type TenantId } from "../../src/domain/Ids.js"
import { AuditLog } from "../../src/events/AuditLog.js"
import { MemberService } from "../../src/tenants/MemberService.js"
import { TaxIdOwnership } from "../../src/tenants/TaxIdOwnership.js"
import { addMember, expectError, field } from "../support/accounts.js"
import { makePkcs12, type TestPkcs12 } from "../support/certificates.js"
import { cnpj, createKey, markEmailVerified, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { completeRegistration } from "../support/registration.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const PFX_PASSWORD = "claims-test-pass"

/** A new owner and tenant that names `taxId`, logged in. */
const tenantNaming = (taxId: string) =>
  Effect.gen(function*() {
    const email = uniqueEmail("claim")
    const api = yield* client()
    const registration = yield* api.auth.register({
      payload: {
        email,
        password: Redacted.make(PASSWORD),
        name: "owner",
        tenant: { name: "Empresa Ltda", tax_id: taxId }
      }
    })
    // Uploading a certificate needs a verified address (SPEC §5), as following the mailed link gives.
    yield* markEmailVerified(registration.user.id)
    const login = yield* api.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
    const tenantId = asId("tenant", registration.tenant!.id)
    yield* (yield* client(login.token)).tenants.update({
      params: { tenantId },
      payload: { registration: completeRegistration }
    })
    return { tenantId, session: login.token, email, userId: registration.user.id }
  })

type Claimant = Effect.Success<ReturnType<typeof tenantNaming>>

const certificateOf = (taxId: string): TestPkcs12 =>
  makePkcs12({ cn: `EMPRESA LTDA:${taxId}`, cnpjOid: taxId, password: PFX_PASSWORD })

const upload = (tenant: Claimant, p12: TestPkcs12) =>
  rawRequest("POST", `/v1/tenants/${tenant.tenantId}/credentials`, {
    token: tenant.session,
    body: { pkcs12: Buffer.from(p12.pfx).toString("base64"), password: PFX_PASSWORD }
  })

const standingOf = (tenant: Claimant) =>
  Effect.map(
    rawRequest("GET", `/v1/tenants/${tenant.tenantId}`, { token: tenant.session }),
    (response) => ({ verified: field(response.json, "verified"), status: field(response.json, "tax_id_status") })
  )

/** The tax id events recorded for these tenants, as (tenant, environment, type, status), in order. */
const taxIdEvents = (tenantIds: ReadonlyArray<TenantId>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ tenantId: string; environment: string; type: string; data: unknown }>`
      SELECT tenant_id, environment, type, data FROM events
      WHERE tenant_id IN ${sql.in(tenantIds)} AND type LIKE 'tenant.%' ORDER BY id`
    return yield* Effect.forEach(rows, (row) =>
      Effect.map(
        Schema.decodeUnknownEffect(TaxIdStatusChangeObject)(field(row.data, "object")),
        (object) => {
          expect(object.tenant_id).toBe(row.tenantId)
          return [row.tenantId, row.environment, row.type, object.status, object.tax_id] as const
        }
      ))
  })

for (const database of testDatabases) {
  const app = makeTestApp(database, { loginRateLimit: { perMinute: 100_000 } })

  layer(app, { timeout: 120_000, excludeTestServices: true })(`tax id claims (${database})`, (it) => {
    it.effect("the first proof tells every other tenant naming the tax id, in both environments; they show why", () =>
      Effect.gen(function*() {
        const taxId = cnpj()
        const p12 = certificateOf(taxId)
        const renewal = certificateOf(taxId)
        const holder = yield* tenantNaming(taxId)
        const first = yield* tenantNaming(taxId)
        const second = yield* tenantNaming(taxId)
        const unrelated = yield* tenantNaming(cnpj())
        expect(yield* standingOf(first)).toEqual({ verified: false, status: "unverified" })

        expect((yield* upload(holder, p12)).status).toBe(201)
        expect(yield* standingOf(holder)).toEqual({ verified: true, status: "verified" })
        expect(yield* standingOf(first)).toEqual({ verified: false, status: "verified_by_another" })
        expect(yield* standingOf(second)).toEqual({ verified: false, status: "verified_by_another" })
        expect(yield* standingOf(unrelated)).toEqual({ verified: false, status: "unverified" })
        // The list of one's tenants says the same.
        const mine = yield* (yield* client(first.session)).auth.myTenants({ query: { limit: 10 } })
        expect(mine.data[0]?.tenant.tax_id_status).toBe("verified_by_another")

        const told = [first, second].flatMap((tenant) =>
          ["live", "test"].map((environment) =>
            [tenant.tenantId, environment, "tenant.tax_id_verified_elsewhere", "verified_by_another", taxId] as const
          )
        )
        const ids = [holder, first, second, unrelated].map((tenant) => tenant.tenantId)
        expect([...(yield* taxIdEvents(ids))].sort()).toEqual([...told].sort())

        // A renewal by the holder tells no one again.
        expect((yield* upload(holder, renewal)).status).toBe(201)
        expect((yield* taxIdEvents(ids)).length).toBe(told.length)

        // Live issuing names the reason too.
        const live = yield* createKey(first, "live", ["documents:write"])
        const refused = yield* rawRequest("POST", "/v1/documents", {
          token: live.token,
          body: {
            type: "service_invoice",
            taker: { tax_id: "52998224725", name: "Maria da Silva" },
            service: {
              code: "010101",
              nbs_code: "115013000",
              description: "Consultoria",
              municipality_code: "3550308"
            },
            amounts: { services: 150000, iss_rate: "2.00" }
          }
        })
        expectError(refused, 422, "credential_required")
        expect(String(field(refused.json, "message"))).toContain("Another tenant has proven this tax id")
      }))

    it.effect("claimantsOf: the other tenants naming the tax id with their owners' e-mails", () =>
      Effect.gen(function*() {
        const taxId = cnpj()
        const holder = yield* tenantNaming(taxId)
        const first = yield* tenantNaming(taxId)
        const coOwner = yield* addMember(first, "owner", "co-owner")
        yield* addMember(first, "admin", "not-an-owner")
        const second = yield* tenantNaming(taxId)
        yield* tenantNaming(cnpj())

        const members = yield* MemberService
        const claimants = yield* members.claimantsOf(taxId, holder.tenantId)
        const byEmail = (owners: ReadonlyArray<{ email: string }>) => owners.map((owner) => owner.email).sort()
        expect(claimants.map((claimant) => claimant.tenantId)).toEqual([first.tenantId, second.tenantId].sort())
        const firstClaim = claimants.find((claimant) => claimant.tenantId === first.tenantId)!
        expect(firstClaim.name).toBe("Empresa Ltda")
        expect(byEmail(firstClaim.owners)).toEqual([first.email, coOwner.email].sort())
        expect(firstClaim.owners.map((owner) => owner.userId).sort()).toEqual([first.userId, coOwner.userId].sort())
        expect(byEmail(claimants.find((claimant) => claimant.tenantId === second.tenantId)!.owners)).toEqual([
          second.email
        ])
        expect(yield* members.claimantsOf(cnpj(), holder.tenantId)).toEqual([])
      }))

    it.effect("an operator undoes a verification: audited, told to the tenant, and the tax id is open again", () =>
      Effect.gen(function*() {
        const taxId = cnpj()
        const p12 = certificateOf(taxId)
        const again = certificateOf(taxId)
        const holder = yield* tenantNaming(taxId)
        const other = yield* tenantNaming(taxId)
        expect((yield* upload(holder, p12)).status).toBe(201)
        const ownership = yield* TaxIdOwnership
        const audit = yield* AuditLog

        const entry = yield* ownership.revoke({
          tenantId: holder.tenantId,
          operator: "Ana Operadora",
          reason: "Certificate reported stolen (ticket 4711)",
          origin: { host: "ops-1", system_user: "ana" }
        })
        expect(entry).toMatchObject({
          action: "tenant.verification_revoked",
          actor: "Ana Operadora",
          reason: "Certificate reported stolen (ticket 4711)",
          tenantId: holder.tenantId,
          details: { tax_id: taxId, host: "ops-1", system_user: "ana" }
        })
        expect(entry.id).toMatch(/^aud_[0-9a-z]{26}$/)
        expect(yield* audit.ofTenant(holder.tenantId)).toEqual([entry])
        expect(yield* audit.ofTenant(other.tenantId)).toEqual([])

        expect(yield* standingOf(holder)).toEqual({ verified: false, status: "unverified" })
        expect(yield* standingOf(other)).toEqual({ verified: false, status: "unverified" })
        const revoked = (yield* taxIdEvents([holder.tenantId])).filter(([, , type]) =>
          type === "tenant.verification_revoked"
        )
        expect(revoked.map(([, environment, , status]) => [environment, status]).sort()).toEqual([
          ["live", "unverified"],
          ["test", "unverified"]
        ])
        // The webhook body names neither the operator nor the reason.
        const sql = yield* SqlClient.SqlClient
        const bodies = yield* sql<{ data: unknown }>`
          SELECT data FROM events WHERE tenant_id = ${holder.tenantId} AND type = 'tenant.verification_revoked'`
        expect(JSON.stringify(bodies)).not.toContain("Ana")
        expect(JSON.stringify(bodies)).not.toContain("4711")

        // The certificate stays stored and active; it proves nothing until uploaded again.
        const reader = yield* createKey(holder, "test", ["credentials:read"])
        const stored = yield* rawRequest("GET", `/v1/tenants/${holder.tenantId}/credentials`, { token: reader.token })
        expect((field(stored.json, "data") as ReadonlyArray<unknown>).map((c) => field(c, "status"))).toEqual([
          "active"
        ])

        // Nothing to undo twice; an unknown tenant is not found; neither writes an entry.
        const twice = yield* Effect.flip(
          ownership.revoke({ tenantId: holder.tenantId, operator: "Ana Operadora", reason: "again" })
        )
        expect(twice._tag).toBe("InvalidState")
        const unknown = yield* Effect.flip(
          ownership.revoke({ tenantId: asId("tenant", `ten_${"0".repeat(26)}`), operator: "Ana", reason: "x" })
        )
        expect(unknown._tag).toBe("NotFound")
        expect((yield* audit.ofTenant(holder.tenantId)).length).toBe(1)

        // The tax id is open: the other tenant proves it now, and the former holder is told.
        expect((yield* upload(other, again)).status).toBe(201)
        expect(yield* standingOf(other)).toEqual({ verified: true, status: "verified" })
        expect(yield* standingOf(holder)).toEqual({ verified: false, status: "verified_by_another" })
        expectError(yield* upload(holder, p12), 409, "conflict")
        const elsewhere = (yield* taxIdEvents([holder.tenantId])).filter(([, , type]) =>
          type === "tenant.tax_id_verified_elsewhere"
        )
        expect(elsewhere.length).toBe(2)
      }))

    it.effect("two operators undoing the same verification at once: one does, the other finds nothing to undo", () =>
      Effect.gen(function*() {
        const taxId = cnpj()
        const holder = yield* tenantNaming(taxId)
        expect((yield* upload(holder, certificateOf(taxId))).status).toBe(201)
        const ownership = yield* TaxIdOwnership
        const outcomes = yield* Effect.all(
          ["first", "second"].map((operator) =>
            Effect.result(ownership.revoke({ tenantId: holder.tenantId, operator, reason: "duplicate ticket" }))
          ),
          { concurrency: "unbounded" }
        )
        expect(outcomes.map((outcome) => outcome._tag).sort()).toEqual(["Failure", "Success"])
        expect((yield* (yield* AuditLog).ofTenant(holder.tenantId)).length).toBe(1)
        expect(
          (yield* taxIdEvents([holder.tenantId])).filter(([, , type]) => type === "tenant.verification_revoked").length
        ).toBe(2)
      }))
  })
}
