/**
 * A JSON request to the test app from a chosen local address (127.0.0.0/8 is all loopback), with
 * headers of the test's choosing: how tests tell clients apart, and play a proxy in front of the app.
 */
import { Effect } from "effect"
import { HttpServer } from "effect/http"
import http from "node:http"
import type { RawResponse } from "../http/helpers.js"

export const fromAddress = (
  localAddress: string,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  headers: Readonly<Record<string, string>> = {}
) =>
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const port = (server.address as { readonly port: number }).port
    return yield* Effect.promise(() =>
      new Promise<RawResponse>((resolve, reject) => {
        const request = http.request(
          {
            host: "127.0.0.1",
            port,
            method,
            path,
            localAddress,
            headers: { "content-type": "application/json", ...headers }
          },
          (response) => {
            let text = ""
            response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk)).on(
              "end",
              () => resolve({ status: response.statusCode!, headers: response.headers as Record<string, string>, text })
            )
          }
        )
        request.on("error", reject).end(body === undefined ? undefined : JSON.stringify(body))
      })
    )
  })
