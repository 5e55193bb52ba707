/**
 * Migration 0014 (ICP-Brasil trust) on a database as the previous release left it: every stored
 * credential becomes `verified_chain = false`, and no tenant keeps a verification that no chain
 * check ever backed; the credentials themselves stay.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { MIGRATIONS_TABLE } from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"

const migrateBelow = (id: number) =>
  Migrator.make({})({
    loader: Effect.map(migrations, (all) => all.filter(([migrationId]) => migrationId < id)),
    table: MIGRATIONS_TABLE
  })

const migrateAll = Migrator.make({})({ loader: migrations, table: MIGRATIONS_TABLE })

const at = new Date("2026-01-10T12:00:00.000Z")

const Row = Schema.Struct({ verified: Schema.Boolean })
const CredentialRow = Schema.Struct({ status: Schema.String, verifiedChain: Schema.Boolean })

for (const database of testDatabases) {
  layer(databaseLayer(database), { timeout: 60_000 })(`migration 0014 (${database})`, (it) => {
    it.effect("marks existing credentials without a verified chain and un-verifies their tenants", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateBelow(14)
        const taxId = cnpj()
        yield* sql`
          INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at, verified)
          VALUES ('ten_before', 'Antes Ltda', ${taxId}, 100, ${at}, true), ('ten_plain', 'Outra Ltda', ${cnpj()}, 100, ${at}, false)`
        yield* sql`
          INSERT INTO credentials (id, tenant_id, kind, subject, issuer, serial_number, tax_id, not_before, not_after,
            fingerprint_sha256, status, envelope, master_key_id, created_at, updated_at)
          VALUES ('crd_before', 'ten_before', 'a1_certificate', ${`CN=ANTES LTDA:${taxId}`}, ${`CN=ANTES LTDA:${taxId}`},
            '01', ${taxId}, ${at}, ${new Date("2027-01-10T12:00:00.000Z")}, ${"ab".repeat(32)}, 'active',
            'v1:k1:wrapped:ciphertext', 'k1', ${at}, ${at})`

        yield* migrateAll
        const tenants = yield* sql`SELECT verified FROM tenants WHERE id IN ('ten_before', 'ten_plain') ORDER BY id`
        expect(tenants.map((row) => Schema.decodeUnknownSync(Row)(row).verified)).toEqual([false, false])
        const credentials = yield* sql`SELECT status, verified_chain FROM credentials WHERE id = 'crd_before'`
        expect(credentials.map((row) => Schema.decodeUnknownSync(CredentialRow)(row))).toEqual([
          { status: "active", verifiedChain: false }
        ])
      }))
  })
}
