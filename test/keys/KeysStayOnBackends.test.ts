/**
 * SPEC §4, keys stay on backends: an API key sent with a browser's request marks (`Origin`,
 * `Sec-Fetch-Site`, `Sec-Fetch-Dest`) is refused with `403 api_key_in_browser`, stores nothing and
 * is raised like an exposure (source `browser`), on every authenticated endpoint, session-only ones
 * included. `Sec-Fetch-Mode` alone is no mark (Node's own `fetch` sends it), and a session from a
 * browser is the dashboard's normal traffic.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Metric } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { exposureAlerts } from "../../src/keys/ExposureMonitor.js"
import { KeyService } from "../../src/keys/KeyService.js"
import { exposureCandidates } from "../../src/telemetry/ExposureReports.js"
import { eventually, expectError, type RawResponse, tokenShaped } from "../http/helpers.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

/** One browser mark at a time, with the values a browser's `fetch` from another site would send. */
const browserMarks: ReadonlyArray<Record<string, string>> = [
  { origin: "https://shop.example.com" },
  { "sec-fetch-site": "cross-site" },
  { "sec-fetch-dest": "empty" }
]

const documentBody = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 1000, iss_rate: "2.00" }
}

const browserAlerts = Effect.map(
  Metric.value(Metric.withAttributes(exposureAlerts, { source: "browser", kind: "api_key" })),
  (state) => state.count
)

const unknownFromBrowsers = Effect.map(
  Metric.value(Metric.withAttributes(exposureCandidates, { outcome: "unknown", source: "browser" })),
  (state) => state.count
)

/** A 403 of this kind is no bearer challenge, and no answer to a key ever grants CORS. */
const expectRefused = (response: RawResponse, label: string) => {
  const body = expectError(response, 403, "api_key_in_browser")
  expect(String(body["message"]), label).toMatch(/backend|server/)
  expect(response.headers["www-authenticate"], label).toBeUndefined()
  expect(Object.keys(response.headers).filter((name) => name.startsWith("access-control-")), label).toEqual([])
}

