/** SQL for the audit log (`audit_log`). */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { TenantId } from "../domain/Ids.js"

/** An entry as stored; `details` is the action's own JSON (snake_case, as written). */
export const AuditEntry = Schema.Struct({
  id: Schema.String,
  action: Schema.String,
  actor: Schema.String,
  reason: Schema.String,
  tenantId: Schema.NullOr(TenantId),
  details: Schema.Record(Schema.String, Schema.Unknown),
  createdAt: Schema.Date
})
export type AuditEntry = typeof AuditEntry.Type

const entries = decodeRows(AuditEntry)

export class AuditRepo extends Context.Service<AuditRepo>()("etd/AuditRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (entry: AuditEntry) =>
      sql`
        INSERT INTO audit_log (id, action, actor, reason, tenant_id, details, created_at)
        VALUES (${entry.id}, ${entry.action}, ${entry.actor}, ${entry.reason}, ${entry.tenantId},
                ${JSON.stringify(entry.details)}::jsonb, ${entry.createdAt})`.pipe(Effect.asVoid)

    /** The tenant's entries, newest first, at most `limit`. */
    const ofTenant = (tenantId: TenantId, limit: number) =>
      entries(sql`
        SELECT id, action, actor, reason, tenant_id, details, created_at FROM audit_log
        WHERE tenant_id = ${tenantId} ORDER BY id DESC LIMIT ${limit}`)

    return repository("AuditRepo", { insert, ofTenant })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
