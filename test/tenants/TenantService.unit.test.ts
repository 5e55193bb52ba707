/**
 * TenantService alone, over a mocked TenantRepo (Layer.mock). The HTTP suite (Tenants.test.ts)
 * covers the contract on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { AppConfigTest } from "../../src/Config.js"
import { Transaction } from "../../src/db/Repository.js"
import { asId } from "../../src/domain/Ids.js"
import { emptyRegistration } from "../../src/domain/Registration.js"
import { type NewTenantRecord, TenantRepo, type TenantUsageRecord } from "../../src/tenants/TenantRepo.js"
import { AuthenticatedTenant, TenantService } from "../../src/tenants/TenantService.js"

type Mock<S extends { readonly Service: object }> = Layer.PartialEffectful<S["Service"]>

const serviceWith = (repo: Mock<typeof TenantRepo>) =>
  TenantService.layerNoDeps.pipe(
    Layer.provide([Layer.mock(TenantRepo)(repo), Transaction.layerTest, AppConfigTest({ defaultMonthlyQuota: 250 })])
  )

const stored = {
  id: asId("tenant", "ten_1"),
  name: "Ana Ltda",
  taxId: "11222333000181",
  verified: false,
  taxIdVerifiedByAnother: false,
  status: "active" as const,
  plan: "free",
  monthlyQuota: 100,
  simplesNacional: "not_opted" as const,
  registration: emptyRegistration,
  noteMailEnabled: true,
  noteMailSenderName: null,
  createdAt: new Date("2026-01-05T10:00:00Z")
}

describe("TenantService (repository mocked)", () => {
  it.effect("shows this UTC month's usage of the quota, zero before the first document", () => {
    const asked: Array<Date> = []
    const layer = serviceWith({
      findById: (id, at) =>
        Effect.sync(() => asked.push(at)).pipe(
          Effect.as(id === "ten_1" ? Option.some({ ...stored, used: null }) : Option.none())
        )
    })
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      // Still 31 January in São Paulo, but the period is the calendar month in UTC.
      yield* TestClock.setTime(Date.parse("2026-02-01T01:00:00Z"))
      const tenant = yield* tenants.get(asId("tenant", "ten_1"))
      expect(tenant.quota).toEqual({ period: "2026-02", limit: 100, used: 0 })
      expect(asked.map((at) => at.toISOString())).toEqual(["2026-02-01T01:00:00.000Z"])
      const error = yield* Effect.flip(tenants.get(asId("tenant", "ten_unknown")))
      expect(error._tag).toBe("NotFound")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a new tenant gets the configured quota and its creator as owner, at the registration's time", () => {
    const inserted: Array<NewTenantRecord> = []
    const members: Array<{ tenantId: string; userId: string; role: string; createdAt: Date }> = []
    const layer = serviceWith({
      isTaxIdVerified: () => Effect.succeed(false),
      insert: (tenant) =>
        Effect.sync(() => inserted.push(tenant)).pipe(
          Effect.as({
            ...tenant,
            verified: false,
            taxIdVerifiedByAnother: false,
            status: "active" as const,
            plan: "free",
            simplesNacional: "not_opted" as const,
            registration: emptyRegistration,
            noteMailEnabled: true,
            noteMailSenderName: null
          })
        ),
      addMember: (member) => Effect.sync(() => void members.push(member))
    })
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      const at = new Date("2026-03-10T08:00:00Z")
      const tenant = yield* tenants.create({ name: "Ana Ltda", tax_id: "11222333000181" }, asId("user", "usr_ana"), at)
      expect(inserted).toEqual([{
        id: tenant.id,
        name: "Ana Ltda",
        taxId: "11222333000181",
        monthlyQuota: 250,
        createdAt: at
      }])
      expect(members).toEqual([{ tenantId: tenant.id, userId: "usr_ana", role: "owner", createdAt: at }])
      expect(tenant.quota).toEqual({ period: "2026-03", limit: 250, used: 0 })
      expect(tenant.created_at).toEqual(at)
      expect(tenant.verified).toBe(false)
      expect(tenant.tax_id_status).toBe("unverified")
      expect(tenant.simples_nacional).toBe("not_opted")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a change reaches the repository with only the fields given, and answers the tenant as stored after it", () => {
    const changes: Array<unknown> = []
    let current: TenantUsageRecord = { ...stored, used: null }
    const layer = serviceWith({
      update: (id, change) =>
        Effect.sync(() => {
          changes.push(change)
          if (id !== "ten_1") return false
          current = { ...current, simplesNacional: change.simplesNacional ?? current.simplesNacional }
          return true
        }),
      findById: () => Effect.sync(() => Option.some(current))
    })
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      const tenant = yield* tenants.update(asId("tenant", "ten_1"), { simples_nacional: "me_epp" })
      expect([tenant.name, tenant.simples_nacional]).toEqual(["Ana Ltda", "me_epp"])
      expect(changes).toEqual([{ name: undefined, simplesNacional: "me_epp" }])
      const error = yield* Effect.flip(tenants.update(asId("tenant", "ten_unknown"), { name: "Outra Ltda" }))
      expect(error._tag).toBe("NotFound")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a tax id another tenant has proven is 409 conflict, and nothing is written", () => {
    const asked: Array<string> = []
    const layer = serviceWith({
      // No `insert` or `addMember`: a write would die.
      isTaxIdVerified: (taxId) => Effect.sync(() => asked.push(taxId)).pipe(Effect.as(true))
    })
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      const error = yield* Effect.flip(
        tenants.create({ name: "Ana Ltda", tax_id: "11222333000181" }, asId("user", "usr_ana"), new Date())
      )
      expect(error._tag).toBe("Conflict")
      expect(asked).toEqual(["11222333000181"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the key's tenant as its authentication read it is shown without a lookup; any other tenant is looked up", () => {
    const asked: Array<string> = []
    const layer = serviceWith({
      findById: (id) => Effect.sync(() => asked.push(id)).pipe(Effect.as(Option.some({ ...stored, id, used: 3 })))
    })
    // Read on the last day of January: the usage is that month's even if the clock moved on since.
    const authenticated = { at: new Date("2026-01-31T23:59:59Z"), row: { ...stored, used: 7 } }
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      yield* TestClock.setTime(Date.parse("2026-02-01T00:00:01Z"))
      const own = yield* tenants.get(asId("tenant", "ten_1"))
      expect(own.quota).toEqual({ period: "2026-01", limit: 100, used: 7 })
      expect(own.name).toBe("Ana Ltda")
      expect(asked).toEqual([])
      const other = yield* tenants.get(asId("tenant", "ten_2"))
      expect(other.quota).toEqual({ period: "2026-02", limit: 100, used: 3 })
      expect(asked).toEqual(["ten_2"])
    }).pipe(Effect.provideService(AuthenticatedTenant, authenticated), Effect.provide(layer))
  })

  it.effect("the key's tenant as its authentication read it is the issuer without a lookup; any other tenant is looked up", () => {
    const asked: Array<string> = []
    const layer = serviceWith({
      findIssuer: (id) =>
        Effect.sync(() => asked.push(id)).pipe(Effect.as(Option.some({ ...stored, name: "Other Ltda" })))
    })
    const authenticated = { at: new Date(), row: { ...stored, status: "suspended" as const, used: 7 } }
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      const own = yield* tenants.issuer(asId("tenant", "ten_1"))
      expect(Option.map(own, (issuer) => [issuer.name, issuer.status, issuer.taxIdVerifiedByAnother])).toEqual(
        Option.some(["Ana Ltda", "suspended", false])
      )
      expect(asked).toEqual([])
      const other = yield* tenants.issuer(asId("tenant", "ten_2"))
      expect(Option.map(other, (issuer) => issuer.name)).toEqual(Option.some("Other Ltda"))
      expect(asked).toEqual(["ten_2"])
      // Another tenant's row (not this tenant's key): the issuer is read.
      yield* Effect.provideService(tenants.issuer(asId("tenant", "ten_1")), AuthenticatedTenant, {
        at: new Date(),
        row: { id: asId("tenant", "ten_9") }
      })
      expect(asked).toEqual(["ten_2", "ten_1"])
    }).pipe(Effect.provideService(AuthenticatedTenant, authenticated), Effect.provide(layer))
  })

  it.effect("a change answers the tenant read after it, never the one read with the key", () => {
    const before = { ...stored, used: null }
    const layer = serviceWith({
      update: () => Effect.succeed(true),
      findById: (id) => Effect.succeed(Option.some({ ...stored, id, name: "Changed Ltda", used: null }))
    })
    return Effect.gen(function*() {
      const tenants = yield* TenantService
      const changed = yield* tenants.update(asId("tenant", "ten_1"), { name: "Changed Ltda" })
      expect(changed.name).toBe("Changed Ltda")
    }).pipe(
      Effect.provideService(AuthenticatedTenant, { at: new Date(), row: before }),
      Effect.provide(layer)
    )
  })

  it.effect("a row of the wrong shape handed by the authentication is a defect, not a tenant", () =>
    Effect.gen(function*() {
      const tenants = yield* TenantService
      const exit = yield* Effect.exit(tenants.get(asId("tenant", "ten_1")))
      expect(exit._tag).toBe("Failure")
    }).pipe(
      Effect.provideService(AuthenticatedTenant, { at: new Date(), row: { id: asId("tenant", "ten_1") } }),
      Effect.provide(serviceWith({}))
    ))
})
