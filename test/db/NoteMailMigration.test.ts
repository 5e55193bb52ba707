/**
 * Migration 0019 (notes e-mailed to takers) on a database as the previous release left it: the
 * tenants that already exist keep their takers free of mail from us until an owner turns it on,
 * while a tenant created afterwards has it on; a note mail not sent after all can end `withheld`.
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

const at = new Date("2026-11-20T12:00:00.000Z")

const Switch = Schema.Struct({ id: Schema.String, noteMailEnabled: Schema.Boolean })

for (const database of testDatabases) {
  layer(databaseLayer(database), { timeout: 60_000 })(`migration 0019 (${database})`, (it) => {
    it.effect("existing tenants start with note mail off, new ones with it on; mail jobs may end withheld", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateBelow(19)
        yield* sql`
          INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at)
          VALUES ('ten_before', 'Antes Ltda', ${cnpj()}, 100, ${at})`

        yield* migrateAll
        yield* sql`
          INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at)
          VALUES ('ten_after', 'Depois Ltda', ${cnpj()}, 100, ${at})`
        const rows = yield* sql`SELECT id, note_mail_enabled FROM tenants ORDER BY id`
        expect(rows.map((row) => Schema.decodeUnknownSync(Switch)(row))).toEqual([
          { id: "ten_after", noteMailEnabled: true },
          { id: "ten_before", noteMailEnabled: false }
        ])

        const job = (id: string, state: string) =>
          sql`
            INSERT INTO mail_jobs (id, recipient_key, template, state, run_at, created_at, updated_at)
            VALUES (${id}, 'r', 'taker_note', ${state}, ${at}, ${at}, ${at})`
        yield* job("mail_withheld", "withheld")
        const unknown = yield* Effect.flip(job("mail_unknown", "lost"))
        // check_violation, as both drivers report PostgreSQL's SQLSTATE on the error's cause.
        expect(unknown.reason.cause).toMatchObject({ code: "23514" })
      }))
  })
}
