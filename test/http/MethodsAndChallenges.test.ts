/**
 * Two HTTP conventions beyond SPEC §2's table: a path the service has, asked with a method it does
 * not take, is `405 method_not_allowed` with `Allow` (OPTIONS: `204` with `Allow`), while a path it
 * does not have stays `404 not_found`; and every bearer-authentication 401 carries the RFC 6750
 * `WWW-Authenticate` challenge, which the login and payment-provider 401s (not bearer
 * authentication) do not.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { createKey, PASSWORD, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { expectError, tokenShaped } from "./helpers.js"

/** Any method, for those `rawRequest` does not take (PUT, HEAD, OPTIONS). */
const request = (
  method: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS",
  url: string,
  token?: string
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let outgoing = HttpClientRequest.make(method)(url)
    if (token !== undefined) outgoing = HttpClientRequest.bearerToken(outgoing, token)
    const response = yield* http.execute(outgoing)
    return { status: response.status, headers: response.headers, text: yield* response.text }
  }).pipe(Effect.scoped)

const INVALID_TOKEN = `Bearer realm="etd", error="invalid_token"`

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `methods and authentication challenges (${database})`,
    (it) => {
      it.effect("a method the path does not take is 405 method_not_allowed with Allow; an unknown path stays 404", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const cases: ReadonlyArray<
            readonly [method: "PUT" | "DELETE" | "PATCH" | "POST" | "GET", url: string, allow: string]
          > = [
            ["PUT", "/v1/documents", "GET, HEAD, POST, OPTIONS"],
            // The unprefixed alias and a path with an id answer as their `/v1` form does.
            ["DELETE", "/documents/doc_00000000000000000000000000", "GET, HEAD, OPTIONS"],
            ["PATCH", `/v1/tenants/${owner.tenantId}/documents`, "GET, HEAD, POST, OPTIONS"],
            ["GET", "/v1/auth/login", "POST, OPTIONS"],
            ["POST", "/healthz", "GET, HEAD, OPTIONS"],
            ["DELETE", "/openapi.json", "GET, HEAD, OPTIONS"]
          ]
          for (const [method, url, allow] of cases) {
            // Credentials or none: the method is wrong before anything is authenticated.
            const response = yield* request(method, url, owner.session)
            expectError(response, 405, "method_not_allowed")
            expect(response.headers["allow"], `${method} ${url}`).toBe(allow)
            expect(response.headers["x-request-id"]).toBeDefined()
          }
          for (
            const [method, url] of [["GET", "/v1/no-such-route"], ["PUT", "/v1/documents/doc_1/nothing"], [
              "DELETE",
              "/nope"
            ]] as const
          ) {
            const response = yield* request(method, url)
            expectError(response, 404, "not_found")
            expect(response.headers["allow"]).toBeUndefined()
          }
        }))

      it.effect("OPTIONS on a path the service has is 204 with Allow and grants no CORS; on an unknown path it is 404", () =>
        Effect.gen(function*() {
          const options = yield* request("OPTIONS", "/v1/documents")
          expect(options.status).toBe(204)
          expect(options.text).toBe("")
          expect(options.headers["allow"]).toBe("GET, HEAD, POST, OPTIONS")
          expect(options.headers["access-control-allow-origin"]).toBeUndefined()
          expect((yield* request("OPTIONS", "/v1/auth/register")).headers["allow"]).toBe("POST, OPTIONS")
          expectError(yield* request("OPTIONS", "/v1/no-such-route"), 404, "not_found")
        }))

      it.effect("HEAD is served wherever GET is; a method the path takes is never 405", () =>
        Effect.gen(function*() {
          const head = yield* request("HEAD", "/healthz")
          expect(head.status).toBe(200)
          expect(head.text).toBe("")
          // HEAD of a path the service does not have, and a GET refused for its own reasons, keep their answers.
          expect((yield* request("HEAD", "/v1/no-such-route")).status).toBe(404)
          expectError(yield* request("GET", "/v1/documents"), 401, "missing_credentials")
        }))

      it.effect("every bearer 401 carries WWW-Authenticate: without an error when no credentials came, invalid_token otherwise", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const key = yield* createKey(owner)
          const api = yield* client(owner.session)
          const missing = [
            yield* rawRequest("GET", "/v1/documents"),
            yield* rawRequest("GET", "/v1/me"),
            yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`),
            yield* rawRequest("GET", "/v1/me", { headers: { authorization: "Basic dXNlcjpwYXNz" } })
          ]
          for (const response of missing) {
            expectError(response, 401, "missing_credentials")
            expect(response.headers["www-authenticate"]).toBe(`Bearer realm="etd"`)
          }
          // An unknown key, an unknown session, a token of neither kind on a route that takes both.
          const unknown: ReadonlyArray<
            readonly [response: { status: number; headers: Record<string, string>; text: string }, code: string]
          > = [
            [yield* rawRequest("GET", "/v1/documents", { token: tokenShaped("test") }), "invalid_api_key"],
            [yield* rawRequest("GET", "/v1/me", { token: tokenShaped("sess") }), "invalid_session"],
            [yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: "not-a-token" }), "invalid_api_key"],
            // The session branch of a route that takes both: a session's failure, not a key's.
            [
              yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: tokenShaped("sess") }),
              "invalid_session"
            ]
          ]
          for (const [response, code] of unknown) {
            expectError(response, 401, code)
            expect(response.headers["www-authenticate"], code).toBe(INVALID_TOKEN)
          }
          // A revoked key and a logged-out session.
          yield* api.apiKeys.revoke({ params: { tenantId: owner.tenantId, keyId: key.api_key.id } })
          const revoked = yield* rawRequest("GET", "/v1/documents", { token: key.token })
          expectError(revoked, 401, "api_key_revoked")
          expect(revoked.headers["www-authenticate"]).toBe(INVALID_TOKEN)
          yield* api.auth.logout()
          const loggedOut = yield* rawRequest("GET", "/v1/me", { token: owner.session })
          expectError(loggedOut, 401, "invalid_session")
          expect(loggedOut.headers["www-authenticate"]).toBe(INVALID_TOKEN)
        }))

      it.effect("a key without the endpoint's scope gets the insufficient_scope challenge; successes carry none", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const reader = yield* createKey(owner, "test", ["credentials:read"])
          const refused = yield* rawRequest("GET", "/v1/documents", { token: reader.token })
          expectError(refused, 403, "insufficient_scope")
          expect(refused.headers["www-authenticate"]).toBe(
            `Bearer realm="etd", error="insufficient_scope", scope="documents:read"`
          )
          const served = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}/credentials`, { token: reader.token })
          expect(served.status, served.text).toBe(200)
          expect(served.headers["www-authenticate"]).toBeUndefined()
        }))

      it.effect("a failed login and a bad payment-provider signature are 401 without a bearer challenge", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const login = yield* rawRequest("POST", "/v1/auth/login", {
            body: { email: owner.email, password: `${PASSWORD}!` }
          })
          expectError(login, 401, "invalid_credentials")
          expect(login.headers["www-authenticate"]).toBeUndefined()
          const webhook = yield* rawRequest("POST", "/v1/webhooks/payment-provider", {
            body: {
              id: "evt_1",
              type: "invoice.paid",
              created_at: new Date().toISOString(),
              data: { tenant_id: owner.tenantId }
            }
          })
          expectError(webhook, 401, "invalid_signature")
          expect(webhook.headers["www-authenticate"]).toBeUndefined()
          // The right password still logs in (the failure above is counted, not a lock-out).
          const api = yield* client()
          expect((yield* api.auth.login({ payload: { email: owner.email, password: Redacted.make(PASSWORD) } })).token)
            .toMatch(/^etd_sess_/)
        }))
    }
  )
}
