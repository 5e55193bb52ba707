/**
 * One webhook POST with node's http/https client and the SSRF guard's `lookup`, so every resolved
 * address is checked and the socket connects to the checked one. Redirects are not followed (node's
 * client never does): a 3xx is an answer like any other non-2xx.
 */
import { Effect } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { performance } from "node:perf_hooks"
import { type guardedLookup, SSRF_ERROR_CODE } from "./SsrfGuard.js"

/** How much of a response body is kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024

export type SendResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string; readonly latencyMs: number }
  | { readonly _tag: "NoAnswer"; readonly error: string; readonly latencyMs: number }

// Postgres text cannot hold NUL; a binary response is kept as what survives.
const excerpt = (chunks: ReadonlyArray<Buffer>) =>
  Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8").replace(/\0/g, "")

const errorText = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "code" in error && error.code === SSRF_ERROR_CODE) {
    // Tenants read this text: naming the internal address would make the guard a DNS oracle.
    return "refused by the SSRF guard: the target resolves to an address that is not allowed (private, loopback or reserved)"
  }
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined
  const message = error instanceof Error ? error.message : String(error)
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message
}

/** One POST with node's client; interruption (the timeout) destroys the request. */
export const send = (options: {
  readonly url: URL
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  readonly lookup: ReturnType<typeof guardedLookup>
  readonly agents: { readonly http: http.Agent; readonly https: https.Agent }
}) =>
  Effect.callback<SendResult>((resume) => {
    // Wall-clock latency of real network I/O, independent of the Effect clock (TestClock in tests).
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const secure = options.url.protocol === "https:"
    const request = (secure ? https : http).request(options.url, {
      method: "POST",
      agent: secure ? options.agents.https : options.agents.http,
      lookup: options.lookup,
      headers: { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) }
    })
    let settled = false
    const done = (result: SendResult) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(result))
    }
    request.on("error", (error) => done({ _tag: "NoAnswer", error: errorText(error), latencyMs: elapsed() }))
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      let kept = 0
      const finish = () =>
        done({ _tag: "Answered", status: response.statusCode ?? 0, body: excerpt(chunks), latencyMs: elapsed() })
      response.on("data", (chunk: Buffer) => {
        if (kept < RESPONSE_EXCERPT_BYTES) {
          chunks.push(chunk)
          kept += chunk.length
        }
        // Beyond the excerpt the body is of no use: stop reading rather than wait for a large one.
        if (kept >= RESPONSE_EXCERPT_BYTES) {
          finish()
          response.destroy()
        }
      })
      response.on("end", finish)
      response.on("error", finish)
      response.on("aborted", finish)
    })
    request.end(options.body)
    return Effect.sync(() => {
      settled = true
      request.destroy()
    })
  })
