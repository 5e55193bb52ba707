/**
 * Credential expiry with TestClock: `credential.expiring` at 30, 7 and 1 days before `not_after`,
 * once each (also with two sweeps racing), only the nearest one for a late upload, `expired`
 * after `not_after`, and the supervised fiber that runs the sweep on its schedule.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Metric, Redacted, Schema, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomBytes } from "node:crypto"
import { UserDirectoryLive } from "../../src/auth/Directory.js"
import { AppConfigTest } from "../../src/Config.js"
import { CredentialRepo } from "../../src/credentials/CredentialRepo.js"
import { CredentialService } from "../../src/credentials/CredentialService.js"
import { CredentialVault, MasterKeys } from "../../src/credentials/CredentialVault.js"
import { generateMasterKey, parseMasterKeys } from "../../src/credentials/Envelope.js"
import { dueWarning, ExpiryMonitorLive, makeExpirySweep } from "../../src/credentials/ExpiryMonitor.js"
import { MailSealingLive } from "../../src/credentials/MailSealingLive.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { Transaction } from "../../src/db/Repository.js"
import { CredentialExpiryObject } from "../../src/domain/Events.js"
import { asId } from "../../src/domain/Ids.js"
import { Outbox } from "../../src/mail/Outbox.js"
import { Readiness } from "../../src/runtime/Readiness.js"
import { credentialTimeToExpiry } from "../../src/telemetry/Metrics.js"
import { EventLogLive } from "../../src/webhooks/FanOut.js"
import { makePkcs12 } from "../support/certificates.js"
import { databaseLayer, testDatabases } from "../support/Databases.js"
import { cnpj } from "../support/taxIds.js"

const DAY = 86_400_000
const HOUR = 3_600_000
// Certificates are made with real dates; the TestClock is set to match.
const START = Math.floor(Date.now() / 1000) * 1000

const services = Layer.mergeAll(CredentialService.layer, CredentialVault.layer, CredentialRepo.layer).pipe(
  // A first proof of a tax id mails the other claimants' owners (none here).
  Layer.provide([UserDirectoryLive, Outbox.layer.pipe(Layer.provide(MailSealingLive))]),
  Layer.provideMerge(Transaction.layer),
  Layer.provideMerge(EventLogLive),
  Layer.provide(AppConfigTest()),
  Layer.provide(Layer.effect(MasterKeys, parseMasterKeys(generateMasterKey("k1"))))
)

/** A tenant with an active credential expiring `days` after START. */
const credentialExpiringIn = (days: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const taxId = cnpj()
    const tenantId = asId("tenant", `ten_expiry${randomBytes(8).toString("hex")}`)
    yield* sql`INSERT INTO tenants (id, name, tax_id, monthly_quota, created_at) VALUES (${tenantId}, ${"Expira Ltda"}, ${taxId}, ${100}, ${new Date(
      START
    )})`
    const password = "expiry-test"
    const p12 = makePkcs12({
      cn: `EXPIRA LTDA:${taxId}`,
      cnpjOid: taxId,
      password,
      notBefore: new Date(START - DAY),
      notAfter: new Date(START + days * DAY)
    })
    const service = yield* CredentialService
    const credential = yield* service.upload(tenantId, {
      pkcs12: Buffer.from(p12.pfx).toString("base64"),
      password: Redacted.make(password)
    }, asId("user", "usr_expiry"))
    return { tenantId, credentialId: credential.id }
  })

const warningsOf = (credentialId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Warnings go 30 → 7 → 1, so this order is also the order they were sent in.
    const rows = yield* sql<{ environment: string; days: number }>`
      SELECT environment, (data -> 'object' ->> 'days_remaining')::int AS days
      FROM events WHERE type = 'credential.expiring' AND data -> 'object' ->> 'credential_id' = ${credentialId}
      ORDER BY days DESC, environment`
    return rows.map((row) => `${row.days}d/${row.environment}`)
  })

const statusOf = (credentialId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql<{ status: string }>`SELECT status FROM credentials WHERE id = ${credentialId}`, (rows) =>
        rows[0]!.status)
  )

/** Wall-clock wait while the TestClock stands still (the database answers in real time). */
const realPause = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 10)))
const eventually = <A>(check: Effect.Effect<A, unknown, SqlClient.SqlClient>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      const value = yield* check
      if (done(value)) return value
      yield* realPause
    }
    return yield* check
  })

describe("dueWarning", () => {
  const notAfter = new Date(START + 40 * DAY)
  const at = (daysBefore: number) => new Date(notAfter.getTime() - daysBefore * DAY)
  it("is the nearest threshold reached and not yet sent", () => {
    expect(dueWarning(notAfter, null, at(31))).toBe(null)
    expect(dueWarning(notAfter, null, at(30))).toBe(30)
    expect(dueWarning(notAfter, 30, at(29))).toBe(null)
    expect(dueWarning(notAfter, 30, at(7))).toBe(7)
    expect(dueWarning(notAfter, null, at(5))).toBe(7)
    expect(dueWarning(notAfter, 7, at(0.5))).toBe(1)
    expect(dueWarning(notAfter, 1, at(0.1))).toBe(null)
    expect(dueWarning(notAfter, null, at(-1))).toBe(null)
  })
})

