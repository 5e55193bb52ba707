/**
 * What a request leaves behind when its trace is not sampled (SPEC §13: sampling spares the
 * exporter, never the request's id or its log): its own `x-request-id`, one access-log line with the
 * principal's ids under that trace id, and log lines written during the request under it too.
 */
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { HttpClient } from "effect/http"
import { createKey, registerOwner } from "../support/fixtures.js"
import { withLogRecords } from "../support/logRecords.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

/** Every trace is unsampled: `OTEL_TRACES_SAMPLER=always_off`, as an operator sets it. */
const unsampled = ConfigProvider.layer(
  ConfigProvider.fromEnv({ env: { ...(process.env as Record<string, string>), OTEL_TRACES_SAMPLER: "always_off" } })
)

/** Lines are written once per turn of the event loop: the records once the request's are out. */
const settled = (records: () => ReadonlyArray<any>) =>
  Effect.promise(() => new Promise((resolve) => setImmediate(resolve))).pipe(Effect.as(records()))

/** A request carrying no trace context of its own: the trace starts at the server. */
const fresh = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, HttpClient.TracerPropagationEnabled, false)

const REQUEST_ID = /^[0-9a-f]{32}$/

for (const database of testDatabases) {
  layer(makeTestApp(database).pipe(Layer.provide(unsampled)), { timeout: 60_000, excludeTestServices: true })(
    `requests whose trace is not sampled (${database})`,
    (it) => {
      it.effect("each has its x-request-id, and one access-log line with the principal's ids under that trace id", () =>
        withLogRecords((records) =>
          Effect.gen(function*() {
            const owner = yield* registerOwner()
            const key = yield* createKey(owner)
            const byKey = yield* fresh(rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: key.token }))
            const bySession = yield* fresh(rawRequest("GET", "/v1/me", { token: owner.session }))
            expect([byKey.status, bySession.status]).toEqual([200, 200])
            const [keyId, sessionId] = [byKey.headers["x-request-id"], bySession.headers["x-request-id"]]
            expect(keyId).toMatch(REQUEST_ID)
            expect(sessionId).toMatch(REQUEST_ID)
            expect(keyId).not.toBe(sessionId)
            expect(byKey.headers["x-content-type-options"]).toBe("nosniff")

            const lines = yield* settled(records)
            const linesOf = (id: string | undefined) => lines.filter((r) => r.msg === "request" && r.trace_id === id)
            expect(linesOf(keyId)).toEqual([
              expect.objectContaining({
                level: "info",
                "http.request.method": "GET",
                "http.route": "/v1/tenants/{tenantId}",
                "http.response.status_code": 200,
                "tenant.id": owner.tenantId,
                "api_key.id": key.api_key.id,
                "api_key.environment": "test",
                span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
                duration_ms: expect.any(Number)
              })
            ])
            expect(linesOf(sessionId)).toEqual([
              expect.objectContaining({ "http.route": "/v1/me", "user.id": owner.userId })
            ])
            // Nothing secret in the lines.
            const text = JSON.stringify(lines)
            expect(text).not.toContain(key.token)
            expect(text).not.toContain(owner.session)
          })
        ))

      it.effect("a line written during the request carries the request's trace id", () =>
        withLogRecords((records) =>
          Effect.gen(function*() {
            // A payment-provider event with a bad signature is refused with a warning, inside the request.
            const refused = yield* fresh(rawRequest("POST", "/v1/webhooks/payment-provider", {
              rawBody: "{}",
              headers: { "webhook-id": "msg_1", "webhook-timestamp": "1", "webhook-signature": "v1,AAAA" }
            }))
            expect(refused.status).toBe(401)
            const requestId = refused.headers["x-request-id"]
            expect(requestId).toMatch(REQUEST_ID)
            const lines = yield* settled(records)
            const warning = lines.find((r) => r.msg === "payment-provider webhook refused")
            expect(warning).toMatchObject({ level: "warn", trace_id: requestId })
            expect(lines.filter((r) => r.msg === "request" && r.trace_id === requestId)).toHaveLength(1)
          })
        ))

      it.effect("a refused request too: a key in the URL or from a browser", () =>
        withLogRecords((records) =>
          Effect.gen(function*() {
            const owner = yield* registerOwner()
            const key = yield* createKey(owner)
            const inUrl = yield* fresh(rawRequest("GET", `/v1/me?k=${key.token.replace(/_/g, "%5F")}`))
            const fromBrowser = yield* fresh(rawRequest("GET", `/v1/tenants/${owner.tenantId}`, {
              token: key.token,
              headers: { origin: "https://example.com" }
            }))
            expect([inUrl.status, fromBrowser.status]).toEqual([400, 403])
            const lines = yield* settled(records)
            for (const [response, route] of [[inUrl, "/v1/me"], [fromBrowser, "/v1/tenants/{tenantId}"]] as const) {
              expect(response.headers["x-request-id"]).toMatch(REQUEST_ID)
              expect(lines.filter((r) => r.msg === "request" && r.trace_id === response.headers["x-request-id"]))
                .toEqual([
                  expect.objectContaining({ "http.route": route, "http.response.status_code": response.status })
                ])
            }
            expect(JSON.stringify(lines)).not.toContain(key.token)
          })
        ))
    }
  )
}
