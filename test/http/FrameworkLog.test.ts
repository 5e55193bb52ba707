/**
 * Effect 4's `HttpRouter.serve` writes a log line for every request unless told not to. That line
 * cost a third of the throughput in our measurement, and it records the raw URL; the service turns
 * it off (the access log is ours to write).
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeTestApp, rawRequest } from "../support/TestApp.js"

/** Everything written to stdout while `effect` runs. */
const capturingStdout = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const lines: Array<string> = []
      const write = process.stdout.write.bind(process.stdout)
      process.stdout.write = ((chunk: string | Uint8Array) => {
        lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"))
        return true
      }) as typeof process.stdout.write
      return { lines, restore: () => void (process.stdout.write = write) }
    }),
    ({ lines }) => Effect.map(effect, (result) => ({ result, lines })),
    ({ restore }) => Effect.sync(restore)
  )

layer(makeTestApp("embedded"), { timeout: 60_000, excludeTestServices: true })("framework request log", (it) => {
  it.effect("no per-request line from the HTTP framework, for a success or an error", () =>
    Effect.gen(function*() {
      const { lines, result } = yield* capturingStdout(
        Effect.all([rawRequest("GET", "/healthz"), rawRequest("GET", "/v1/no-such-route")])
      )
      expect(result.map((response) => response.status)).toEqual([200, 404])
      expect(lines.join("")).not.toContain("Sent HTTP response")
      expect(lines.join("")).not.toContain("http.status")
    }))
})
