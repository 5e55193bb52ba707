/**
 * The API-level error middleware in isolation: a failure an endpoint does not declare cannot be
 * encoded by the contract, and must still answer the SPEC's 500 body (never an empty response).
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { HttpClient, HttpRouter } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { ApiErrors } from "../../src/Api.js"
import { NotFound, PayloadTooLarge, ServiceUnavailable } from "../../src/domain/Errors.js"
import { apiErrorsLayer } from "../../src/http/ApiErrors.js"
import { httpServerTest } from "../support/TestApp.js"

class Undeclared extends Schema.TaggedError<Undeclared>()("Undeclared", { detail: Schema.String }) {}

const Probe = HttpApi.make("probe")
  .add(
    HttpApiGroup.make("probe")
      .add(HttpApiEndpoint.get("undeclared", "/undeclared", { success: Schema.String }))
      .add(HttpApiEndpoint.get("declared", "/declared", { success: Schema.String, error: NotFound }))
      .add(HttpApiEndpoint.get("apiLevel", "/api-level", { success: Schema.String }))
      .add(HttpApiEndpoint.get("unavailable", "/unavailable", { success: Schema.String }))
  )
  .middleware(ApiErrors)

const ProbeHandlers = HttpApiBuilder.group(Probe, "probe", (handlers) =>
  handlers
    // The cast smuggles in what the types forbid: a wiring mistake the middleware must survive.
    .handle("undeclared", () =>
      Effect.fail(new Undeclared({ detail: "internal detail" })) as unknown as Effect.Effect<string>)
    .handle("declared", () =>
      Effect.fail(new NotFound()))
    .handle("apiLevel", () => Effect.fail(new PayloadTooLarge()))
    // A dependency other than the database away (the tax authority, for a note's files).
    .handle("unavailable", () => Effect.fail(new ServiceUnavailable({ retry_after: 30 }))))

const ProbeServer = HttpRouter.serve(
  HttpApiBuilder.layer(Probe).pipe(Layer.provide(ProbeHandlers), Layer.provide(apiErrorsLayer(Probe))),
  { disableLogger: true, disableListenLog: true }
).pipe(Layer.provideMerge(httpServerTest))

const get = (path: string) =>
  Effect.gen(function*() {
    const response = yield* (yield* HttpClient.HttpClient).get(path)
    return { status: response.status, headers: response.headers, body: yield* response.text }
  }).pipe(Effect.scoped)

layer(ProbeServer, { timeout: 30_000 })("API error middleware", (it) => {
  it.effect("an undeclared failure is a 500 internal_error with the SPEC body, revealing nothing", () =>
    Effect.gen(function*() {
      const response = yield* get("/undeclared")
      expect(response.status).toBe(500)
      expect(JSON.parse(response.body)).toMatchObject({ code: "internal_error" })
      expect(response.body).not.toContain("internal detail")
    }))

  it.effect("a declared failure keeps its own status and code", () =>
    Effect.gen(function*() {
      const response = yield* get("/declared")
      expect(response.status).toBe(404)
      expect(JSON.parse(response.body)).toMatchObject({ code: "not_found" })
    }))

  it.effect("a 503 service_unavailable carries its wait in Retry-After as well as in the body (SPEC §2)", () =>
    Effect.gen(function*() {
      const response = yield* get("/unavailable")
      expect(response.status).toBe(503)
      expect(JSON.parse(response.body)).toMatchObject({ code: "service_unavailable", retry_after: 30 })
      expect(response.headers["retry-after"]).toBe("30")
    }))

  it.effect("an error the API's middleware declares counts as declared on every endpoint", () =>
    Effect.gen(function*() {
      const response = yield* get("/api-level")
      expect(response.status).toBe(413)
      expect(JSON.parse(response.body)).toMatchObject({ code: "payload_too_large" })
    }))
})
