/**
 * Who holds a tax id (SPEC §5). A tenant proves the tax id it names with an ICP-Brasil certificate
 * issued to it (the credentials module calls `verify` in the upload's transaction); every other
 * tenant that named it is told then, by an event, since it loses its claim for live issuing. An
 * operator can undo a verification (`revoke`, the operator command): audited, and told to the
 * tenant.
 *
 * What the events say is the tenant's standing on its tax id, never which tenant proved it or
 * which operator undid it. Both go to the endpoints of both environments: the standing is the
 * tenant's, whatever environment its integration listens in.
 */
import { Context, Effect, Layer, Option } from "effect"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { InvalidState, NotFound } from "../domain/Errors.js"
import type { EventType } from "../domain/Events.js"
import type { TenantId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import type { TaxIdStatus } from "../domain/Tenant.js"
import { now } from "../domain/Time.js"
import { AuditLog } from "../events/AuditLog.js"
import { EventLog } from "../events/EventLog.js"
import { TenantRepo } from "./TenantRepo.js"

const ENVIRONMENTS: ReadonlyArray<Environment> = ["live", "test"]

/** An operator's undoing of a tenant's verification. */
export interface Revocation {
  readonly tenantId: TenantId
  /** Who undoes it, as the operator gives their name (recorded in the audit log). */
  readonly operator: string
  /** Why (recorded in the audit log). */
  readonly reason: string
  /** Where it was done from (the command's host and system user), kept with the entry's details. */
  readonly origin?: Record<string, string> | undefined
}

export class TaxIdOwnership extends Context.Service<TaxIdOwnership>()("etd/TaxIdOwnership", {
  make: Effect.gen(function*() {
    const tenants = yield* TenantRepo
    const events = yield* EventLog
    const audit = yield* AuditLog
    const inTransaction = yield* makeTransaction

    /** Records the tenant's new standing on its tax id as `type`, for both environments. */
    const tell = (tenantId: TenantId, type: EventType, taxId: string, status: TaxIdStatus, at: Date) =>
      Effect.forEach(
        ENVIRONMENTS,
        (environment) =>
          events.record({
            tenantId,
            environment,
            type,
            object: {
              object: "tax_id_status",
              tenant_id: tenantId,
              tax_id: taxId,
              status,
              changed_at: at.toISOString()
            }
          }),
        { discard: true }
      )

    /**
     * Records that the tenant proved its tax id (call in the transaction that stores the
     * certificate): `Conflict` when another tenant proved it first. The first proof tells every
     * other tenant naming the tax id; a renewal by the holder tells no one again. A registration
     * committing at the same moment may miss the event; its tenant shows `verified_by_another` all
     * the same.
     */
    const verify = Effect.fn("TaxIdOwnership.verify")(function*(tenantId: TenantId) {
      const proven = yield* tenants.markVerified(tenantId)
      if (Option.isNone(proven)) return
      const at = yield* now
      const others = yield* tenants.namingTaxId(proven.value, tenantId)
      yield* Effect.annotateCurrentSpan({ "tax_id.claimants_told": others.length })
      yield* Effect.forEach(
        others,
        (other) => tell(other.id, "tenant.tax_id_verified_elsewhere", proven.value, "verified_by_another", at),
        { discard: true }
      )
    })

    /**
     * An operator undoes the tenant's verification: the tenant is unverified, so the tax id is open
     * to the proof of any tenant that names it (this one included, by uploading its certificate
     * again); the audit log records who, when, why and which tenant and tax id; the tenant hears of
     * it. `NotFound` for an unknown tenant, `InvalidState` when it is not verified.
     */
    const revoke = Effect.fn("TaxIdOwnership.revoke")(function*(revocation: Revocation) {
      return yield* Effect.gen(function*() {
        const found = yield* tenants.lockVerification(revocation.tenantId)
        if (Option.isNone(found)) return yield* new NotFound({ message: "No such tenant." })
        const { taxId, verified } = found.value
        if (!verified) {
          return yield* new InvalidState({ message: "The tenant has not proven its tax id: nothing to undo." })
        }
        yield* tenants.unmarkVerified(revocation.tenantId)
        const entry = yield* audit.record({
          action: "tenant.verification_revoked",
          actor: revocation.operator,
          reason: revocation.reason,
          tenantId: revocation.tenantId,
          details: { tax_id: taxId, ...revocation.origin }
        })
        yield* tell(revocation.tenantId, "tenant.verification_revoked", taxId, "unverified", entry.createdAt)
        return entry
      }).pipe(inTransaction)
    })

    return { verify, revoke } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs the `EventLog` (the application's fans out to the webhooks: webhooks/FanOut.ts). */
  static readonly layer = this.layerNoDeps.pipe(Layer.provide([TenantRepo.layer, AuditLog.layer, Transaction.layer]))
}
