/**
 * The overview chart's figures (SPEC §15): documents created per UTC day and environment over the
 * last `days` days, today included, oldest first, every status counted, days without documents as
 * zero; for any member's session of the tenant.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Environment } from "../../src/domain/Principal.js"
import { addMember, expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const DAY = 24 * 60 * 60 * 1000

const invoice = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 1000, iss_rate: "2.00" }
}

const utcDate = (at: number) => new Date(at).toISOString().slice(0, 10)

for (const database of testDatabases) {
  const app = makeTestApp(database, { loginRateLimit: { perMinute: 10_000 } })
  layer(app, { timeout: 60_000, excludeTestServices: true })(`usage per day (${database})`, (it) => {
    it.effect("counts documents per UTC day and environment, zero-filled, oldest first, whatever their status", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const owner = yield* registerOwner("usage")
        const keys = { live: yield* createKey(owner, "live"), test: yield* createKey(owner, "test") }
        /** Issues a document, then dates it `daysAgo` days back (to the millisecond of now). */
        const issuedDaysAgo = (environment: Environment, daysAgo: number) =>
          Effect.gen(function*() {
            const response = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/documents`, {
              token: keys[environment].token,
              body: invoice
            })
            expect(response.status, response.text).toBe(202)
            const id = String(field(response.json, "id"))
            if (daysAgo > 0) {
              yield* sql`UPDATE documents SET created_at = created_at - ${`${daysAgo} days`}::interval WHERE id = ${id}`
            }
            return id
          })
        yield* issuedDaysAgo("test", 0)
        yield* issuedDaysAgo("test", 0)
        yield* issuedDaysAgo("live", 0)
        const failed = yield* issuedDaysAgo("live", 2)
        yield* sql`UPDATE documents SET status = 'failed' WHERE id = ${failed}`
        yield* issuedDaysAgo("test", 6)
        // Outside a 7-day window, inside the default 30-day one.
        yield* issuedDaysAgo("live", 7)
        // Outside the longest window.
        yield* issuedDaysAgo("test", 90)
        // Another tenant's document counts only for that tenant.
        const other = yield* registerOwner("other")
        const otherKey = yield* createKey(other, "test")
        expect((yield* rawRequest("POST", "/v1/documents", { token: otherKey.token, body: invoice })).status).toBe(202)

        const developer = yield* addMember(owner, "developer")
        const api = yield* client(developer.session)
        const today = Date.now()
        const week = yield* api.usage.get({ params: { tenantId: owner.tenantId }, query: { days: 7 } })
        expect(week.object).toBe("usage")
        // Exactly 7 consecutive days ending today (UTC), oldest first.
        expect(week.days.map((d) => d.date)).toEqual([6, 5, 4, 3, 2, 1, 0].map((ago) => utcDate(today - ago * DAY)))
        expect(week.days.map((d) => [d.live, d.test])).toEqual([
          [0, 1],
          [0, 0],
          [0, 0],
          [0, 0],
          [1, 0],
          [0, 0],
          [1, 2]
        ])

        const month = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/usage`, { token: owner.session })
        expect(month.status, month.text).toBe(200)
        const days = field(month.json, "days") as Array<{ date: string; live: number; test: number }>
        expect(days).toHaveLength(30)
        expect(days[0]!.date).toBe(utcDate(today - 29 * DAY))
        expect(days[29]).toEqual({ date: utcDate(today), live: 1, test: 2 })
        expect(days[22]).toEqual({ date: utcDate(today - 7 * DAY), live: 1, test: 0 })
        expect(days.reduce((sum, d) => sum + d.live + d.test, 0)).toBe(6)

        const longest = yield* api.usage.get({ params: { tenantId: owner.tenantId }, query: { days: 90 } })
        expect(longest.days).toHaveLength(90)
        expect(longest.days.reduce((sum, d) => sum + d.live + d.test, 0)).toBe(6)
        const one = yield* api.usage.get({ params: { tenantId: owner.tenantId }, query: { days: 1 } })
        expect(one.days).toEqual([{ date: utcDate(today), live: 1, test: 2 }])

        const otherUsage = yield* (yield* client(other.session)).usage.get({
          params: { tenantId: other.tenantId },
          query: { days: 1 }
        })
        expect(otherUsage.days).toEqual([{ date: utcDate(today), live: 0, test: 1 }])
      }))

    it.effect("a tenant without documents gets every day at zero", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("empty")
        const usage = yield* (yield* client(owner.session)).usage.get({
          params: { tenantId: owner.tenantId },
          query: {}
        })
        expect(usage.days).toHaveLength(30)
        expect(usage.days.every((d) => d.live === 0 && d.test === 0)).toBe(true)
      }))

    it.effect("days outside 1..90 or not an integer is 400; a stranger's session 404; an API key is no session", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("bounds")
        const path = `/v1/tenants/${owner.tenantId}/usage`
        for (const days of ["0", "91", "-1", "1.5", "abc", ""]) {
          const response = yield* rawRequest("GET", `${path}?days=${days}`, { token: owner.session })
          expectError(response, 400, "invalid_request")
          expect(JSON.stringify(field(response.json, "issues")), days).toContain("days")
        }
        const stranger = yield* registerOwner("stranger")
        expectError(yield* rawRequest("GET", path, { token: stranger.session }), 404, "not_found")
        const key = yield* createKey(owner, "live")
        expectError(yield* rawRequest("GET", path, { token: key.token }), 401, "invalid_session")
        expectError(yield* rawRequest("GET", path), 401, "missing_credentials")
      }))
  })
}
