/**
 * Exposure alerts under a flood (SPEC §4), end to end: anonymous requests carrying 300
 * token-shaped strings each in their URL, while a real session token and a real API key leak the
 * same way. The real ones are acted on as SPEC §4 says; the junk raises no alert and costs at most
 * MAX_TOKENS_PER_REPORT lookups per request; near misses of the token shape cost none.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { SqlClient } from "effect/sql"
import { generateToken, type TokenKind } from "../../src/domain/Tokens.js"
import {
  type CandidateOutcome,
  exposureCandidates,
  MAX_TOKENS_PER_REPORT
} from "../../src/telemetry/ExposureReports.js"
import { eventually, expectError } from "../http/helpers.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const TOKENS_PER_REQUEST = 300
const kinds: ReadonlyArray<TokenKind> = ["live", "test", "sess"]

/** An anonymous request whose query carries 300 fresh token-shaped strings (about 13 KB of URL). */
const floodRequest = () => {
  const query = Array.from({ length: TOKENS_PER_REQUEST }, (_, i) => `t${i}=${generateToken(kinds[i % 3]!)}`)
  return rawRequest("GET", `/v1/tenants/ten_x?${query.join("&")}`)
}

/** `count` flood requests at once. */
const flood = (count: number) => Effect.all(Array.from({ length: count }, floodRequest), { concurrency: "unbounded" })

const candidates = (outcome: CandidateOutcome) =>
  Effect.map(
    Metric.value(Metric.withAttributes(exposureCandidates, { outcome, source: "url" })),
    (state) => state.count
  )

const alertsWithoutKey = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<
    { kind: string }
  >`SELECT kind FROM security_alerts WHERE api_key_id IS NULL AND kind = 'api_key.exposed'`
})

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `exposure alerts under a flood (${database})`,
    (it) => {
      it.effect("10 requests × 300 token-shaped strings: a session and a key leaked meanwhile are revoked and alerted", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owner = yield* registerOwner("flood")
          const key = yield* createKey(owner, "live")
          const [unknownBefore, overCapBefore] = [yield* candidates("unknown"), yield* candidates("over_cap")]
          const alertsBefore = (yield* alertsWithoutKey).length
          const before = yield* flood(5)
          const leaks = [
            yield* rawRequest("GET", `/v1/me?session=${owner.session}`),
            yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}?api_key=${key.token}`)
          ]
          const after = yield* flood(5)
          for (const response of [...before, ...leaks, ...after]) expectError(response, 400, "api_key_in_url")

          // The session is revoked (SPEC §4: at once, no integration depends on it) ...
          yield* eventually(
            rawRequest("GET", "/v1/me", { token: owner.session }),
            (response) => response.status === 401
          )
          // ... and the key is alerted to its tenant, in its environment.
          const alerts = yield* eventually(
            sql<{ kind: string; tenantId: string | null; detail: string }>`
            SELECT kind, tenant_id, detail FROM security_alerts WHERE api_key_id = ${key.api_key.id}`,
            (rows) => rows.length > 0
          )
          expect(alerts).toEqual([{ kind: "api_key.exposed", tenantId: owner.tenantId, detail: "url" }])
          const events = yield* sql<{ environment: string }>`
          SELECT environment FROM events WHERE tenant_id = ${owner.tenantId} AND type = 'api_key.exposed'`
          expect(events).toEqual([{ environment: "live" }])

          // The junk: at most 16 lookups per request, the rest only counted, and no alert.
          expect((yield* candidates("over_cap")) - overCapBefore).toBe(
            10 * (TOKENS_PER_REQUEST - MAX_TOKENS_PER_REPORT)
          )
          const lookedUp = yield* eventually(
            Effect.map(candidates("unknown"), (count) => count - unknownBefore),
            (count) => count >= 10 * MAX_TOKENS_PER_REPORT
          )
          expect(lookedUp).toBe(10 * MAX_TOKENS_PER_REPORT)
          expect((yield* alertsWithoutKey).length).toBe(alertsBefore)
        }))

      it.effect("near misses of the token shape in a URL are not looked up", () =>
        Effect.gen(function*() {
          const unknownBefore = yield* candidates("unknown")
          const body = "a".repeat(32)
          // Refused for carrying something token-like, but none is a token: 33 characters, or glued to a word.
          for (const miss of [`etd_test_${body}b`, `xetd_test_${body}`]) {
            expectError(yield* rawRequest("GET", `/v1/tenants/ten_x?q=${miss}`), 400, "api_key_in_url")
          }
          // Not token-like at all: 31 characters, upper case, another prefix.
          for (const miss of [`etd_test_${body.slice(1)}`, `etd_test_${body.toUpperCase()}`, `etd_prod_${body}`]) {
            expect((yield* rawRequest("GET", `/v1/tenants/ten_x?q=${miss}`)).status).not.toBe(400)
          }
          // A well-formed stranger last: the queue is first in, first out, so once it is looked up
          // anything the near misses had queued would have been too.
          expectError(yield* rawRequest("GET", `/v1/tenants/ten_x?q=${generateToken("test")}`), 400, "api_key_in_url")
          const lookedUp = yield* eventually(
            Effect.map(candidates("unknown"), (count) => count - unknownBefore),
            (count) => count >= 1
          )
          expect(lookedUp).toBe(1)
        }))
    }
  )
}
