/**
 * Traces leave through OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a local collector stand-in
 * receives them, the server spans are named after route templates and carry the principal's ids,
 * and no token or password appears anywhere in what was exported.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { makeApp } from "../../src/App.js"
import { databaseLayer } from "../support/Databases.js"
import { markEmailVerified } from "../support/fixtures.js"
import { cnpj } from "../support/taxIds.js"
import { testConfig } from "../support/TestApp.js"

const startCollector = () =>
  new Promise<{ server: Server; url: string; bodies: Array<string> }>((resolve) => {
    const bodies: Array<string> = []
    const server = createServer((request, response) => {
      let body = ""
      request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      request.on("end", () => {
        bodies.push(`${request.url} ${body}`)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }))
  })

describe("OTLP export", () => {
  it.live("exports server spans named after route templates, without any secret", () =>
    Effect.gen(function*() {
      const collector = yield* Effect.promise(startCollector)
      process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.url
      process.env["OTEL_SERVICE_NAME"] = "etd-test"
      const runtime = ManagedRuntime.make(
        makeApp(testConfig(), databaseLayer("embedded")).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
        )
      )
      const secrets = yield* Effect.promise(async () => {
        const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
        const base = `http://127.0.0.1:${"port" in address ? address.port : 0}`
        const post = async (path: string, body: unknown, token?: string) =>
          (await fetch(base + path, {
            method: "POST",
            headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
            body: JSON.stringify(body)
          })).json() as Promise<Record<string, unknown>>
        const password = "a very secret password 42"
        const registration = await post("/v1/auth/register", {
          email: "otel@example.com",
          password,
          tenant: { name: "Otel", tax_id: cnpj() }
        })
        const tenantId = (registration["tenant"] as { id: string }).id
        await runtime.runPromise(markEmailVerified((registration["user"] as { id: string }).id))
        const session = String((await post("/v1/auth/login", { email: "otel@example.com", password }))["token"])
        const key = String(
          (await post(`/v1/tenants/${tenantId}/api-keys`, {
            name: "k",
            environment: "live",
            scopes: ["documents:read"]
          }, session))["token"]
        )
        await (await fetch(`${base}/v1/tenants/${tenantId}`, { headers: { authorization: `Bearer ${key}` } })).text()
        // A careless client that puts its key in the User-Agent: the span attribute is redacted.
        await (await fetch(`${base}/healthz`, { headers: { "user-agent": `my-integration/1.0 (${key})` } })).text()
        await (await fetch(`${base}/v1/tenants/${tenantId}?api_key=${key}`)).text()
        // Shutting down flushes the exporter.
        await runtime.dispose()
        return { password, session, key, tenantId }
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => collector.server.close(() => resolve())))
      // Test files share a worker process: the variables must not outlive this test.
      delete process.env["OTEL_EXPORTER_OTLP_ENDPOINT"]
      delete process.env["OTEL_SERVICE_NAME"]

      const traces = collector.bodies.filter((body) => body.startsWith("/v1/traces"))
      expect(traces.length).toBeGreaterThan(0)
      const exported = traces.join("\n")
      expect(exported).toContain("GET /v1/tenants/{tenantId}")
      expect(exported).toContain("POST /v1/auth/login")
      expect(exported).toContain(secrets.tenantId)
      expect(exported).toContain("api_key.id")
      for (const secret of [secrets.password, secrets.session, secrets.key, secrets.key.slice(9)]) {
        expect(exported).not.toContain(secret)
      }
      const everything = collector.bodies.join("\n")
      expect(everything).not.toContain(secrets.key)
      expect(everything).not.toContain(secrets.password)
    }), 60_000)

  it.live(
    "honours a caller's sampling decision before the work: an unsampled trace makes no spans, its ids still answer",
    () =>
      Effect.gen(function*() {
        const collector = yield* Effect.promise(startCollector)
        // Effect reads the process environment once: this app gets a provider of its own.
        const env = ConfigProvider.fromEnv({
          env: { ...process.env as Record<string, string>, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }
        })
        const runtime = ManagedRuntime.make(
          makeApp(testConfig(), databaseLayer("embedded")).pipe(
            Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 })),
            Layer.provide(ConfigProvider.layer(env))
          )
        )
        const unsampled = "a1".repeat(16)
        const sampled = "b2".repeat(16)
        const answers = yield* Effect.promise(async () => {
          const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
          const base = `http://127.0.0.1:${"port" in address ? address.port : 0}`
          const register = (traceId: string, flags: string, email: string) =>
            fetch(`${base}/v1/auth/register`, {
              method: "POST",
              headers: { "content-type": "application/json", traceparent: `00-${traceId}-${"c3".repeat(8)}-${flags}` },
              body: JSON.stringify({
                email,
                password: "correct horse battery staple",
                tenant: { name: "Sampling", tax_id: cnpj() }
              })
            })
          const off = await register(unsampled, "00", "unsampled@example.com")
          const on = await register(sampled, "01", "sampled@example.com")
          await Promise.all([off.text(), on.text()])
          await runtime.dispose()
          return [off, on].map((response) => ({
            status: response.status,
            requestId: response.headers.get("x-request-id")
          }))
        })
        yield* Effect.promise(() => new Promise<void>((resolve) => collector.server.close(() => resolve())))

        expect(answers.map((answer) => answer.status)).toEqual([201, 201])
        // Both continue the caller's trace: the request id names it either way.
        expect(answers[0]!.requestId).toMatch(new RegExp(`^${unsampled}-[0-9a-f]{16}$`))
        expect(answers[1]!.requestId).toMatch(new RegExp(`^${sampled}-[0-9a-f]{16}$`))
        const exported = collector.bodies.filter((body) => body.startsWith("/v1/traces")).join("\n")
        expect(exported).toContain(sampled)
        // The sampled request's spans below the server span (service, repository, SQL) are there...
        expect(exported).toContain("AuthService")
        // ...and nothing at all of the unsampled one.
        expect(exported).not.toContain(unsampled)
      }),
    60_000
  )
})
