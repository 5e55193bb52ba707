/**
 * The audit log: operators' actions outside the API (SPEC §5, undoing a tax id's verification),
 * recorded in the transaction of the change they made, so a rolled-back change leaves no entry and
 * a committed one always has its entry. Unlike events, entries go to no webhook: they name the
 * operator and their reason, which are the service's business, not the tenant's.
 */
import { Context, Effect, Layer } from "effect"
import { Transaction } from "../db/Repository.js"
import { makeId, type TenantId } from "../domain/Ids.js"
import { now } from "../domain/Time.js"
import { type AuditEntry, AuditRepo } from "./AuditRepo.js"

export type { AuditEntry } from "./AuditRepo.js"

export interface NewAuditEntry {
  /** What was done, named like an event (`tenant.verification_revoked`). */
  readonly action: string
  /** Who says they did it (the operator's name as given). */
  readonly actor: string
  readonly reason: string
  readonly tenantId: TenantId | null
  /** What the action touched, as JSON (snake_case keys). */
  readonly details: Record<string, unknown>
}

export class AuditLog extends Context.Service<AuditLog>()("etd/AuditLog", {
  make: Effect.gen(function*() {
    const repo = yield* AuditRepo
    const { atomic } = yield* Transaction

    /** Call inside the transaction of the change the entry records; the entry as stored. */
    const record = Effect.fn("AuditLog.record")(function*(entry: NewAuditEntry) {
      const stored: AuditEntry = { ...entry, id: yield* makeId("audit"), createdAt: yield* now }
      yield* atomic(repo.insert(stored))
      return stored
    })

    /** The tenant's entries, newest first (at most `limit`). */
    const ofTenant = (tenantId: TenantId, limit = 100) => repo.ofTenant(tenantId, limit)

    return { record, ofTenant } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([AuditRepo.layer, Transaction.layer]))
}
