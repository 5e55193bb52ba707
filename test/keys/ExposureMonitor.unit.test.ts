/**
 * ExposureMonitor alone: keys, sessions, alerts and events are mocks (Layer.mock), the report
 * queue is the real one. Errors.test.ts covers detection end to end.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { AuthService } from "../../src/auth/AuthService.js"
import { generateToken } from "../../src/domain/Tokens.js"
import { EventLog } from "../../src/events/EventLog.js"
import { ExposureMonitor } from "../../src/keys/ExposureMonitor.js"
import { KeyService } from "../../src/keys/KeyService.js"
import { SecurityAlertRepo } from "../../src/keys/SecurityAlertRepo.js"
import { ExposureReports } from "../../src/telemetry/ExposureReports.js"
import { recordingTransaction } from "../support/recordingTransaction.js"

/** The monitor over mocks that write what they are asked, and where transactions begin and end, to `log`. */
const monitorWith = (log: Array<string>) => {
  const write = (line: string) => Effect.sync(() => void log.push(line))
  return ExposureMonitor.layerNoDeps.pipe(
    Layer.provide([
      Layer.mock(SecurityAlertRepo)({
        insert: (alert) => write(`alert ${alert.kind} ${alert.tenantId ?? "-"} ${alert.apiKeyId ?? "-"} ${alert.detail}`)
      }),
      Layer.mock(KeyService)({
        identify: (token) => Effect.succeed(token.startsWith("etd_test_") ? Option.some({ keyId: "key_1", tenantId: "ten_1" }) : Option.none())
      }),
      Layer.mock(AuthService)({
        revokeExposedSession: () => Effect.as(write("revoke session"), Option.some({ id: "ses_1", userId: "usr_1" }))
      }),
      Layer.mock(EventLog)({
        record: (event) => Effect.as(write(`event ${event.type} ${event.environment} ${event.tenantId}`), "evt_1")
      }),
      recordingTransaction(log),
      ExposureReports.layer
    ])
  )
}

describe("ExposureMonitor (neighbours mocked)", () => {
  it.effect("a leaked key: the alert and the tenant's event, in the token's environment, commit together", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const monitor = yield* ExposureMonitor
      yield* monitor.handle(generateToken("test"), "url")
      expect(log).toEqual(["BEGIN", "alert api_key.exposed ten_1 key_1 url", "event api_key.exposed test ten_1", "COMMIT"])
    }).pipe(Effect.provide(monitorWith(log)))
  })

  it.effect("a leaked session is revoked and alerted without a tenant; an unknown key is alerted with no event", () => {
    const log: Array<string> = []
    return Effect.gen(function*() {
      const monitor = yield* ExposureMonitor
      yield* monitor.handle(generateToken("sess"), "log")
      yield* monitor.handle(generateToken("live"), "log")
      expect(log).toEqual([
        "revoke session",
        "alert session.exposed - - log",
        "BEGIN",
        "alert api_key.exposed - - log",
        "COMMIT"
      ])
    }).pipe(Effect.provide(monitorWith(log)))
  })
})
