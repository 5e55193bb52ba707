/**
 * What an SRE sees of one issued document, through real tools' protocols (SPEC §13): an
 * in-process OTLP receiver gets the request's trace, the worker's trace linked to it with the
 * authority call inside, and the webhook delivery's trace, whose traceparent the receiver gets;
 * `GET /metrics` answers Prometheus text with the catalogue's series after the traffic; the access
 * log has one line per request with the principal's ids; an OTLP header whose value holds `=`
 * arrives whole. And an idle instance exports no span at all.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { spawnSync } from "node:child_process"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { makeApp } from "../../src/App.js"
import { AppConfigTest } from "../../src/Config.js"
import { databaseLayer } from "../support/Databases.js"
import { completeRegistration } from "../support/registration.js"
import { cnpj } from "../support/taxIds.js"
import { hasTool } from "../support/tools.js"

interface Export {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: any
}

const startCollector = () =>
  new Promise<{ server: Server; url: string; exports: Array<Export> }>((resolve) => {
    const exports: Array<Export> = []
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        exports.push({
          path: request.url ?? "",
          headers: request.headers,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8"))
        })
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports }))
  })

const startReceiver = () =>
  new Promise<{ server: Server; url: string; received: Array<IncomingHttpHeaders> }>((resolve) => {
    const received: Array<IncomingHttpHeaders> = []
    const server = createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        received.push(request.headers)
        response.writeHead(204).end()
      })
    })
    server.listen(
      0,
      "127.0.0.1",
      () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received })
    )
  })

/** Token-shaped, though no key's, and the same with its underscores percent-encoded. */
const LEAK = `etd_test_${"q".repeat(32)}`
const ENCODED_LEAK = LEAK.replace(/_/g, "%5F")

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

interface ExportedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly startTimeUnixNano: string
  readonly status: Record<string, unknown>
  readonly links?: ReadonlyArray<{ traceId: string; spanId: string }>
  readonly attributes: ReadonlyArray<{ key: string; value: Record<string, unknown> }>
}

const spansOf = (exports: ReadonlyArray<Export>): Array<ExportedSpan> =>
  exports.filter((e) => e.path === "/v1/traces").flatMap((e) =>
    (e.body.resourceSpans ?? []).flatMap((rs: any) => (rs.scopeSpans ?? []).flatMap((ss: any) => ss.spans ?? []))
  )

/** An app on a real port whose OTEL_* and METRICS_* come from `env` (Effect reads the process environment once). */
const startApp = (env: Record<string, string>, fast = true) => {
  const provider = ConfigProvider.fromEnv({ env: { ...(process.env as Record<string, string>), ...env } })
  const config = Layer.unwrap(Effect.map(Effect.sync(() => AppConfigTest), (make) =>
    make({
      lastUsedFlushInterval: Duration.hours(1),
      issuance: { concurrency: 4, pollInterval: Duration.millis(fast ? 50 : 500), lease: Duration.seconds(60) },
      webhooks: {
        allowPrivateTargets: true,
        timeout: Duration.seconds(5),
        concurrency: 4,
        pollInterval: Duration.millis(fast ? 50 : 1000),
        lease: Duration.seconds(60)
      }
    })))
  const runtime = ManagedRuntime.make(
    makeApp(config, databaseLayer("embedded")).pipe(
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 })),
      Layer.provide(ConfigProvider.layer(provider))
    )
  )
  const base = runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address)).then((address) =>
    `http://127.0.0.1:${"port" in address ? address.port : 0}`
  )
  return { runtime, base }
}

const json = async (response: Response) => ({
  status: response.status,
  headers: response.headers,
  body: await response.json() as any
})

