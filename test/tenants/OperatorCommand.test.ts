/**
 * The operator's command (`npm run operator`): its arguments, and one run end to end as a process
 * of its own on an embedded database in a DATA_DIR, the way an operator runs it beside a stopped
 * service.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { embeddedLayer, MigrationsLive } from "../../src/db/Database.js"
import { parseCommand } from "../../src/OperatorCommand.js"

const ROOT = resolve(import.meta.dirname, "../..")

/** Runs `src/operator.ts` with these arguments on the embedded database in `dataDir`. */
const operator = (dataDir: string, args: ReadonlyArray<string>) => {
  const { DATABASE_URL: _ignored, ...env } = process.env
  const result = spawnSync(process.execPath, ["--import", "tsx", "src/operator.ts", ...args], {
    cwd: ROOT,
    env: { ...env, DATA_DIR: dataDir, NODE_ENV: "development" },
    encoding: "utf8",
    timeout: 120_000
  })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Runs `effect` on the embedded database in `dataDir`, migrated, and closes it again. */
const onDatabase = <A, E>(dataDir: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.provide(effect, Layer.provideMerge(MigrationsLive, embeddedLayer(join(dataDir, "pglite"))))

describe("operator command", () => {
  it("parses tax-id unverify and audit list, and says what is missing or unknown", () => {
    expect(parseCommand(["tax-id", "unverify", "--tenant", "ten_1", "--reason", " stolen ", "--operator", "Ana"]))
      .toEqual({ command: { _tag: "Unverify", tenantId: "ten_1", reason: "stolen", operator: "Ana" } })
    expect(parseCommand(["audit", "list", "--tenant=ten_1"])).toEqual({
      command: { _tag: "AuditList", tenantId: "ten_1" }
    })
    // The reason and the operator's name are what makes the entry an audit: both required, not blank.
    expect(parseCommand(["tax-id", "unverify", "--tenant", "ten_1", "--reason", "  "])).toEqual({
      problem: "missing --reason, --operator"
    })
    expect(parseCommand(["audit", "list"])).toEqual({ problem: "missing --tenant" })
    expect(parseCommand([])).toEqual({ problem: "no command given" })
    expect(parseCommand(["tax-id", "verify", "--tenant", "ten_1"])).toEqual({
      problem: "unknown command: tax-id verify"
    })
    expect("problem" in parseCommand(["audit", "list", "--tenant", "ten_1", "--force"])).toBe(true)
  })

  it.live(
    "undoes a verification on the embedded database, as a process of its own: exit 0, then 1 for nothing to undo",
    () => {
      const dataDir = mkdtempSync(join(tmpdir(), "etd-operator-"))
      const tenantId = `ten_${"1".repeat(26)}`
      return Effect.gen(function*() {
        yield* onDatabase(
          dataDir,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`
            INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at, verified)
            VALUES (${tenantId}, 'Operada Ltda', '11222333000181', 100, now(), true)`)
        )

        const usage = operator(dataDir, ["tax-id", "unverify", "--tenant", tenantId])
        expect(usage.status).toBe(2)
        expect(usage.stderr).toContain("missing --reason, --operator")
        expect(usage.stderr).toContain("Usage:")

        const run = operator(dataDir, [
          "tax-id",
          "unverify",
          "--tenant",
          tenantId,
          "--reason",
          "Ticket 4711: certificate reported stolen",
          "--operator",
          "Ana Operadora"
        ])
        expect(run.status, run.stderr).toBe(0)
        const entry = JSON.parse(run.stdout.trim())
        expect(entry).toMatchObject({
          action: "tenant.verification_revoked",
          actor: "Ana Operadora",
          reason: "Ticket 4711: certificate reported stolen",
          tenantId,
          details: { tax_id: "11222333000181" }
        })
        expect(Object.keys(entry.details).sort()).toEqual(["host", "system_user", "tax_id"])

        const again = operator(dataDir, [
          "tax-id",
          "unverify",
          "--tenant",
          tenantId,
          "--reason",
          "again",
          "--operator",
          "Ana Operadora"
        ])
        expect(again.status).toBe(1)
        expect(again.stderr).toContain("nothing to undo")

        const listed = operator(dataDir, ["audit", "list", "--tenant", tenantId])
        expect(listed.status, listed.stderr).toBe(0)
        expect(listed.stdout.trim().split("\n").map((line) => JSON.parse(line).id)).toEqual([entry.id])

        const after = yield* onDatabase(
          dataDir,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const tenants = yield* sql<{ verified: boolean }>`SELECT verified FROM tenants WHERE id = ${tenantId}`
            const events = yield* sql<{ type: string; environment: string }>`
            SELECT type, environment FROM events WHERE tenant_id = ${tenantId} ORDER BY environment`
            return { verified: tenants[0]?.verified, events }
          })
        )
        expect(after.verified).toBe(false)
        expect(after.events).toEqual([
          { type: "tenant.verification_revoked", environment: "live" },
          { type: "tenant.verification_revoked", environment: "test" }
        ])
      }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))))
    },
    300_000
  )
})