/** What one browser request with a live key raises: a security alert naming it, an `api_key.exposed` event, the metric by one. */
const expectRaisedFromBrowser = (tenantId: string, apiKeyId: string, alertsBefore: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const alerts = yield* eventually(
      sql<{ kind: string; tenantId: string | null; detail: string }>`
        SELECT kind, tenant_id, detail FROM security_alerts WHERE api_key_id = ${apiKeyId}`,
      (rows) => rows.length > 0
    )
    expect(alerts).toEqual([{ kind: "api_key.exposed", tenantId, detail: "browser" }])
    const events = yield* sql<{ environment: string; source: string; apiKeyId: string }>`
      SELECT environment, data->'object'->>'source' AS source, data->'object'->>'api_key_id' AS api_key_id
      FROM events WHERE tenant_id = ${tenantId} AND type = 'api_key.exposed'`
    expect(events).toEqual([{ environment: "live", source: "browser", apiKeyId }])
    expect((yield* browserAlerts) - alertsBefore).toBe(1)
  })

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `keys stay on backends (${database})`,
    (it) => {
      it.effect("403 api_key_in_browser for a key with Origin, Sec-Fetch-Site or Sec-Fetch-Dest, on key and reader endpoints", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("browser")
          const { token } = yield* createKey(owner, "test")
          for (const headers of browserMarks) {
            for (
              const url of ["/v1/documents", `/v1/tenants/${owner.tenantId}`, `/v1/tenants/${owner.tenantId}/documents`]
            ) {
              const label = `${Object.keys(headers)[0]} ${url}`
              const response = yield* rawRequest("GET", url, { token, headers })
              expectRefused(response, label)
              expect(response.text, label).not.toContain(token)
            }
          }
          // A browser's preflight for a key route is granted nothing either.
          const http = yield* HttpClient.HttpClient
          const preflight = yield* http.execute(
            HttpClientRequest.make("OPTIONS")("/v1/documents").pipe(
              HttpClientRequest.setHeaders({
                origin: "https://shop.example.com",
                "access-control-request-method": "POST",
                "access-control-request-headers": "authorization, content-type"
              })
            )
          ).pipe(Effect.scoped)
          expect(Object.keys(preflight.headers).filter((name) => name.startsWith("access-control-"))).toEqual([])
          // Without the marks the same key works.
          expect((yield* rawRequest("GET", "/v1/documents", { token })).status).toBe(200)
        }))

      it.effect("403 api_key_in_browser on session-only endpoints too, with any mark: never invalid_session", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("browser-session-only")
          const { token } = yield* createKey(owner, "test")
          const endpoints: ReadonlyArray<{ method: "GET" | "POST"; url: string; body?: unknown }> = [
            { method: "GET", url: "/v1/me" },
            { method: "GET", url: "/v1/me/tenants" },
            { method: "GET", url: `/v1/tenants/${owner.tenantId}/api-keys` },
            { method: "GET", url: `/v1/tenants/${owner.tenantId}/members` },
            {
              method: "POST",
              url: `/v1/tenants/${owner.tenantId}/api-keys`,
              body: { name: "from a page", environment: "test", scopes: ["documents:read"] }
            },
            { method: "POST", url: "/v1/auth/logout" }
          ]
          for (const headers of browserMarks) {
            for (const { body, method, url } of endpoints) {
              const label = `${Object.keys(headers)[0]} ${method} ${url}`
              const response = yield* rawRequest(method, url, {
                token,
                headers,
                ...(body === undefined ? {} : { body })
              })
              expectRefused(response, label)
              expect(response.text, label).not.toContain(token)
            }
          }
        }))

      it.effect("a key sent from a browser to a session-only endpoint is raised as exposed like on a key endpoint", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("exposed-session-only")
          const key = yield* createKey(owner, "live")
          const before = yield* browserAlerts
          expectRefused(
            yield* rawRequest("GET", "/v1/me", { token: key.token, headers: { origin: "https://shop.example.com" } }),
            "/v1/me"
          )
          yield* expectRaisedFromBrowser(owner.tenantId, key.api_key.id, before)
          // An unknown key-shaped token sent there is counted as a browser exposure too, naming no key.
          const unknownBefore = yield* unknownFromBrowsers
          expectRefused(
            yield* rawRequest("GET", "/v1/me/tenants", {
              token: tokenShaped("test"),
              headers: { "sec-fetch-dest": "empty" }
            }),
            "unknown key"
          )
          yield* eventually(unknownFromBrowsers, (count) => count > unknownBefore)
        }))

      it.effect("public endpoints too: a key from a browser on login, register or /healthz is refused and raised", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("exposed-public")
          const key = yield* createKey(owner, "live")
          const before = yield* browserAlerts
          const headers = { origin: "https://shop.example.com" }
          expectRefused(
            yield* rawRequest("POST", "/v1/auth/login", {
              token: key.token,
              headers,
              body: { email: owner.email, password: "x".repeat(12) }
            }),
            "login"
          )
          expectRefused(yield* rawRequest("GET", "/healthz", { token: key.token, headers }), "healthz")
          // The exposure is raised once per request; the first names the key.
          yield* expectRaisedFromBrowser(owner.tenantId, key.api_key.id, before)
          // Without the key, a browser reaches the public endpoints as ever.
          expect((yield* rawRequest("GET", "/healthz", { headers })).status).toBe(200)
        }))

      it.effect("Sec-Fetch-Mode alone is no browser mark: Node's own fetch sends it", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("node-fetch")
          const { token } = yield* createKey(owner, "test")
          const headers = { "sec-fetch-mode": "cors" }
          const listed = yield* rawRequest("GET", "/v1/documents", { token, headers })
          expect(listed.status, listed.text).toBe(200)
          const issued = yield* rawRequest("POST", "/v1/documents", { token, headers, body: documentBody })
          expect(issued.status, issued.text).toBe(202)
          // The marks are what decides, whatever Sec-Fetch-Mode says.
          expectRefused(
            yield* rawRequest("GET", "/v1/documents", { token, headers: { ...headers, origin: "null" } }),
            "origin null"
          )
        }))

      it.effect("a session from a browser is the dashboard: accepted, with every mark", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("dashboard")
          const headers = {
            origin: "https://dashboard.example.com",
            "sec-fetch-site": "same-origin",
            "sec-fetch-dest": "empty",
            "sec-fetch-mode": "cors"
          }
          // The member's own endpoints, and one a key or a session may read.
          for (const url of ["/v1/me", `/v1/tenants/${owner.tenantId}/api-keys`, `/v1/tenants/${owner.tenantId}`]) {
            const response = yield* rawRequest("GET", url, { token: owner.session, headers })
            expect(response.status, `${url}: ${response.text}`).toBe(200)
          }
          // The same marks with a key of that tenant are refused.
          const { token } = yield* createKey(owner, "test")
          expectRefused(yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token, headers }), "key")
        }))

      it.effect("a key from a browser is raised as exposed: security alert, api_key.exposed event, counted", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owner = yield* registerOwner("exposed")
          const key = yield* createKey(owner, "live")
          const before = yield* browserAlerts
          expectRefused(
            yield* rawRequest("GET", "/v1/documents", {
              token: key.token,
              headers: { origin: "https://shop.example.com" }
            }),
            "live key"
          )
          yield* expectRaisedFromBrowser(owner.tenantId, key.api_key.id, before)
          // The token itself is stored nowhere.
          const rows = yield* sql<{ row: string }>`
          SELECT row_to_json(a)::text AS row FROM security_alerts a WHERE api_key_id = ${key.api_key.id}
          UNION ALL SELECT data::text AS row FROM events WHERE tenant_id = ${owner.tenantId}`
          for (const { row } of rows) expect(row).not.toContain(key.token)
          // The exposed key stays valid for its backend until its owner rotates it (SPEC §4).
          expect((yield* rawRequest("GET", "/v1/documents", { token: key.token })).status).toBe(200)
        }))

      it.effect("the refused request stores nothing: no document, no Idempotency-Key claim, no use of the key", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const keys = yield* KeyService
          const owner = yield* registerOwner("nothing")
          const key = yield* createKey(owner, "test", ["documents:write", "documents:read"])
          for (const headers of browserMarks) {
            const response = yield* rawRequest("POST", "/v1/documents", {
              token: key.token,
              body: documentBody,
              headers: { ...headers, "idempotency-key": "browser-1" }
            })
            expectRefused(response, Object.keys(headers)[0]!)
          }
          yield* keys.flushLastUsed
          expect(yield* sql`SELECT id FROM documents WHERE tenant_id = ${owner.tenantId}`).toEqual([])
          expect(yield* sql`SELECT key FROM idempotency_keys WHERE tenant_id = ${owner.tenantId}`).toEqual([])
          expect(
            yield* sql<{ lastUsedAt: Date | null }>`SELECT last_used_at FROM api_keys WHERE id = ${key.api_key.id}`
          )
            .toEqual([{ lastUsedAt: null }])
          // From its backend, the same request with the same Idempotency-Key is served: nothing was claimed.
          const issued = yield* rawRequest("POST", "/v1/documents", {
            token: key.token,
            body: documentBody,
            headers: { "idempotency-key": "browser-1" }
          })
          expect(issued.status, issued.text).toBe(202)
        }))

      it.effect("checked before the key is verified: unknown and revoked keys get the same 403; a malformed token stays 401", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owner = yield* registerOwner("unverified")
          const revoked = yield* createKey(owner, "test")
          yield* (yield* client(owner.session)).apiKeys.revoke({
            params: { tenantId: owner.tenantId, keyId: revoked.api_key.id }
          })
          const headers = { "sec-fetch-site": "cross-site" }
          const unknownBefore = yield* unknownFromBrowsers
          const unknown = tokenShaped("live")
          for (const token of [unknown, revoked.token]) {
            expectRefused(
              yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token, headers }),
              token.slice(0, 9)
            )
          }
          // The unknown token names no key: it is counted, and no alert is raised for it.
          yield* eventually(unknownFromBrowsers, (count) => count > unknownBefore)
          // The revoked key is still a key of the tenant: its exposure is recorded.
          yield* eventually(
            sql`SELECT id FROM security_alerts WHERE api_key_id = ${revoked.api_key.id} AND detail = 'browser'`,
            (rows) => rows.length === 1
          )
          for (const token of ["etd_live_short", `etd_test_${"A".repeat(32)}`]) {
            expectError(yield* rawRequest("GET", "/v1/documents", { token, headers }), 401, "invalid_api_key")
          }
        }))
    }
  )
}