describe("observability end to end", () => {
  it.live(
    "one issued document: request → worker (linked) → authority → webhook with traceparent; metrics; access log",
    () =>
      Effect.gen(function*() {
        const collector = yield* Effect.promise(startCollector)
        const receiver = yield* Effect.promise(startReceiver)
        const lines: Array<string> = []
        const write = process.stdout.write.bind(process.stdout)
        // The service logs JSON lines on stdout; the test reads them there, as a log shipper would.
        process.stdout.write = ((chunk: string | Uint8Array, ...rest: Array<any>) => {
          lines.push(String(chunk))
          return write(chunk, ...rest)
        }) as typeof process.stdout.write
        const { base: baseUrl, runtime } = startApp({
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          // A Basic credential ends in `=`; the second value is percent-encoded, as the specification writes them.
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=Basic dXNlcjpwYXNzd29yZA==,x-scope=team%3Dbilling",
          OTEL_SERVICE_NAME: "etd-e2e",
          METRICS_TOKEN: "metrics-scrape-secret",
          METRICS_SAMPLE_INTERVAL: "100 millis"
        })
        const outcome = yield* Effect.promise(async () => {
          try {
            const base = await baseUrl
            const post = (path: string, body: unknown, token?: string, headers: Record<string, string> = {}) =>
              fetch(base + path, {
                method: "POST",
                headers: {
                  "content-type": "application/json",
                  ...(token ? { authorization: `Bearer ${token}` } : {}),
                  ...headers
                },
                body: JSON.stringify(body)
              }).then(json)
            const password = "a long and secret password"
            const registered = await post("/v1/auth/register", {
              email: "sre@example.com",
              password,
              tenant: { name: "Observed", tax_id: cnpj() }
            })
            const tenantId = registered.body.tenant.id as string
            const session = (await post("/v1/auth/login", { email: "sre@example.com", password })).body.token as string
            const completed = await fetch(`${base}/v1/tenants/${tenantId}`, {
              method: "PATCH",
              headers: { "content-type": "application/json", authorization: `Bearer ${session}` },
              body: JSON.stringify({ registration: completeRegistration })
            })
            expect(completed.status).toBe(200)
            const key = (await post(`/v1/tenants/${tenantId}/api-keys`, {
              name: "e2e",
              environment: "test",
              scopes: ["documents:read", "documents:write", "webhooks:write"]
            }, session)).body
            const endpoint = await post(`/v1/tenants/${tenantId}/webhook-endpoints`, {
              url: receiver.url,
              events: ["document.authorized"]
            }, key.token)
            expect(endpoint.status).toBe(201)
            const issued = await post(
              "/v1/documents",
              {
                type: "service_invoice",
                taker: { tax_id: "52998224725", name: "Maria Tomadora" },
                service: {
                  code: "010101",
                  nbs_code: "115013000",
                  description: "Consultoria",
                  municipality_code: "3550308"
                },
                amounts: { services: 150000, iss_rate: "2.00" }
              },
              key.token,
              { "idempotency-key": "e2e-1" }
            )
            expect(issued.status).toBe(202)
            for (let i = 0; i < 200 && receiver.received.length === 0; i++) await new Promise((r) => setTimeout(r, 50))
            expect(receiver.received).toHaveLength(1)
            // Let the queue gauges be read once more, now that the queues are empty.
            await new Promise((r) => setTimeout(r, 300))
            expect((await fetch(`${base}/v1/nowhere`)).status).toBe(404)
            // A token in the path, percent-encoded, is refused, and recorded nowhere, encoded or not.
            expect((await fetch(`${base}/v1/nowhere/${ENCODED_LEAK}`)).status).toBe(400)
            // A HEAD has its GET's route; a method the conventions do not name is `_OTHER`, not a new label.
            expect(
              (await fetch(`${base}/v1/documents`, {
                method: "HEAD",
                headers: { authorization: `Bearer ${key.token}` }
              })).status
            ).toBe(200)
            expect((await fetch(`${base}/v1/documents`, { method: "PROPFIND" })).status).toBe(405)
            // The dashboard's page and files are routes of their own, not unknown paths.
            const page = await (await fetch(`${base}/`)).text()
            const asset = /src="(\/assets\/[^"]+)"/.exec(page)?.[1]
            expect((await fetch(`${base}${asset}`)).status).toBe(200)
            const anonymous = await fetch(`${base}/metrics`)
            const wrong = await fetch(`${base}/metrics`, { headers: { authorization: "Bearer not-the-token" } })
            const scraped = await fetch(`${base}/metrics`, {
              headers: { authorization: "Bearer metrics-scrape-secret" }
            })
            return {
              tenantId,
              keyId: key.api_key.id as string,
              token: key.token as string,
              session,
              password,
              requestId: issued.headers.get("x-request-id")!,
              webhook: receiver.received[0]!,
              metrics: {
                anonymous: anonymous.status,
                wrong: wrong.status,
                challenge: wrong.headers.get("www-authenticate"),
                scraped: scraped.status,
                type: scraped.headers.get("content-type"),
                text: await scraped.text()
              }
            }
          } finally {
            // Shutting down flushes the exporters.
            await runtime.dispose()
            process.stdout.write = write
          }
        })
        yield* Effect.promise(() => Promise.all([close(collector.server), close(receiver.server)]))

        // The collector's credential arrived whole, `=` padding included, and the encoded value decoded.
        expect(collector.exports.length).toBeGreaterThan(0)
        for (const e of collector.exports) {
          expect(e.headers["authorization"]).toBe("Basic dXNlcjpwYXNzd29yZA==")
          expect(e.headers["x-scope"]).toBe("team=billing")
        }

        // The span tree.
        const spans = spansOf(collector.exports)
        const byId = new Map(spans.map((span) => [span.spanId, span]))
        const inTrace = (traceId: string) => spans.filter((span) => span.traceId === traceId)
        const request = spans.find((span) => span.name === "POST /v1/documents")!
        expect(request).toBeDefined()
        expect(outcome.requestId).toBe(request.traceId)
        // The client as the access log names it (no proxy is trusted here: the socket's peer, IPv4
        // without its IPv6 mapping), beside the socket's own peer address.
        const spanAttribute = (span: ExportedSpan, key: string) =>
          span.attributes.find((a) => a.key === key)?.value["stringValue"]
        expect(["127.0.0.1", "::1"]).toContain(spanAttribute(request, "client.address"))
        expect(spanAttribute(request, "network.peer.address")).toBeDefined()
        const worker = spans.find((span) => span.name === "IssuanceWorker.submit")!
        expect(worker.traceId).not.toBe(request.traceId)
        expect(worker.parentSpanId ?? "").toBe("")
        expect(worker.links?.map((link) => link.traceId)).toEqual([request.traceId])
        expect(byId.get(worker.links![0]!.spanId)?.traceId).toBe(request.traceId)
        const authority = inTrace(worker.traceId).find((span) => span.name === "TaxAuthority.submit")!
        expect(authority).toBeDefined()
        const ancestors = (span: ExportedSpan): Array<string> => {
          const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined
          return parent === undefined ? [] : [parent.name, ...ancestors(parent)]
        }
        expect(ancestors(authority)).toContain("IssuanceWorker.submit")
        const delivery = spans.find((span) => span.name === "WebhookDispatcher.deliver")!
        expect(delivery.links?.map((link) => link.traceId)).toEqual([worker.traceId])
        const send = inTrace(delivery.traceId).find((span) => span.name === "WebhookDispatcher.send")!
        expect(outcome.webhook["traceparent"]).toBe(`00-${send.traceId}-${send.spanId}-01`)
        // An unknown path: the method alone names the span (one name, not one per URL), without a
        // route, and a 404 is the client's mistake, not an error or an interruption of ours.
        const unrouted = spans.find((span) =>
          span.attributes.some((a) => a.key === "url.path" && a.value["stringValue"] === "/v1/nowhere")
        )!
        expect(unrouted.name).toBe("GET")
        expect(unrouted.attributes.some((a) => a.key === "http.route")).toBe(false)
        expect(unrouted.status).toEqual({ code: 1 })

        // Metrics over OTLP carry their units.
        const otlpMetrics = collector.exports.filter((e) => e.path === "/v1/metrics").flatMap((e) =>
          e.body.resourceMetrics.flatMap((rm: any) => rm.scopeMetrics.flatMap((sm: any) => sm.metrics))
        )
        expect(otlpMetrics.find((m: any) => m.name === "http.server.request.duration")?.unit).toBe("s")
        const resource = collector.exports.find((e) =>
          e.path === "/v1/traces"
        )!.body.resourceSpans[0].resource.attributes
        const attribute = (key: string) => resource.find((a: any) => a.key === key)?.value.stringValue
        expect(attribute("service.name")).toBe("etd-e2e")
        expect(attribute("service.version")).toMatch(/^\d+\.\d+\.\d+/)
        expect(attribute("service.version")).toBe(
          (yield* Effect.promise(() => import("../../package.json", { with: { type: "json" } }))).default.version
        )

        // Prometheus text, behind the token.
        expect([outcome.metrics.anonymous, outcome.metrics.wrong, outcome.metrics.scraped]).toEqual([401, 401, 200])
        expect(outcome.metrics.challenge).toMatch(/^Bearer /)
        expect(outcome.metrics.type).toMatch(/^text\/plain; version=0\.0\.4/)
        const series = parsePrometheus(outcome.metrics.text)
        const value = (name: string, labels: Record<string, string> = {}) =>
          series.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
            .reduce((sum, s) => sum + s.value, 0)
        expect(
          value("http_server_request_duration_seconds_count", {
            http_route: "/v1/documents",
            http_request_method: "POST",
            http_response_status_code: "202"
          })
        ).toBe(1)
        expect(
          value("http_server_request_duration_seconds_bucket", {
            http_route: "/v1/documents",
            http_request_method: "POST",
            le: "+Inf"
          })
        ).toBe(1)
        expect(
          value("http_server_request_duration_seconds_count", {
            http_route: "/v1/documents",
            http_request_method: "HEAD"
          })
        ).toBe(1)
        expect(
          value("http_server_request_duration_seconds_count", {
            http_request_method: "_OTHER",
            http_response_status_code: "405"
          })
        ).toBe(1)
        expect(series.some((s) => s.labels["http_request_method"] === "PROPFIND")).toBe(false)
        expect(
          value("http_server_request_duration_seconds_count", {
            http_route: "/",
            http_request_method: "GET",
            http_response_status_code: "200"
          })
        ).toBe(1)
        expect(
          value("http_server_request_duration_seconds_count", {
            http_route: "/assets/{file}",
            http_request_method: "GET",
            http_response_status_code: "200"
          })
        ).toBe(1)
        expect(value("etd_documents_total", { status: "queued", environment: "test" })).toBeGreaterThanOrEqual(1)
        expect(value("etd_documents_total", { status: "authorized", environment: "test" })).toBeGreaterThanOrEqual(1)
        expect(value("etd_authority_requests_total", { system: "homologation", operation: "submit", outcome: "ok" }))
          .toBeGreaterThanOrEqual(1)
        expect(value("etd_authority_request_duration_seconds_count", { system: "homologation" }))
          .toBeGreaterThanOrEqual(1)
        expect(value("etd_webhook_deliveries_total", { outcome: "succeeded" })).toBeGreaterThanOrEqual(1)
        expect(series.some((s) => s.name === "etd_queue_depth" && s.labels["queue"] === "issuance")).toBe(true)
        expect(series.some((s) => s.name === "etd_queue_oldest_age_seconds" && s.labels["queue"] === "webhooks")).toBe(
          true
        )
        expect(value("process_memory_usage_bytes")).toBeGreaterThan(10 * 1024 * 1024)
        // No unit sneaks in as a label; every metric is declared once.
        expect(series.some((s) => "unit" in s.labels)).toBe(false)
        expect(outcome.metrics.text).toMatch(/# TYPE http_server_request_duration_seconds histogram/)
        // Prometheus's own linter reads the exposition as a scraper would (where its Debian package is installed).
        if (hasTool("promtool")) {
          const lint = spawnSync("promtool", ["check", "metrics"], { input: outcome.metrics.text, encoding: "utf8" })
          expect(`${lint.stdout}${lint.stderr}`).toBe("")
          expect(lint.status).toBe(0)
        } else {
          console.warn("promtool (Debian package prometheus) is not installed: the exposition is not linted")
        }

        // One access-log line for the issue, with the conventional fields and the principal's ids.
        const records = lines.flatMap((line) => line.split("\n")).filter((line) => line.startsWith("{")).map((line) =>
          JSON.parse(line)
        )
        const access = records.filter((r) =>
          r.msg === "request" && r["http.route"] === "/v1/documents" && r["http.request.method"] === "POST"
        )
        expect(access).toHaveLength(1)
        expect(access[0]).toMatchObject({
          level: "info",
          service: "etd-e2e",
          trace_id: outcome.requestId,
          "http.request.method": "POST",
          "http.response.status_code": 202,
          "tenant.id": outcome.tenantId,
          "api_key.id": outcome.keyId,
          "client.address": spanAttribute(request, "client.address")
        })
        expect(typeof access[0].duration_ms).toBe("number")
        expect(Date.parse(access[0].time)).not.toBeNaN()

        // Nothing secret in anything exported or logged.
        const everything = JSON.stringify(collector.exports.map((e) => e.body)) + lines.join("")
        for (
          const secret of [
            outcome.token,
            outcome.session,
            LEAK,
            ENCODED_LEAK,
            outcome.password,
            "metrics-scrape-secret",
            "dXNlcjpwYXNzd29yZA=="
          ]
        ) {
          expect(everything).not.toContain(secret)
        }
      }),
    120_000
  )

  it.live(
    "an idle instance exports no span: polls, sweeps, probes and scrapes are not traced",
    () =>
      Effect.gen(function*() {
        const collector = yield* Effect.promise(startCollector)
        const { base: baseUrl, runtime } = startApp({
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
          OTEL_METRIC_EXPORT_INTERVAL: "500",
          METRICS_TOKEN: "idle-token",
          METRICS_SAMPLE_INTERVAL: "100 millis"
        })
        const readyAt = yield* Effect.promise(async () => {
          try {
            const base = await baseUrl
            // Start-up (migrations, the first sweeps) is not idleness: what comes after it is.
            await new Promise((r) => setTimeout(r, 500))
            const readyAt = BigInt(Date.now()) * 1_000_000n
            // Three seconds with both queues polled every 50 ms: 120 polls, what the default intervals
            // (1 s for webhooks) make in a minute and more; and the probes and scrapes an orchestrator sends.
            for (let i = 0; i < 30; i++) {
              await (await fetch(`${base}/healthz`)).text()
              await (await fetch(`${base}/readyz`)).text()
              await (await fetch(`${base}/metrics`, { headers: { authorization: "Bearer idle-token" } })).text()
              await new Promise((r) => setTimeout(r, 100))
            }
            return readyAt
          } finally {
            await runtime.dispose()
          }
        })
        yield* Effect.promise(() => close(collector.server))
        // The exporter did run (metrics went out), and no span went with them.
        expect(collector.exports.some((e) => e.path === "/v1/metrics")).toBe(true)
        // Not even start-up: only requests and queued jobs make spans.
        expect(readyAt).toBeGreaterThan(0n)
        expect(spansOf(collector.exports)).toEqual([])
      }),
    60_000
  )
})

