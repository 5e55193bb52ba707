/** SQL for `security_alerts`: the record, per tenant when known, of every exposed token (SPEC §4). */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { repository } from "../db/Repository.js"
import type { ApiKeyId, TenantId } from "../domain/Ids.js"

export type NewSecurityAlert = {
  readonly kind: "api_key.exposed" | "session.exposed"
  /** Null when the token belongs to no known key, or is a session's (sessions belong to users). */
  readonly tenantId: TenantId | null
  readonly apiKeyId: ApiKeyId | null
  /** Where the token was found (an `ExposureSource`). */
  readonly detail: string
  readonly createdAt: Date
}

export class SecurityAlertRepo extends Context.Service<SecurityAlertRepo>()("etd/SecurityAlertRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (alert: NewSecurityAlert) =>
      sql`INSERT INTO security_alerts ${sql.insert(alert)}`.pipe(Effect.asVoid)

    return repository("SecurityAlertRepo", { insert })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
