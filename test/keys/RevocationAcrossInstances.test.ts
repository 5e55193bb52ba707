/**
 * Revocation is immediate on every instance (SPEC §4): two instances of the service on one
 * database, each with its own HTTP server; a key revoked through one is refused by the other on the
 * very next request, with nothing cached in between.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Context, Duration, Effect, Layer } from "effect"
import { makeApp } from "../../src/App.js"
import { expectError } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, testDatabases } from "../support/TestApp.js"

const tenantUrl = (tenantId: string) => `/v1/tenants/${tenantId}`

for (const database of testDatabases) {
  describe(`revocation across instances (${database})`, () => {
    it.live("a key revoked on one instance is refused by the other on its next request", () =>
      Effect.gen(function*() {
        // One database, built once and shared: each instance gets its own services, pools and server.
        const shared = Layer.succeedContext(yield* Layer.build(databaseLayer(database)))
        const instance = (name: string) =>
          Layer.build(
            makeApp(testConfig({ queue: { instanceId: name, shutdownGrace: Duration.seconds(1) } }), shared).pipe(
              Layer.provideMerge(httpServerTest)
            )
          )
        const first = yield* instance("first")
        const second = yield* instance("second")
        const on = (context: Context.Context<never>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.provide(effect, context as Context.Context<R>)

        const owner = yield* on(first)(registerOwner())
        const key = yield* on(first)(createKey(owner, "test", ["documents:read"]))
        // Both instances serve the key first, so that a cache on the second would hold it now.
        for (const context of [first, second]) {
          const read = yield* on(context)(rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token }))
          expect(read.status, read.text).toBe(200)
        }

        const revoked = yield* on(first)(
          rawRequest("POST", `${tenantUrl(owner.tenantId)}/api-keys/${key.api_key.id}/revoke`, {
            token: owner.session
          })
        )
        expect(revoked.status, revoked.text).toBe(200)

        const refused = yield* on(second)(rawRequest("GET", tenantUrl(owner.tenantId), { token: key.token }))
        expectError(refused, 401, "api_key_revoked")
        expect(refused.headers["www-authenticate"]).toBe(`Bearer realm="etd", error="invalid_token"`)
      }).pipe(Effect.scoped), { timeout: 60_000 })
  })
}
