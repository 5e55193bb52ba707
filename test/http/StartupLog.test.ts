/**
 * The line `npm start` prints once the port is open names the two pages a newcomer opens next:
 * the dashboard and the API reference, at the port the service listens on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { HttpServer, HttpServerResponse } from "effect/http"
import { createServer } from "node:net"
import * as Server from "../../src/http/Server.js"
import { makeGuardedLogger } from "../../src/telemetry/Logger.js"

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

describe("start-up log", () => {
  it.effect("names the dashboard's and the reference's URLs", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(freePort)
      const lines: Array<string> = []
      const logger = makeGuardedLogger((line) => lines.push(line), () => undefined, "etd-test")
      const serving = HttpServer.serve(Effect.succeed(HttpServerResponse.empty())).pipe(
        Layer.provide(Server.layer({ port, drainTimeout: 0 }))
      )
      yield* Layer.build(serving).pipe(Effect.scoped, Effect.provide(Logger.layer([logger])))
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      const listening = records.filter((record) => String(record["msg"]).startsWith("listening"))
      expect(listening).toEqual([
        expect.objectContaining({
          level: "info",
          msg:
            `listening on port ${port}: dashboard http://localhost:${port}/, API reference http://localhost:${port}/docs`,
          dashboard_url: `http://localhost:${port}/`,
          reference_url: `http://localhost:${port}/docs`
        })
      ])
    }))
})