describe("OTEL_TRACES_SAMPLER", () => {
  it.live(
    "reaches requests and their jobs: always_off exports nothing; parentbased_always_off follows a sampled caller",
    () =>
      Effect.gen(function*() {
        const run = (sampler: string, traceparent?: string) =>
          Effect.gen(function*() {
            const collector = yield* Effect.promise(startCollector)
            const { base: baseUrl, runtime } = startApp({
              OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
              OTEL_TRACES_SAMPLER: sampler
            })
            const requestId = yield* Effect.promise(async () => {
              try {
                const base = await baseUrl
                const response = await fetch(`${base}/v1/auth/register`, {
                  method: "POST",
                  headers: { "content-type": "application/json", ...(traceparent ? { traceparent } : {}) },
                  body: JSON.stringify({
                    email: `sampler-${sampler}@example.com`,
                    password: "a long and secret password",
                    tenant: { name: "Sampled", tax_id: cnpj() }
                  })
                })
                expect(response.status).toBe(201)
                return response.headers.get("x-request-id")
              } finally {
                await runtime.dispose()
              }
            })
            yield* Effect.promise(() => close(collector.server))
            return { requestId, spans: spansOf(collector.exports) }
          })
        const off = yield* run("always_off")
        expect(off.spans).toEqual([])
        // The request id is still the request's trace id, for support tickets.
        expect(off.requestId).toMatch(/^[0-9a-f]{32}$/)
        const caller = "ab".repeat(16)
        const followed = yield* run("parentbased_always_off", `00-${caller}-${"cd".repeat(8)}-01`)
        expect(followed.spans.some((span) => span.name === "POST /v1/auth/register" && span.traceId === caller)).toBe(
          true
        )
        const rootOff = yield* run("parentbased_always_off")
        expect(rootOff.spans).toEqual([])
      }),
    90_000
  )
})

