/**
 * Exposure alerts (SPEC §4). When a token shows up where it must not (our own log output, a
 * request URL, or an API key sent from a browser), the key it belongs to is looked up by hash, a
 * security alert is logged naming the key id, counted in a metric and recorded for the tenant. The
 * token itself goes nowhere. A token-shaped string that is no key or session of ours raises no
 * alert: it is only counted, so junk cannot flood the alerts.
 */
import { Context, Effect, Layer, Metric, Option } from "effect"
import { AuthService } from "../auth/AuthService.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import {
  type Candidate,
  exposureCandidates,
  ExposureReports,
  type ExposureSource
} from "../telemetry/ExposureReports.js"
import { exposureAlerts } from "../telemetry/Metrics.js"
import { untraced } from "../telemetry/TraceContext.js"
import { KeyService } from "./KeyService.js"
import { SecurityAlertRepo } from "./SecurityAlertRepo.js"
export { exposureAlerts }

/** The worker that turns reports into alerts. */
export class ExposureMonitor extends Context.Service<ExposureMonitor>()("etd/ExposureMonitor", {
  make: Effect.gen(function*() {
    const alerts = yield* SecurityAlertRepo
    const keys = yield* KeyService
    const auth = yield* AuthService
    const reports = yield* ExposureReports
    const events = yield* EventLog
    const inTransaction = yield* makeTransaction

    const unknown = (source: ExposureSource) =>
      Metric.update(Metric.withAttributes(exposureCandidates, { outcome: "unknown", source }), 1)

    /**
     * The alert line names the client that sent the token (a URL's, a browser's), so an operator can
     * find its requests in the access log; the record keeps no address: it is the tenant's, and the
     * sender is often a visitor of the tenant's site, not the tenant.
     */
    const clientOf = (clientAddress: string | undefined) =>
      clientAddress === undefined ? {} : { "client.address": clientAddress }

    /** A leaked session is revoked at once: unlike an API key, no integration depends on it. */
    const handleSession = Effect.fn("ExposureMonitor.handleSession")(function*(
      token: string,
      source: ExposureSource,
      clientAddress: string | undefined
    ) {
      const at = yield* now
      const revoked = yield* auth.revokeExposedSession(token)
      if (Option.isNone(revoked)) return yield* unknown(source)
      yield* Effect.logWarning("security alert: session token exposed; the session is revoked").pipe(
        Effect.annotateLogs({
          alert: "session.exposed",
          source,
          session_id: revoked.value.id,
          user_id: revoked.value.userId,
          ...clientOf(clientAddress)
        })
      )
      yield* Metric.update(Metric.withAttributes(exposureAlerts, { source, kind: "session" }), 1)
      yield* alerts.insert({ kind: "session.exposed", tenantId: null, apiKeyId: null, detail: source, createdAt: at })
    })

    const handle = Effect.fn("ExposureMonitor.handle")(function*(
      token: string,
      source: ExposureSource,
      clientAddress?: string
    ) {
      if (token.startsWith("etd_sess_")) return yield* handleSession(token, source, clientAddress)
      const owner = yield* keys.identify(token)
      if (Option.isNone(owner)) return yield* unknown(source)
      const { keyId, tenantId } = owner.value
      const at = yield* now
      yield* Effect.logWarning("security alert: API key exposed").pipe(
        Effect.annotateLogs({
          alert: "api_key.exposed",
          source,
          api_key_id: keyId,
          tenant_id: tenantId,
          ...clientOf(clientAddress)
        })
      )
      yield* Metric.update(Metric.withAttributes(exposureAlerts, { source, kind: "api_key" }), 1)
      yield* Effect.gen(function*() {
        yield* alerts.insert({ kind: "api_key.exposed", tenantId, apiKeyId: keyId, detail: source, createdAt: at })
        // The token's own prefix names its environment (etd_live_… / etd_test_…), as the key's does.
        yield* events.record({
          tenantId,
          environment: token.startsWith("etd_live_") ? "live" : "test",
          type: "api_key.exposed",
          object: { object: "api_key_exposure", api_key_id: keyId, source, detected_at: at.toISOString() }
        })
      }).pipe(inTransaction)
    })

    const lookUp = (candidate: Candidate) =>
      handle(candidate.token, candidate.source, candidate.clientAddress).pipe(
        Effect.andThen(reports.settle(candidate)),
        Effect.catchCause((cause) =>
          Effect.andThen(
            reports.release(candidate),
            Effect.logError("exposure alert failed; the token is looked up again when it is seen again", cause)
          )
        )
      )

    // One worker per source, so a flood of URLs does not delay what the logs report.
    for (const source of ["url", "log", "browser"] as const) {
      yield* Effect.forkScoped(untraced(Effect.forever(Effect.flatMap(reports.take(source), lookUp))))
    }

    return { handle } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([SecurityAlertRepo.layer, KeyService.layer, AuthService.layer, Transaction.layer])
  )
}
