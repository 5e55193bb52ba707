/**
 * SPEC §2's error table, row by row, for every row the service can produce today: status, stable
 * `code`, a human `message`, and for validation the list of `issues`.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Metric, Redacted, Stream } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { hashToken as sha256Hex } from "../../src/domain/Tokens.js"
import { MAX_BODY_BYTES } from "../../src/http/RequestGuards.js"
import { exposureAlerts } from "../../src/keys/ExposureMonitor.js"
import { createKey, PASSWORD, registerOwner, uniqueEmail } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { eventually, expectError, issuesOf, jsonObject, tokenShaped } from "./helpers.js"

/** A POST whose body is streamed in chunks, so the request carries no Content-Length. */
const chunkedPost = (url: string, totalBytes: number) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
    const count = Math.ceil(totalBytes / chunk.length)
    const body = Stream.fromIterable(Array.from({ length: count }, () => chunk))
    const request = HttpClientRequest.post(url).pipe(
      HttpClientRequest.bodyStream(body, { contentType: "application/json" })
    )
    expect(request.body._tag).toBe("Stream")
    const response = yield* http.execute(request)
    return { status: response.status, headers: response.headers, text: yield* response.text }
  }).pipe(Effect.scoped)

const exposuresFromUrls = Effect.map(
  Metric.value(Metric.withAttributes(exposureAlerts, { source: "url", kind: "api_key" })),
  (state) => state.count
)

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(`error table (${database})`, (it) => {
    it.effect("400 invalid_request lists every invalid field of a body, not only the first", () =>
      Effect.gen(function*() {
        const response = yield* rawRequest("POST", "/v1/auth/register", {
          body: { email: "not-an-email", password: "short" }
        })
        const issues = issuesOf(expectError(response, 400, "invalid_request"))
        expect(issues.map((issue) => issue.path)).toEqual([["email"], ["password"]])
        expect(issues[1]?.message).toContain("12 characters")
      }))

    it.effect("400 invalid_request reports nested fields with their full path", () =>
      Effect.gen(function*() {
        const response = yield* rawRequest("POST", "/v1/auth/register", {
          body: { email: "nope", password: PASSWORD, tenant: { name: "", tax_id: "11.222.333/0001-82" } }
        })
        const issues = issuesOf(expectError(response, 400, "invalid_request"))
        expect(issues.map((issue) => issue.path)).toEqual(
          expect.arrayContaining([["email"], ["tenant", "name"], ["tenant", "tax_id"]])
        )
        expect(issues).toHaveLength(3)
      }))

    it.effect("400 invalid_request for a missing required field and a wrong type", () =>
      Effect.gen(function*() {
        const response = yield* rawRequest("POST", "/v1/auth/login", { body: { email: 42 } })
        const issues = issuesOf(expectError(response, 400, "invalid_request"))
        expect(issues.map((issue) => issue.path)).toEqual(expect.arrayContaining([["email"], ["password"]]))
      }))

    it.effect("400 invalid_request for malformed JSON, never a 500", () =>
      Effect.gen(function*() {
        for (const rawBody of ["{not json", "{\"email\": \"a@b.co\",", "\u0000"]) {
          const response = yield* rawRequest("POST", "/v1/auth/login", { rawBody })
          const body = expectError(response, 400, "invalid_request")
          expect(String(body["message"])).not.toMatch(/SyntaxError|JSON\.parse|at position/)
        }
      }))

    it.effect("400 invalid_request for a body that is JSON but not an object", () =>
      Effect.gen(function*() {
        const response = yield* rawRequest("POST", "/v1/auth/login", { rawBody: "[1, 2]" })
        expectError(response, 400, "invalid_request")
      }))

    it.effect("400 invalid_request naming the accepted content types for a body of another type", () =>
      Effect.gen(function*() {
        const http = yield* HttpClient.HttpClient
        const send = (url: string, contentType: string, token?: string) =>
          Effect.gen(function*() {
            let request = HttpClientRequest.post(url).pipe(
              HttpClientRequest.bodyText("{\"email\": \"a@b.co\", \"password\": \"x\"}", contentType)
            )
            if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
            const response = yield* http.execute(request)
            return { status: response.status, headers: response.headers, text: yield* response.text }
          }).pipe(Effect.scoped)
        const login = expectError(yield* send("/v1/auth/login", "text/plain"), 400, "invalid_request")
        expect(login["message"]).toBe("Send the request body as application/json.")
        // The certificate upload takes two encodings, and says so.
        const owner = yield* registerOwner()
        const upload = yield* send(`/v1/tenants/${owner.tenantId}/credentials`, "text/csv", owner.session)
        expect(String(expectError(upload, 400, "invalid_request")["message"])).toMatch(
          /application\/json or multipart\/form-data|multipart\/form-data or application\/json/
        )
      }))

    it.effect("400 invalid_request for an out-of-range or non-numeric query parameter", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (const limit of ["0", "101", "abc", "2.5", "-1"]) {
          const response = yield* rawRequest("GET", `/v1/me/tenants?limit=${limit}`, { token: owner.session })
          const issues = issuesOf(expectError(response, 400, "invalid_request"))
          // One issue, about `limit`, without noise from the schema's internals.
          expect(issues, limit).toEqual([{ path: ["limit"], message: expect.any(String) }])
        }
        const ok = yield* rawRequest("GET", "/v1/me/tenants?limit=100", { token: owner.session })
        expect(ok.status).toBe(200)
      }))

    it.effect("400 invalid_request for a malformed id in the path", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const response = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/api-keys/not-a-key-id/revoke`, {
          token: owner.session
        })
        const issues = issuesOf(expectError(response, 400, "invalid_request"))
        expect(issues.map((issue) => issue.path)).toEqual([["keyId"]])
      }))

    it.effect("a malformed tenant id answers like an unknown tenant (404), revealing nothing", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const key = yield* createKey(owner)
        for (const token of [owner.session, key.token]) {
          expectError(yield* rawRequest("GET", "/v1/tenants/not-a-tenant", { token }), 404, "not_found")
        }
      }))

    it.effect("400 api_key_in_url for a token-shaped string in the query, the path or URL-encoded", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const unknown = tokenShaped("test")
        const live = tokenShaped("live")
        const session = tokenShaped("sess")
        const encoded = [...unknown].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`).join("")
        const urls = [
          `/v1/tenants/${owner.tenantId}?api_key=${unknown}`,
          `/v1/tenants/${owner.tenantId}?x=1&token=Bearer%20${live}`,
          `/v1/tenants/${unknown}`,
          `/v1/me/tenants/${session}`,
          `/tenants/${owner.tenantId}?key=${unknown}`,
          `/v1/tenants/${owner.tenantId}?api_key=${encoded}`,
          `/v1/tenants/${encoded}`,
          `/v1/tenants/${owner.tenantId}?api_key=${unknown.replace(/_/g, "%5F")}`,
          // A malformed escape, or bytes that are not UTF-8, elsewhere in the URL hide no encoded token.
          `/v1/tenants/${owner.tenantId}?bad=%E0%A4%A&api_key=${encoded}`,
          `/v1/tenants/${owner.tenantId}?bad=%ff&api_key=${unknown.replace(/_/g, "%5F")}`,
          // Before routing and before authentication: even an unknown route with valid credentials.
          `/v1/no-such-route/${unknown}`
        ]
        for (const url of urls) {
          const response = yield* rawRequest("GET", url, { token: owner.session })
          const body = expectError(response, 400, "api_key_in_url")
          // The answer never echoes the token back.
          expect(response.text, url).not.toContain(unknown)
          expect(body["message"]).toMatch(/Authorization header/)
        }
        const posted = yield* rawRequest("POST", `/v1/auth/login?token=${unknown}`, {
          body: { email: owner.email, password: PASSWORD }
        })
        expectError(posted, 400, "api_key_in_url")
      }))

    it.effect("a near-miss of the token shape in the URL is not treated as a key", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        // 31 characters, and an upper-case one: not a token.
        for (
          const query of [
            `q=etd_test_${"a".repeat(31)}`,
            `q=etd_test_${"A".repeat(32)}`,
            "q=etd_prod_" + "a".repeat(32)
          ]
        ) {
          const response = yield* rawRequest("GET", `/v1/me/tenants?${query}`, { token: owner.session })
          expect(response.status, query).toBe(200)
        }
      }))

    it.effect("a real key in the URL raises an exposure alert naming the key, and counts it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "live")
        const before = yield* exposuresFromUrls
        const response = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}?api_key=${key.token}`)
        expectError(response, 400, "api_key_in_url")
        const alerts = yield* eventually(
          sql<{ kind: string; tenantId: string | null; detail: string }>`
            SELECT kind, tenant_id, detail FROM security_alerts WHERE api_key_id = ${key.api_key.id}`,
          (rows) => rows.length > 0
        )
        expect(alerts).toEqual([{ kind: "api_key.exposed", tenantId: owner.tenantId, detail: "url" }])
        expect(yield* exposuresFromUrls).toBeGreaterThan(before)
        // The token itself is stored nowhere in the alert.
        const text = yield* sql<{ row: string }>`SELECT row_to_json(a)::text AS row FROM security_alerts a`
        for (const { row } of text) expect(row).not.toContain(key.token)
      }))

    it.effect("a session token in the URL is refused and the session revoked at once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const owner = yield* registerOwner()
        expectError(yield* rawRequest("GET", `/v1/me?session=${owner.session}`), 400, "api_key_in_url")
        yield* eventually(
          sql<{ revokedAt: Date | null }>`SELECT revoked_at FROM sessions WHERE token_hash = ${
            sha256Hex(owner.session)
          }`,
          (rows) => rows[0]?.revokedAt !== null && rows[0]?.revokedAt !== undefined
        )
        expectError(yield* rawRequest("GET", "/v1/me", { token: owner.session }), 401, "invalid_session")
        const alerts = yield* sql<{ kind: string }>`SELECT kind FROM security_alerts WHERE kind = 'session.exposed'`
        expect(alerts.length).toBeGreaterThan(0)
      }))

    it.effect("a real key in the path is reported too", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const owner = yield* registerOwner()
        const key = yield* createKey(owner, "test")
        expectError(yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/${key.token}`), 400, "api_key_in_url")
        const alerts = yield* eventually(
          sql<{ apiKeyId: string }>`SELECT api_key_id FROM security_alerts WHERE api_key_id = ${key.api_key.id}`,
          (rows) => rows.length > 0
        )
        expect(alerts).toHaveLength(1)
      }))

    it.effect("401 missing_credentials without a bearer token", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const headerSets: ReadonlyArray<Record<string, string>> = [
          {},
          { authorization: "Basic dXNlcjpwYXNzd29yZA==" },
          { authorization: "Bearer" },
          { authorization: "Bearer " },
          { authorization: `Token ${tokenShaped("test")}` },
          { authorization: `${tokenShaped("test")}` }
        ]
        for (const headers of headerSets) {
          for (const url of ["/v1/me", `/v1/tenants/${owner.tenantId}`, `/v1/tenants/${owner.tenantId}/api-keys`]) {
            const response = yield* rawRequest("GET", url, { headers })
            expectError(response, 401, "missing_credentials")
          }
        }
      }))

    it.effect("401 invalid_api_key for an unknown or malformed key", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        for (
          const token of [
            tokenShaped("test"),
            tokenShaped("live"),
            "etd_test_short",
            "etd_live_" + "A".repeat(32),
            "garbage"
          ]
        ) {
          const response = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token })
          expectError(response, 401, "invalid_api_key")
        }
      }))

    it.effect("401 invalid_session for an unknown or logged-out session", () =>
      Effect.gen(function*() {
        expectError(yield* rawRequest("GET", "/v1/me", { token: tokenShaped("sess") }), 401, "invalid_session")
        const owner = yield* registerOwner()
        const api = yield* client(owner.session)
        yield* api.auth.logout()
        expectError(yield* rawRequest("GET", "/v1/me", { token: owner.session }), 401, "invalid_session")
        // An API key is not a session: the dashboard endpoints refuse it.
        const other = yield* registerOwner()
        const key = yield* createKey(other)
        expectError(yield* rawRequest("GET", "/v1/me", { token: key.token }), 401, "invalid_session")
      }))

    it.effect("401 invalid_credentials for a failed login", () =>
      Effect.gen(function*() {
        const response = yield* rawRequest("POST", "/v1/auth/login", {
          body: { email: uniqueEmail(), password: PASSWORD }
        })
        expectError(response, 401, "invalid_credentials")
      }))

    it.effect("409 conflict for a taken email", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner()
        const response = yield* rawRequest("POST", "/v1/auth/register", {
          body: { email: owner.email, password: PASSWORD }
        })
        expectError(response, 409, "conflict")
      }))

    it.effect("404 not_found for an unknown route, prefixed or not; 405 method_not_allowed for a known path's unknown method", () =>
      Effect.gen(function*() {
        for (
          const [method, url] of [["GET", "/v1/nothing-here"], ["GET", "/nothing-here"], [
            "POST",
            "/v1/nothing-here"
          ]] as const
        ) {
          expectError(yield* rawRequest(method, url), 404, "not_found")
        }
        for (const [method, url] of [["POST", "/v1/me"], ["DELETE", "/v1/me"], ["DELETE", "/me"]] as const) {
          const response = yield* rawRequest(method, url)
          expectError(response, 405, "method_not_allowed")
          expect(response.headers["allow"]).toBe("GET, HEAD, OPTIONS")
        }
      }))

    it.effect("413 payload_too_large for a body over 1 MiB with a Content-Length", () =>
      Effect.gen(function*() {
        const rawBody = JSON.stringify({ email: "a@example.com", password: "x".repeat(MAX_BODY_BYTES) })
        const response = yield* rawRequest("POST", "/v1/auth/login", { rawBody })
        expectError(response, 413, "payload_too_large")
        // Also ahead of authentication and routing: the size is checked first.
        expectError(yield* rawRequest("POST", "/v1/nowhere", { rawBody }), 413, "payload_too_large")
      }))

    it.effect("a chunked body over 1 MiB without a Content-Length gets 413, not a reset", () =>
      Effect.gen(function*() {
        const refused = yield* chunkedPost("/v1/auth/login", MAX_BODY_BYTES + 256 * 1024)
        expectError(refused, 413, "payload_too_large")
        // A chunked body under the limit is read normally.
        const small = yield* chunkedPost("/v1/auth/login", 64 * 1024)
        expectError(small, 400, "invalid_request")
        // And the server is unharmed.
        expect((yield* rawRequest("GET", "/healthz")).status).toBe(200)
      }))

    it.effect("a body just under 1 MiB is read, not refused for its size", () =>
      Effect.gen(function*() {
        const prefix = JSON.stringify({ email: "a@example.com", password: "" })
        const rawBody = prefix.replace(
          "\"password\":\"\"",
          `"password":"${"x".repeat(MAX_BODY_BYTES - prefix.length)}"`
        )
        expect(new TextEncoder().encode(rawBody).length).toBe(MAX_BODY_BYTES)
        const response = yield* rawRequest("POST", "/v1/auth/login", { rawBody })
        // The password is over the schema's 1024 characters: a validation error, not 413.
        expectError(response, 400, "invalid_request")
      }))
  })

  layer(makeTestApp(database, { rateLimit: { perSecond: 1, burst: 3 } }), {
    timeout: 60_000,
    excludeTestServices: true
  })(
    `rate limits per API key (${database})`,
    (it) => {
      it.effect(
        "429 rate_limited with Retry-After and RateLimit-* once the burst is spent",
        () =>
          Effect.gen(function*() {
            const owner = yield* registerOwner()
            const key = yield* createKey(owner)
            const url = `/v1/tenants/${owner.tenantId}`
            const allowed = []
            for (let i = 0; i < 3; i++) allowed.push(yield* rawRequest("GET", url, { token: key.token }))
            for (const [i, response] of allowed.entries()) {
              expect(response.status).toBe(200)
              expect(response.headers["ratelimit-limit"]).toBe("3")
              expect(response.headers["ratelimit-remaining"]).toBe(String(2 - i))
              expect(Number(response.headers["ratelimit-reset"])).toBeGreaterThan(0)
              expect(response.headers["retry-after"]).toBeUndefined()
            }
            const limited = yield* rawRequest("GET", url, { token: key.token })
            const body = expectError(limited, 429, "rate_limited")
            const retryAfter = Number(limited.headers["retry-after"])
            expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true)
            expect(body["retry_after"]).toBe(retryAfter)
            expect(limited.headers["ratelimit-limit"]).toBe("3")
            expect(limited.headers["ratelimit-remaining"]).toBe("0")
            expect(Number(limited.headers["ratelimit-reset"])).toBeGreaterThanOrEqual(1)

            // The bucket is per key: another key of the same tenant still passes.
            const other = yield* createKey(owner)
            expect((yield* rawRequest("GET", url, { token: other.token })).status).toBe(200)

            // After Retry-After seconds the key is served again.
            yield* Effect.sleep(`${retryAfter} seconds`)
            expect((yield* rawRequest("GET", url, { token: key.token })).status).toBe(200)
          }),
        { timeout: 20_000 }
      )
    }
  )

  layer(makeTestApp(database, { loginRateLimit: { perMinute: 3 } }), { timeout: 60_000, excludeTestServices: true })(
    `login rate limit (${database})`,
    (it) => {
      it.effect("429 rate_limited after too many failed logins for one email, even with the right password", () =>
        Effect.gen(function*() {
          // Registered but never logged in: no address is known to be the owner's (RateLimits.test.ts).
          const owner = { email: uniqueEmail() }
          const api = yield* client()
          yield* api.auth.register({ payload: { email: owner.email, password: Redacted.make(PASSWORD) } })
          // Three failures use up the email's budget of three.
          for (let i = 0; i < 3; i++) {
            const wrong = yield* rawRequest("POST", "/v1/auth/login", {
              body: { email: owner.email, password: "wrong password!!" }
            })
            expectError(wrong, 401, "invalid_credentials")
          }
          const limited = yield* rawRequest("POST", "/v1/auth/login", {
            body: { email: owner.email, password: PASSWORD }
          })
          const body = expectError(limited, 429, "rate_limited")
          expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1)
          expect(typeof body["retry_after"]).toBe("number")
          // The same email in another spelling shares the budget.
          const shouted = yield* rawRequest("POST", "/v1/auth/login", {
            body: { email: owner.email.toUpperCase(), password: PASSWORD }
          })
          expectError(shouted, 429, "rate_limited")
          // Another email is not affected.
          const other = yield* rawRequest("POST", "/v1/auth/login", {
            body: { email: uniqueEmail(), password: PASSWORD }
          })
          expectError(other, 401, "invalid_credentials")
        }))
    }
  )

  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `internal errors (${database})`,
    (it) => {
      it.effect("500 internal_error carries no SQL, stack or internals", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owner = yield* registerOwner()
          yield* sql`DROP TABLE sessions CASCADE`
          const response = yield* rawRequest("GET", "/v1/me", { token: owner.session })
          expectError(response, 500, "internal_error")
          // `_tag` is the contract's discriminator for the typed client; nothing else is added.
          expect(jsonObject(response)).toEqual({
            _tag: "InternalError",
            code: "internal_error",
            message: expect.any(String)
          })
          expect(response.text).not.toMatch(/sessions|relation|SELECT|SqlError|stack|\bat\s|\.ts:|node_modules/i)
          expect(response.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}(-[0-9a-f]{16})?$/)
          // The typed client decodes it as a typed value too.
          const api = yield* client(owner.session)
          const error = yield* Effect.flip(api.auth.me())
          expect(error._tag).toBe("InternalError")
        }))

      it.effect("500 internal_error on a write path as well (registration)", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`DROP TABLE memberships CASCADE`
          const response = yield* rawRequest("POST", "/v1/auth/register", {
            body: { email: uniqueEmail(), password: PASSWORD, tenant: { name: "Acme", tax_id: "11222333000181" } }
          })
          expectError(response, 500, "internal_error")
          expect(response.text).not.toMatch(/memberships|relation|INSERT|SqlError/i)
          void Redacted
        }))
    }
  )
}
