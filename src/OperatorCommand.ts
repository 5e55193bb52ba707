/**
 * What an operator does outside the API, as commands of `npm run operator` (src/operator.ts): undo
 * a tenant's proof of its tax id (SPEC §5), and read a tenant's audit log. The command runs on the
 * service's own layers (configuration, database, migrations, event outbox), so it reaches the same
 * database the service does: DATABASE_URL, or the embedded one in DATA_DIR.
 */
import { Effect, Layer, Logger, References } from "effect"
import { hostname, userInfo } from "node:os"
import { parseArgs } from "node:util"
import { UserDirectoryLive } from "./auth/Directory.js"
import type { AppConfig } from "./Config.js"
import { OutboxLive } from "./credentials/MailSealingLive.js"
import { MigrationsLive, SqlLive } from "./db/Database.js"
import { Transaction } from "./db/Repository.js"
import { asId } from "./domain/Ids.js"
import { AuditLog } from "./events/AuditLog.js"
import { TaxIdOwnership } from "./tenants/TaxIdOwnership.js"
import { EventLogLive } from "./webhooks/FanOut.js"

export const USAGE = `Usage:
  operator tax-id unverify --tenant <tenant id> --reason <why> --operator <your name>
      Undoes the tenant's proof of its tax id: the tenant is unverified, the tax id is open to any
      tenant that names it, the tenant's webhooks get tenant.verification_revoked, and the audit
      log records who, when, why, the tenant and the tax id.
  operator audit list --tenant <tenant id>
      The tenant's audit log, newest first, one JSON object per line.`

export type OperatorCommand =
  | { readonly _tag: "Unverify"; readonly tenantId: string; readonly reason: string; readonly operator: string }
  | { readonly _tag: "AuditList"; readonly tenantId: string }

/** The command the arguments name, or what is wrong with them. */
export const parseCommand = (
  argv: ReadonlyArray<string>
): { readonly command: OperatorCommand } | { readonly problem: string } => {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { tenant: { type: "string" }, reason: { type: "string" }, operator: { type: "string" } }
    })
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) }
  }
  const { positionals, values } = parsed
  const text = (name: "tenant" | "reason" | "operator") => values[name]?.trim() ?? ""
  const verb = positionals.join(" ")
  if (verb === "tax-id unverify") {
    const missing = (["tenant", "reason", "operator"] as const).filter((name) => text(name) === "")
    if (missing.length > 0) return { problem: `missing ${missing.map((name) => `--${name}`).join(", ")}` }
    return {
      command: { _tag: "Unverify", tenantId: text("tenant"), reason: text("reason"), operator: text("operator") }
    }
  }
  if (verb === "audit list") {
    if (text("tenant") === "") return { problem: "missing --tenant" }
    return { command: { _tag: "AuditList", tenantId: text("tenant") } }
  }
  return { problem: verb === "" ? "no command given" : `unknown command: ${verb}` }
}

/** The service's layers an operator command needs; the migrations run first, as at the service's start. */
export const operatorLayer = (config: Layer.Layer<AppConfig>) =>
  Layer.mergeAll(TaxIdOwnership.layer, AuditLog.layer).pipe(
    Layer.provide([UserDirectoryLive, OutboxLive]),
    Layer.provideMerge(EventLogLive),
    Layer.provideMerge(Transaction.layer),
    Layer.provideMerge(Layer.provideMerge(MigrationsLive, SqlLive)),
    Layer.provideMerge(config),
    // The migrator's progress lines would bury the command's own output, and the warnings that
    // remain (a development secret generated) go to stderr: stdout is the command's JSON only.
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn")),
    Layer.provideMerge(Layer.succeed(Logger.LogToStderr, true))
  )

/** What the command prints on stdout: one JSON object per line. */
export const runCommand = (command: OperatorCommand) =>
  Effect.gen(function*() {
    const tenantId = asId("tenant", command.tenantId)
    switch (command._tag) {
      case "Unverify": {
        const entry = yield* Effect.flatMap(TaxIdOwnership, (ownership) =>
          ownership.revoke({
            tenantId,
            reason: command.reason,
            operator: command.operator,
            origin: { host: hostname(), system_user: userInfo().username }
          }))
        return [JSON.stringify(entry)]
      }
      case "AuditList": {
        const entries = yield* Effect.flatMap(AuditLog, (audit) => audit.ofTenant(tenantId))
        return entries.map((entry) => JSON.stringify(entry))
      }
    }
  })