describe("metrics port", () => {
  it.live(
    "METRICS_PORT serves GET /metrics alone, without a token; the API port then has no /metrics",
    () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(() =>
          new Promise<number>((resolve) => {
            const probe = createServer().listen(0, "127.0.0.1", () => {
              const { port } = probe.address() as AddressInfo
              probe.close(() => resolve(port))
            })
          })
        )
        const { base: baseUrl, runtime } = startApp({ METRICS_PORT: String(port) }, false)
        const answers = yield* Effect.promise(async () => {
          try {
            const base = await baseUrl
            await (await fetch(`${base}/healthz`)).text()
            const metrics = await fetch(`http://127.0.0.1:${port}/metrics`)
            const other = await fetch(`http://127.0.0.1:${port}/v1/tenants`)
            const onApi = await fetch(`${base}/metrics`)
            return { metrics: metrics.status, text: await metrics.text(), other: other.status, onApi: onApi.status }
          } finally {
            await runtime.dispose()
          }
        })
        expect(answers.metrics).toBe(200)
        expect(parsePrometheus(answers.text).some((s) => s.name === "http_server_request_duration_seconds_count")).toBe(
          true
        )
        expect(answers.other).toBe(404)
        expect(answers.onApi).toBe(404)
      }),
    60_000
  )
})

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

/** The Prometheus text format's sample lines (comments skipped), strictly: a malformed line fails the test. */
const parsePrometheus = (text: string): Array<Sample> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!
    }
    const value = match[3] === "+Inf" ? Infinity : Number(match[3])
    if (Number.isNaN(value) && match[3] !== "NaN") throw new Error(`not a number: ${line}`)
    return { name: match[1]!, labels, value }
  })