for (const database of testDatabases) {
  layer(Layer.provideMerge(MigrationsLive, databaseLayer(database)), { timeout: 120_000 })(
    `credential expiry (${database})`,
    (it) => {
      it.effect("warns 30, 7 and 1 days before not_after, once each, then marks the credential expired", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const { credentialId } = yield* credentialExpiringIn(40)
          const sweep = yield* makeExpirySweep
          const step = (to: number) => Effect.andThen(TestClock.setTime(START + to), sweep)

          yield* step(9 * DAY)
          expect(yield* warningsOf(credentialId)).toEqual([])
          yield* step(10 * DAY + HOUR)
          expect(yield* warningsOf(credentialId)).toEqual(["30d/live", "30d/test"])
          // The event carries the published shape (schemas/events/credential.expiring.json).
          const sql = yield* SqlClient.SqlClient
          const [stored] = yield* sql<{ object: unknown }>`
          SELECT data -> 'object' AS object FROM events
          WHERE type = 'credential.expiring' AND data -> 'object' ->> 'credential_id' = ${credentialId} LIMIT 1`
          expect(Schema.decodeUnknownSync(CredentialExpiryObject)(stored!.object)).toEqual({
            object: "credential_expiry",
            credential_id: credentialId,
            not_after: new Date(START + 40 * DAY).toISOString(),
            days_remaining: 30
          })
          // Later sweeps, and two racing each other, do not repeat it.
          yield* step(11 * DAY)
          yield* Effect.all([sweep, sweep], { concurrency: 2 })
          expect(yield* warningsOf(credentialId)).toEqual(["30d/live", "30d/test"])
          yield* step(33 * DAY + HOUR)
          yield* Effect.all([sweep, sweep], { concurrency: 2 })
          expect(yield* warningsOf(credentialId)).toEqual(["30d/live", "30d/test", "7d/live", "7d/test"])
          yield* step(39 * DAY + HOUR)
          yield* step(39 * DAY + 2 * HOUR)
          expect(yield* warningsOf(credentialId)).toEqual([
            "30d/live",
            "30d/test",
            "7d/live",
            "7d/test",
            "1d/live",
            "1d/test"
          ])
          expect(yield* statusOf(credentialId)).toBe("active")
          const { expired } = yield* step(40 * DAY + 1000)
          expect(expired).toBeGreaterThanOrEqual(1)
          expect(yield* statusOf(credentialId)).toBe("expired")
          yield* step(45 * DAY)
          expect((yield* warningsOf(credentialId)).length).toBe(6)
        }).pipe(Effect.provide(services)))

      it.effect("the expiry metric: seconds to the tenant's expiry, negative once expired, gone 30 days later", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const { tenantId } = yield* credentialExpiringIn(20)
          const sweep = yield* makeExpirySweep
          const series = Metric.withAttributes(credentialTimeToExpiry, { "tenant.id": tenantId })
          const reported = Effect.map(
            Metric.snapshot,
            (all) =>
              all.filter((s) => s.id === "etd.credential.time_to_expiry" && s.attributes?.["tenant.id"] === tenantId)
                .map((s) => (s.state as { value: number }).value)
          )
          yield* sweep
          expect(yield* reported).toEqual([20 * 86_400])
          yield* Effect.andThen(TestClock.setTime(START + 25 * DAY), sweep)
          expect(yield* reported).toEqual([-5 * 86_400])
          expect(Number((yield* Metric.value(series)).value)).toBe(-5 * 86_400)
          // Long expired: the tenant's series is removed, so an alert on it ends.
          yield* Effect.andThen(TestClock.setTime(START + 51 * DAY), sweep)
          expect(yield* reported).toEqual([])
        }).pipe(Effect.provide(services)))

      it.effect("a credential uploaded 5 days before expiry gets only the 7-day warning, then the 1-day one", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const { credentialId } = yield* credentialExpiringIn(5)
          const sweep = yield* makeExpirySweep
          yield* sweep
          expect(yield* warningsOf(credentialId)).toEqual(["7d/live", "7d/test"])
          yield* TestClock.setTime(START + 4 * DAY + HOUR)
          yield* sweep
          expect(yield* warningsOf(credentialId)).toEqual(["7d/live", "7d/test", "1d/live", "1d/test"])
        }).pipe(Effect.provide(services)))

      it.effect("the monitor is a supervised fiber on its Schedule, registered with readiness", () =>
        Effect.gen(function*() {
          yield* TestClock.setTime(START)
          const { credentialId } = yield* credentialExpiringIn(31)
          const readiness = yield* Readiness
          const monitor = ExpiryMonitorLive.pipe(
            Layer.provide(AppConfigTest({ credentialExpiryCheckInterval: Duration.hours(6) }))
          )
          const scope = yield* Scope.make()
          yield* Layer.buildWithScope(monitor, scope)
          expect((yield* readiness.check).checks.workers).toBe("ok")
          // Time moves a tick at a time, with real pauses for the database, until the sweep has seen it.
          const tickUntil = <A>(check: Effect.Effect<A, unknown, SqlClient.SqlClient>, done: (a: A) => boolean) =>
            eventually(Effect.tap(check, TestClock.adjust(Duration.hours(6))), done)
          expect(yield* warningsOf(credentialId)).toEqual([])
          // 30 days before not_after is one day from now.
          expect(yield* tickUntil(warningsOf(credentialId), (w) => w.length === 2)).toEqual(["30d/live", "30d/test"])
          expect(yield* tickUntil(statusOf(credentialId), (status) => status === "expired")).toBe("expired")
          expect(yield* warningsOf(credentialId)).toEqual([
            "30d/live",
            "30d/test",
            "7d/live",
            "7d/test",
            "1d/live",
            "1d/test"
          ])
          yield* Scope.close(scope, Exit.void)
        }).pipe(Effect.provide(Layer.merge(services, Readiness.layer))))
    }
  )
}
