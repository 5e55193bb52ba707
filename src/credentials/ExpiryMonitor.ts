/**
 * Credential expiry (SPEC §8): a supervised background fiber that, on every tick, marks active
 * credentials past `not_after` as `expired` and records `credential.expiring` 30, 7 and 1 days
 * before `not_after`, once each. A warning is claimed on the row and its event recorded in the same
 * transaction, so several instances running the monitor still send each warning once.
 *
 * A credential uploaded late in its life gets only the nearest warning (uploaded 5 days before
 * expiry: the 7-day one, not the 30-day one as well).
 */
import { Effect, Layer, Metric, Schema } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { CredentialExpiryObject } from "../domain/Events.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { runPeriodically } from "../runtime/Periodic.js"
import { credentialTimeToExpiry } from "../telemetry/Metrics.js"
import { CredentialRepo } from "./CredentialRepo.js"

export type WarningDays = 30 | 7 | 1
export const EXPIRY_WARNING_DAYS: ReadonlyArray<WarningDays> = [30, 7, 1]
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Credentials serve both environments (the same certificate signs for production and
 * homologation), so the warning goes to the tenant's endpoints of each.
 */
const ENVIRONMENTS: ReadonlyArray<Environment> = ["live", "test"]

/** The warning due at `at` for a credential, if any: the smallest threshold already reached and not yet sent. */
export const dueWarning = (notAfter: Date, lastSent: number | null, at: Date): WarningDays | null => {
  const remaining = notAfter.getTime() - at.getTime()
  if (remaining < 0) return null
  // Thresholds are in descending order, so the last one reached is the nearest.
  const nearest = EXPIRY_WARNING_DAYS.filter((days) => remaining <= days * DAY_MS).at(-1) ?? null
  return nearest !== null && (lastSent === null || nearest < lastSent) ? nearest : null
}

/** How long after its expiry a tenant's lapsed certificate stays in the expiry metric. */
const EXPIRED_REPORTED_DAYS = 30

export const makeExpirySweep = Effect.gen(function*() {
  const repo = yield* CredentialRepo
  /** The tenants whose series the last sweep wrote. */
  let expiryReported = new Set<string>()
  const events = yield* EventLog
  const inTransaction = yield* makeTransaction

  return Effect.gen(function*() {
    const at = yield* now
    const expired = yield* repo.expireDue(at)
    for (const row of expired) {
      yield* Effect.logInfo("credential expired", { tenant_id: row.tenantId, credential_id: row.id })
    }
    const horizon = new Date(at.getTime() + Math.max(...EXPIRY_WARNING_DAYS) * DAY_MS)
    let warned = 0
    for (const row of yield* repo.activeExpiringBefore(horizon)) {
      const days = dueWarning(row.notAfter, row.lastExpiryWarningDays, at)
      if (days === null) continue
      const sent = yield* Effect.gen(function*() {
        if (!(yield* repo.claimWarning(row.id, days, at))) return false
        // The event's published shape (schemas/events/credential.expiring.json).
        const object = Schema.encodeSync(CredentialExpiryObject)({
          object: "credential_expiry",
          credential_id: row.id,
          not_after: row.notAfter.toISOString(),
          days_remaining: days
        })
        for (const environment of ENVIRONMENTS) {
          yield* events.record({ tenantId: row.tenantId, environment, type: "credential.expiring", object })
        }
        return true
      }).pipe(inTransaction)
      if (sent) {
        warned += 1
        yield* Effect.logInfo("credential expiry warning recorded", {
          tenant_id: row.tenantId,
          credential_id: row.id,
          days
        })
      }
    }
    // For the certificate-expiry alerts: every tenant's, refreshed each sweep (a new certificate
    // overwrites it). A tenant that drops out (expired for long) loses its series, so an alert on a
    // long-abandoned certificate ends instead of firing for ever.
    const reported = new Set<string>()
    for (
      const { notAfter, tenantId } of yield* repo.expiryByTenant(
        new Date(at.getTime() - EXPIRED_REPORTED_DAYS * DAY_MS)
      )
    ) {
      reported.add(tenantId)
      yield* Metric.update(
        Metric.withAttributes(credentialTimeToExpiry, { "tenant.id": tenantId }),
        Math.round((notAfter.getTime() - at.getTime()) / 1000)
      )
    }
    for (const tenantId of expiryReported) {
      if (!reported.has(tenantId)) {
        yield* Metric.remove(Metric.withAttributes(credentialTimeToExpiry, { "tenant.id": tenantId }))
      }
    }
    expiryReported = reported
    return { expired: expired.length, warned }
  })
})

/** The monitor: one sweep at start-up, then one per `CREDENTIAL_EXPIRY_CHECK_INTERVAL`. */
export const ExpiryMonitorLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* runPeriodically("credential-expiry-monitor", config.credentialExpiryCheckInterval, yield* makeExpirySweep)
  })
).pipe(Layer.provide([CredentialRepo.layer, Transaction.layer]))
