/**
 * CredentialRepo on both databases: rows come back decoded (timestamps as Dates), and a second
 * active credential for a tenant is the typed `ActiveCredentialTaken` the upload retries on, not a
 * database failure.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { CredentialRepo, type NewCredential } from "../../src/credentials/CredentialRepo.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { asId, type TenantId } from "../../src/domain/Ids.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"

const at = new Date("2025-03-01T12:00:00.000Z")

const credential = (tenantId: TenantId, taxId: string): NewCredential => ({
  id: `crd_repo${randomBytes(8).toString("hex")}`,
  tenantId,
  kind: "a1_certificate",
  subject: "CN=EMPRESA LTDA",
  issuer: "CN=AC TESTE",
  serialNumber: "01",
  taxId,
  verifiedChain: true,
  notBefore: at,
  notAfter: new Date("2026-03-01T12:00:00.000Z"),
  fingerprintSha256: "ab".repeat(32),
  status: "active",
  envelope: "v1:k1:wrapped:ciphertext",
  masterKeyId: "k1",
  createdAt: at,
  updatedAt: at
})

const newTenant = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const taxId = cnpj()
  const tenantId = asId("tenant", `ten_repo${randomBytes(8).toString("hex")}`)
  yield* sql`INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at) VALUES (${tenantId}, ${"Repo Ltda"}, ${taxId}, ${100}, ${at})`
  return { tenantId, taxId }
})

for (const database of testDatabases) {
  layer(CredentialRepo.layer.pipe(Layer.provideMerge(Layer.provideMerge(MigrationsLive, databaseLayer(database)))), {
    timeout: 60_000
  })(`credential repository (${database})`, (it) => {
    it.effect("reads back what it stored, decoded", () =>
      Effect.gen(function*() {
        const repo = yield* CredentialRepo
        const { taxId, tenantId } = yield* newTenant
        const stored = credential(tenantId, taxId)
        yield* repo.insert(stored)
        const found = yield* repo.findById(tenantId, stored.id)
        const { envelope: _envelope, masterKeyId: _masterKeyId, updatedAt: _updatedAt, ...metadata } = stored
        expect(found).toEqual(Option.some(metadata))
        expect(yield* repo.findById(asId("tenant", "ten_other"), stored.id)).toEqual(Option.none())
        const sealed = yield* repo.activeSealed(tenantId)
        expect(Option.map(sealed, (row) => row.notAfter)).toEqual(Option.some(stored.notAfter))
      }))

    it.effect("a second active credential for the tenant is ActiveCredentialTaken", () =>
      Effect.gen(function*() {
        const repo = yield* CredentialRepo
        const { taxId, tenantId } = yield* newTenant
        yield* repo.insert(credential(tenantId, taxId))
        const error = yield* Effect.flip(repo.insert(credential(tenantId, taxId)))
        expect(error._tag).toBe("ActiveCredentialTaken")
        // Replacing the active one first, as an upload does, makes room.
        yield* repo.replaceActive(tenantId, at)
        yield* repo.insert(credential(tenantId, taxId))
      }))
  })
}
