/**
 * The fuzz's transport: one `node:http` request per connection, so nothing the server does to one
 * request can hide behind a reused socket, and so the fuzz can send what typed clients refuse to
 * (raw bytes, chunked bodies, odd headers and paths). A connection reset, a socket closed before the
 * answer ended, or no answer at all is reported as such rather than thrown away.
 */
import * as http from "node:http"

export interface WireRequest {
  readonly method: string
  /** Already percent-encoded where needed: it goes on the request line as it is. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Uint8Array | undefined
  /** Sent in several chunks with `Transfer-Encoding: chunked` instead of a `Content-Length`. */
  readonly chunked?: boolean | undefined
}

export interface WireResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly text: string
}

export type Outcome =
  | { readonly _tag: "Answered"; readonly response: WireResponse }
  | { readonly _tag: "Dropped"; readonly reason: string }

const CHUNK_BYTES = 64 * 1024

export const send = (port: number, request: WireRequest, timeoutMs: number): Promise<Outcome> =>
  new Promise((resolve) => {
    let settled = false
    const settle = (outcome: Outcome) => {
      if (settled) return
      settled = true
      resolve(outcome)
    }
    const body = request.body
    const headers: Record<string, string> = { ...request.headers }
    if (body !== undefined) {
      // Named explicitly: Node chunks only methods that usually carry a body, and would send a GET's
      // body with no framing at all.
      if (request.chunked === true) headers["transfer-encoding"] = "chunked"
      else headers["content-length"] = String(body.byteLength)
    }
    const req = http.request({
      host: "127.0.0.1",
      port,
      method: request.method,
      path: request.path,
      headers,
      agent: false
    })
    req.setTimeout(timeoutMs, () => {
      settle({ _tag: "Dropped", reason: `no answer within ${timeoutMs} ms` })
      req.destroy()
    })
    let answering = false
    req.on("response", (res) => {
      answering = true
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("aborted", () => settle({ _tag: "Dropped", reason: "the response was cut off" }))
      res.on("error", (error) => settle({ _tag: "Dropped", reason: `the response failed: ${error.message}` }))
      res.on("end", () =>
        settle({
          _tag: "Answered",
          response: {
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8")
          }
        }))
    })
    // An error after the answer arrived (the server closing while the rest of an oversized body was
    // still being written) is not a drop: the client has its answer.
    req.on("error", (error) => {
      if (!answering) settle({ _tag: "Dropped", reason: `the connection failed: ${error.message}` })
    })
    if (body === undefined) {
      req.end()
    } else if (request.chunked === true) {
      for (let at = 0; at < body.byteLength; at += CHUNK_BYTES) req.write(body.subarray(at, at + CHUNK_BYTES))
      req.end()
    } else {
      req.end(body)
    }
  })
