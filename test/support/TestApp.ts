/**
 * The application under test: the real layers on an in-process HTTP server, on the embedded
 * database and, when TEST_DATABASE_URL is set, on a fresh schema of a real PostgreSQL.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Layer, Option } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpServer } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { createServer } from "node:http"
import { Api } from "../../src/Api.js"
import { makeApp } from "../../src/App.js"
import { type AppConfigShape, AppConfigTest } from "../../src/Config.js"

import { testTrustFile } from "./certificates.js"

export { databaseLayer, type TestDatabase, testDatabases } from "./Databases.js"
import { databaseLayer, type TestDatabase } from "./Databases.js"

/** Tenants' certificates are trusted when they chain to the test root (test/support/certificates.ts). */
export const testConfig = (overrides: Partial<AppConfigShape> = {}) =>
  AppConfigTest({
    lastUsedFlushInterval: Duration.hours(1),
    credentialsExtraCaFile: Option.some(testTrustFile()),
    ...overrides
  })

/**
 * `NodeHttpServer.layerTest`, but the server keeps idle connections for a minute. Client and server
 * share this process, and a test that runs `openssl` synchronously blocks both: afterwards the
 * client could reuse a pooled connection whose five-second keep-alive the server is about to end,
 * and its request would meet a reset. The client's own idle limit (the server's hint less a
 * second) now always ends first.
 */
export const httpServerTest = HttpServer.layerTestClient.pipe(
  Layer.provide(Layer.fresh(FetchHttpClient.layer)),
  Layer.provideMerge(NodeHttpServer.layer(() => {
    const server = createServer()
    server.keepAliveTimeout = 60_000
    return server
  }, { port: 0 }))
)

export const makeTestApp = (database: TestDatabase, overrides: Partial<AppConfigShape> = {}) =>
  makeApp(testConfig(overrides), databaseLayer(database)).pipe(Layer.provideMerge(httpServerTest))

/** The typed client, optionally authenticated with a bearer token. */
export const client = (token?: string) =>
  HttpApiClient.make(Api, {
    transformClient: token === undefined ? undefined : HttpClient.mapRequest(HttpClientRequest.bearerToken(token))
  })

/** A GET whose answer is binary (a note's PDF), byte for byte: rawRequest decodes bodies as text. */
export const bytesRequest = (url: string, token: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.get(url).pipe(HttpClientRequest.bearerToken(token)))
    return { status: response.status, headers: response.headers, bytes: new Uint8Array(yield* response.arrayBuffer) }
  }).pipe(Effect.scoped)

/**
 * A raw request, for what the typed client would refuse to send (malformed bodies, tokens in
 * URLs, oversized payloads) and for checking headers.
 */
export const rawRequest = (
  method: "GET" | "POST" | "PATCH" | "DELETE",
  url: string,
  options: { token?: string; body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {}
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(options.headers ?? {}))
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.rawBody !== undefined) {
      request = typeof options.rawBody === "string"
        ? HttpClientRequest.bodyText(request, options.rawBody, "application/json")
        : HttpClientRequest.bodyUint8Array(request, options.rawBody, "application/json")
    } else if (options.body !== undefined) {
      request = HttpClientRequest.bodyJsonUnsafe(request, options.body)
    }
    const response = yield* http.execute(request)
    const text = yield* response.text
    let json: Record<string, any> | undefined
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined
    } catch {
      json = undefined
    }
    return { status: response.status, headers: response.headers, text, json }
  }).pipe(Effect.scoped)
