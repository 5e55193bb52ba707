import { NodeHttpServer } from "@effect/platform-node"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { FetchHttpClient, HttpServer } from "effect/http"
import { createServer } from "node:http"
import { makeApp } from "../../src/App.js"
import { createClient, InvalidApiKey, makeClient } from "../../src/client/index.js"
import { cnpj, PASSWORD, uniqueEmail } from "../support/fixtures.js"
import { databaseLayer, testConfig } from "../support/TestApp.js"

// A real listening server: the Promise facade uses the global fetch, as a user's code would.
const app = makeApp(testConfig(), databaseLayer("embedded")).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

const baseUrl = Effect.map(
  HttpServer.HttpServer,
  (server) => server.address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${server.address.port}`
)

layer(app, { timeout: 60_000, excludeTestServices: true })("typed client", (it) => {
  it.effect("Promise facade: register, log in, create a key, read the tenant", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const email = uniqueEmail()
      const result = yield* Effect.promise(async () => {
        const anonymous = createClient({ baseUrl: url })
        const { tenant } = await anonymous.auth.register({
          payload: { email, password: Redacted.make(PASSWORD), tenant: { name: "Acme", tax_id: cnpj() } }
        })
        const { token } = await anonymous.auth.login({ payload: { email, password: Redacted.make(PASSWORD) } })
        const dashboard = createClient({ baseUrl: url, token })
        const created = await dashboard.apiKeys.create({
          params: { tenantId: tenant!.id },
          payload: { name: "backend", environment: "test", scopes: ["documents:read"] }
        })
        const withKey = createClient({ baseUrl: url, token: created.token })
        const read = await withKey.tenants.get({ params: { tenantId: tenant!.id } })
        const failure = await createClient({ baseUrl: url, token: `etd_test_${"a".repeat(32)}` }).tenants
          .get({ params: { tenantId: tenant!.id } })
          .then(() => undefined, (error: unknown) => error)
        return { tenantId: tenant!.id, read, failure }
      })
      expect(result.read.id).toBe(result.tenantId)
      expect(result.failure).toBeInstanceOf(InvalidApiKey)
      expect(result.failure).toMatchObject({ code: "invalid_api_key" })
    }))

  it.effect("Effect client: declared errors are typed failures", () =>
    Effect.gen(function*() {
      const url = yield* baseUrl
      const api = yield* makeClient({ baseUrl: url, token: "etd_sess_" + "b".repeat(32) })
      const error = yield* Effect.flip(api.auth.me())
      expect(error._tag).toBe("InvalidSession")
      if (error._tag === "InvalidSession") expect(error.code).toBe("invalid_session")
    }).pipe(Effect.provide(FetchHttpClient.layer)))
})
