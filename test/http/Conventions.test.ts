/**
 * SPEC §2 conventions that hold for every endpoint: `x-request-id` naming the request's trace, the
 * unprefixed aliases of `/v1` paths, and the public system pages of §12.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { randomBytes } from "node:crypto"
import { createKey, PASSWORD, registerOwner } from "../support/fixtures.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { expectError, jsonObject, tokenShaped } from "./helpers.js"

// The trace id, and our span id when the client continued its own trace (the test client does).
const REQUEST_ID = /^[0-9a-f]{32}(-[0-9a-f]{16})?$/

/**
 * A request with our own W3C `traceparent`. The client's tracer propagation is off, or it would
 * replace the header with the test fiber's own span.
 */
const withTraceparent = (method: "GET" | "POST", url: string, traceparent: string, token?: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeader("traceparent", traceparent))
    if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
    const response = yield* http.execute(request)
    return { status: response.status, headers: response.headers, text: yield* response.text }
  }).pipe(Effect.provideService(HttpClient.TracerPropagationEnabled, false), Effect.scoped)

const newTraceId = () => randomBytes(16).toString("hex")
const traceparentOf = (traceId: string) => `00-${traceId}-${randomBytes(8).toString("hex")}-01`

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `HTTP conventions (${database})`,
    (it) => {
      it.effect("every response carries a distinct x-request-id naming its trace", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const responses = [
            yield* rawRequest("GET", "/healthz"),
            yield* rawRequest("GET", "/readyz"),
            yield* rawRequest("GET", "/v1/me", { token: owner.session }),
            yield* rawRequest("GET", `/tenants/${owner.tenantId}`, { token: owner.session }),
            yield* rawRequest("GET", "/v1/me"),
            yield* rawRequest("POST", "/v1/auth/login", { rawBody: "{" }),
            yield* rawRequest("GET", `/v1/me?k=${tokenShaped()}`),
            yield* rawRequest("GET", "/v1/no-such-route"),
            yield* rawRequest("GET", "/no-such-route"),
            yield* rawRequest("POST", "/v1/auth/login", { rawBody: "x".repeat(1024 * 1024 + 1) }),
            yield* rawRequest("GET", "/openapi.json")
          ]
          expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 401, 400, 400, 404, 404, 413, 200])
          const ids = responses.map((r) => r.headers["x-request-id"])
          for (const id of ids) expect(id).toMatch(REQUEST_ID)
          expect(new Set(ids).size).toBe(ids.length)
        }))

      it.effect("x-request-id names the caller's trace and our span when the request continues an incoming traceparent", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const key = yield* createKey(owner)
          const cases: ReadonlyArray<
            readonly [method: "GET" | "POST", url: string, token: string | undefined, status: number]
          > = [
            ["GET", "/healthz", undefined, 200],
            ["GET", `/v1/tenants/${owner.tenantId}`, key.token, 200],
            ["GET", `/tenants/${owner.tenantId}`, owner.session, 200],
            ["GET", "/v1/me", undefined, 401],
            ["POST", "/v1/auth/login", undefined, 400],
            ["GET", "/v1/no-such-route", undefined, 404]
          ]
          for (const [method, url, token, status] of cases) {
            const traceId = newTraceId()
            const response = yield* withTraceparent(method, url, traceparentOf(traceId), token)
            expect(response.status, url).toBe(status)
            expect(response.headers["x-request-id"], url).toMatch(new RegExp(`^${traceId}-[0-9a-f]{16}$`))
          }
        }))

      it.effect("x-request-id stays unique per request when callers reuse one traceparent", () =>
        Effect.gen(function*() {
          const traceparent = traceparentOf(newTraceId())
          const ids = new Set<string | undefined>()
          for (let i = 0; i < 5; i++) {
            ids.add((yield* withTraceparent("GET", "/healthz", traceparent)).headers["x-request-id"])
          }
          expect(ids.size).toBe(5)
        }))

      it.effect("without a traceparent every request starts its own trace", () =>
        Effect.gen(function*() {
          const first = yield* withTraceparent("GET", "/healthz", "garbage")
          const second = yield* withTraceparent("GET", "/healthz", "garbage")
          // A trace of its own: the request id is just its trace id.
          expect(first.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/)
          expect(second.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/)
          expect(first.headers["x-request-id"]).not.toBe(second.headers["x-request-id"])
        }))

      it.effect("unprefixed paths are aliases of their /v1 form", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const key = yield* createKey(owner)
          const pairs: ReadonlyArray<readonly [path: string, token: string | undefined]> = [
            ["/me", owner.session],
            ["/me/tenants?limit=5", owner.session],
            [`/tenants/${owner.tenantId}`, owner.session],
            [`/tenants/${owner.tenantId}`, key.token],
            [`/tenants/${owner.tenantId}/api-keys`, owner.session],
            ["/me", undefined],
            ["/me/tenants?limit=0", owner.session],
            [`/tenants/${owner.tenantId}/members`, key.token]
          ]
          for (const [path, token] of pairs) {
            const prefixed = yield* rawRequest("GET", `/v1${path}`, token === undefined ? {} : { token })
            const alias = yield* rawRequest("GET", path, token === undefined ? {} : { token })
            expect(alias.status, path).toBe(prefixed.status)
            // Volatile fields aside, the bodies are the same.
            expect(jsonObject(alias), path).toEqual(jsonObject(prefixed))
          }
        }))

      it.effect("login through the alias returns a working session", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const login = yield* rawRequest("POST", "/auth/login", { body: { email: owner.email, password: PASSWORD } })
          expect(login.status).toBe(200)
          const token = jsonObject(login)["token"]
          expect(typeof token).toBe("string")
          const me = yield* rawRequest("GET", "/me", { token: String(token) })
          expect(me.status).toBe(200)
          expect(jsonObject(me)["id"]).toBe(owner.userId)
          expectError(
            yield* rawRequest("POST", "/auth/login", { body: { email: owner.email } }),
            400,
            "invalid_request"
          )
        }))

      it.effect("GET /healthz answers 200 {status: ok} without credentials", () =>
        Effect.gen(function*() {
          const response = yield* rawRequest("GET", "/healthz")
          expect(response.status).toBe(200)
          expect(jsonObject(response)).toEqual({ status: "ok" })
        }))

      it.effect("GET /openapi.json describes the /v1 paths only", () =>
        Effect.gen(function*() {
          const response = yield* rawRequest("GET", "/openapi.json")
          expect(response.status).toBe(200)
          expect(response.headers["content-type"]).toContain("application/json")
          const document = jsonObject(response)
          expect(document["openapi"]).toMatch(/^3\./)
          const paths = Object.keys(document["paths"] as Record<string, unknown>)
          expect(paths).toEqual(expect.arrayContaining([
            "/v1/auth/register",
            "/v1/auth/login",
            "/v1/me",
            "/v1/me/tenants",
            "/v1/tenants/{tenantId}",
            "/v1/tenants/{tenantId}/api-keys",
            "/healthz",
            "/readyz"
          ]))
          for (const path of paths) {
            expect(path.startsWith("/v1/") || path === "/healthz" || path === "/readyz", path).toBe(true)
          }
          // Served at the root only; no `/v1/openapi.json` duplicate is needed.
          expect(response.text).not.toContain("HttpApiDecodeError")
        }))

      it.effect("the API reference page at /docs is HTML", () =>
        Effect.gen(function*() {
          const response = yield* rawRequest("GET", "/docs")
          expect(response.status).toBe(200)
          expect(response.headers["content-type"]).toContain("text/html")
          expect(response.text.toLowerCase()).toContain("<!doctype html>")
          expect(response.text).toContain("Electronic tax-document issuing API")
          expect(response.headers["x-request-id"]).toMatch(REQUEST_ID)
        }))
    }
  )
}
