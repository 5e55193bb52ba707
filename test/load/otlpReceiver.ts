/**
 * An OTLP/HTTP receiver for the benchmarks that export the service's telemetry: it answers every
 * export 200 (Effect's exporter stops exporting for 60 s after a failed one) and parses each trace
 * export to count its spans, which costs this process a little CPU, as a collector on the same
 * machine would cost.
 */
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync } from "node:zlib"

export interface OtlpCounts {
  traces: number
  metrics: number
  bytes: number
  spans: number
  malformed: number
}

interface OtlpTraces {
  readonly resourceSpans?: ReadonlyArray<
    { readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<unknown> }> }
  >
}

export const startOtlpReceiver = async () => {
  const counts: OtlpCounts = { traces: 0, metrics: 0, bytes: 0, spans: 0, malformed: 0 }
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const raw = Buffer.concat(chunks)
      counts.bytes += raw.length
      if (request.url === "/v1/traces") {
        counts.traces++
        try {
          const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw
          const traces = JSON.parse(body.toString("utf8")) as OtlpTraces
          for (const resource of traces.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) counts.spans += scope.spans?.length ?? 0
          }
        } catch {
          counts.malformed++
        }
      } else if (request.url === "/v1/metrics") {
        counts.metrics++
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return {
    counts,
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close()
  }
}
