/**
 * The process a supervisor runs (SPEC §12; issue 16 item 3), started the way the README says,
 * `npm start`, on the embedded database:
 * - during start-up every connection is either refused or answered: the port opens only when the
 *   app can answer (it used to accept connections that then waited forever);
 * - SIGTERM sent to the `npm` process reaches the server, which stops accepting, answers the
 *   requests in flight and exits;
 * - what Node itself refuses (headers over 16 KiB) is still answered in the SPEC's JSON shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

type Attempt = { readonly kind: "answered"; readonly status: number } | { readonly kind: "refused" } | {
  readonly kind: "stalled" | "reset"
}

/** One HTTP request with its own deadline; how it ended. */
const attempt = (port: number, method: string, path: string, body?: string, timeoutMs = 5_000) =>
  new Promise<Attempt>((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume()
        res.on("end", () => resolve({ kind: "answered", status: res.statusCode ?? 0 }))
      }
    )
    req.setTimeout(timeoutMs, () => {
      resolve({ kind: "stalled" })
      req.destroy()
    })
    req.on(
      "error",
      (error: NodeJS.ErrnoException) => resolve({ kind: error.code === "ECONNREFUSED" ? "refused" : "reset" })
    )
    req.end(body)
  })

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** `npm start`, through the same npm that runs the suite when there is one. */
const npmStart = (env: NodeJS.ProcessEnv): ChildProcess => {
  const npmCli = process.env["npm_execpath"]
  const [command, args] = npmCli?.endsWith(".js") ? [process.execPath, [npmCli, "start"]] : ["npm", ["start"]]
  // The embedded database, as on a newcomer's machine, whatever the suite's environment says.
  const { DATABASE_URL: _unused, ...inherited } = process.env
  return spawn(command, args, { cwd: process.cwd(), env: { ...inherited, ...env }, stdio: ["ignore", "pipe", "pipe"] })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("process lifecycle (npm start)", () => {
  it(
    "refuses or answers every connection during start-up; SIGTERM to npm drains requests in flight and exits",
    async () => {
      const port = await freePort()
      const dataDir = mkdtempSync(join(tmpdir(), "etd-lifecycle-"))
      const child = npmStart({ PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "warn" })
      let output = ""
      child.stdout?.on("data", (chunk) => (output += chunk))
      child.stderr?.on("data", (chunk) => (output += chunk))
      const exited = once(child, "exit")
      try {
        // Start-up: a request every 50 ms until the service is healthy, each allowed 5 s.
        const seen: Array<Attempt> = []
        const deadline = Date.now() + 90_000
        for (;;) {
          const outcome = await attempt(port, "GET", "/healthz")
          seen.push(outcome)
          if (outcome.kind === "answered" && outcome.status === 200) break
          expect(Date.now(), `never became healthy:\n${output}`).toBeLessThan(deadline)
          await sleep(50)
        }
        expect(seen.filter((a) => a.kind === "stalled" || a.kind === "reset"), output).toEqual([])

        // Node refuses a request line and headers over 16 KiB itself; the answer still has the SPEC's shape.
        const oversized = await fetch(`http://127.0.0.1:${port}/v1/me?x=${"a".repeat(17_000)}`)
        expect(oversized.status).toBe(431)
        expect(oversized.headers.get("x-request-id")).toMatch(/^[0-9a-f]{32}$/)
        expect(await oversized.json()).toMatchObject({ code: "request_headers_too_large" })

        // Requests in flight when SIGTERM arrives: registrations, each a scrypt hash and a few writes.
        const inFlight = Array.from({ length: 8 }, (_, i) =>
          attempt(
            port,
            "POST",
            "/v1/auth/register",
            JSON.stringify({ email: `drain-${i}-${port}@example.com`, password: "correct horse battery staple" }),
            30_000
          ))
        // Long enough for the server to have read them (a connection whose request it has not read yet
        // counts as idle and is closed with the port); short of the time eight scrypt hashes take.
        await sleep(250)
        child.kill("SIGTERM")
        const answers = await Promise.all(inFlight)
        expect(answers, output).toEqual(Array(8).fill({ kind: "answered", status: 201 }))

        const [code, signal] = (await Promise.race([exited, sleep(30_000).then(() => ["timeout", null])])) as [
          unknown,
          unknown
        ]
        expect({ code, signal }, output).toEqual({ code: 0, signal: null })
        // Nothing is left listening: the server itself stopped, not only npm.
        expect(await attempt(port, "GET", "/healthz")).toEqual({ kind: "refused" })
      } finally {
        child.kill("SIGKILL")
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
    150_000
  )
})
