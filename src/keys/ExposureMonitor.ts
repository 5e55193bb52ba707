/**
 * Exposure alerts (SPEC §4). When a token shows up where it must not (our own log output, or a
 * request URL), the key it belongs to is looked up by hash, a security alert is logged naming the
 * key id, counted in a metric and recorded for the tenant. The token itself goes nowhere.
 */
import { Context, Effect, Layer, Metric, Option, Queue } from "effect"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { type ExposureSource, ExposureReports } from "../telemetry/ExposureReports.js"
import { AuthService } from "../auth/AuthService.js"
import { KeyService } from "./KeyService.js"
import { SecurityAlertRepo } from "./SecurityAlertRepo.js"

export const exposureAlerts = Metric.counter("etd_api_key_exposures_total", {
  description: "Tokens found in log output or request URLs"
})

/** The worker that turns reports into alerts. */
export class ExposureMonitor extends Context.Service<ExposureMonitor>()("etd/ExposureMonitor", {
  make: Effect.gen(function*() {
    const alerts = yield* SecurityAlertRepo
    const keys = yield* KeyService
    const auth = yield* AuthService
    const { queue: reports } = yield* ExposureReports
    const events = yield* EventLog
    const inTransaction = yield* makeTransaction

    /** A leaked session is revoked at once: unlike an API key, no integration depends on it. */
    const handleSession = Effect.fn("ExposureMonitor.handleSession")(function*(token: string, source: ExposureSource) {
      const at = yield* now
      const revoked = yield* auth.revokeExposedSession(token)
      yield* Effect.logWarning("security alert: session token exposed; the session is revoked").pipe(
        Effect.annotateLogs({
          alert: "session.exposed",
          source,
          session_id: Option.match(revoked, { onNone: () => "unknown", onSome: (session) => session.id }),
          user_id: Option.match(revoked, { onNone: () => "unknown", onSome: (session) => session.userId })
        })
      )
      yield* Metric.update(Metric.withAttributes(exposureAlerts, { source, kind: "session" }), 1)
      yield* alerts.insert({ kind: "session.exposed", tenantId: null, apiKeyId: null, detail: source, createdAt: at })
    })

    const handle = Effect.fn("ExposureMonitor.handle")(function*(token: string, source: ExposureSource) {
      if (token.startsWith("etd_sess_")) return yield* handleSession(token, source)
      const owner = yield* keys.identify(token)
      const at = yield* now
      const keyId = Option.getOrNull(Option.map(owner, (o) => o.keyId))
      const tenantId = Option.getOrNull(Option.map(owner, (o) => o.tenantId))
      yield* Effect.logWarning("security alert: API key exposed").pipe(
        Effect.annotateLogs({ alert: "api_key.exposed", source, api_key_id: keyId ?? "unknown", tenant_id: tenantId ?? "unknown" })
      )
      yield* Metric.update(Metric.withAttributes(exposureAlerts, { source, kind: "api_key" }), 1)
      yield* Effect.gen(function*() {
        yield* alerts.insert({ kind: "api_key.exposed", tenantId, apiKeyId: keyId, detail: source, createdAt: at })
        if (Option.isNone(owner)) return
        // The token's own prefix names its environment (etd_live_… / etd_test_…), as the key's does.
        yield* events.record({
          tenantId: owner.value.tenantId,
          environment: token.startsWith("etd_live_") ? "live" : "test",
          type: "api_key.exposed",
          object: { object: "api_key_exposure", api_key_id: owner.value.keyId, source, detected_at: at.toISOString() }
        })
      }).pipe(inTransaction)
    })

    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(reports), ({ source, token }) =>
          handle(token, source).pipe(Effect.catchCause((cause) => Effect.logError("exposure alert failed", cause))))
      )
    )

    return { handle } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([SecurityAlertRepo.layer, KeyService.layer, AuthService.layer, Transaction.layer])
  )
}
