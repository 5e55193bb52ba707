/**
 * The README's "Five minutes with curl", run as a reader runs it: the blocks marked
 * `<!-- walkthrough -->`, in order, in one `bash -euo pipefail`, against the built service
 * (`node dist/main.js`, what `npm start` runs) on an empty data directory, with only `BASE` pointing
 * it at this test's port. Any failed request, missing value or wrong answer stops the script, and the
 * test with it. The walkthrough needs curl and jq; without them the test says it is skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { appConfig } from "../../src/Config.js"
import { serviceStart } from "../load/children.js"
import { freePort } from "../load/loadgen.js"
import { hasTool } from "../support/tools.js"
import { walkthroughBlocks } from "./markdown.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const readme = readFileSync(join(root, "README.md"), "utf8")

const missing = ["bash", "curl", "jq"].filter((tool) => !hasTool(tool))
/** The test's title, saying why it is skipped when a tool is missing. */
const title = (name: string) =>
  missing.length === 0
    ? name
    : `${name} [skipped: ${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not installed` +
      `${missing.includes("jq") ? "; the README says how to get jq" : ""}]`

/** The newest modification time of a file, or of any file under a folder. */
const newest = (path: string): number => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((entry) => newest(join(path, entry))))
}

/**
 * dist/ as `npm run build` leaves it, built again (the server bundle, as test/build/Dist.test.ts
 * builds it) when it is missing or older than what it is built from.
 */
const ensureBuilt = () => {
  const bundle = join(root, "dist", "main.js")
  const sources = ["src", "scripts/build.mjs", "package.json", "package-lock.json"].map((path) => join(root, path))
  if (existsSync(bundle) && newest(bundle) >= Math.max(...sources.filter(existsSync).map(newest))) return
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" })
}

let service: ChildProcess | undefined
let serviceOutput = ""
let base = ""
let dataDir = ""
let workDir = ""

/** `node dist/main.js` on the empty `dataDir`, as `npm start` starts it but on a free port; resolves once ready. */
const startService = async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  serviceOutput = ""
  const child = spawn(process.execPath, [...serviceStart.flags, "dist/main.js"], {
    cwd: root,
    env: { PATH: process.env["PATH"] ?? "", ...serviceStart.env, PORT: String(port), DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "pipe"]
  })
  service = child
  child.stdout!.on("data", (chunk: Buffer) => (serviceOutput += chunk.toString("utf8")))
  child.stderr!.on("data", (chunk: Buffer) => (serviceOutput += chunk.toString("utf8")))
  const started = Date.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dist/main.js exited with ${child.exitCode}:\n${serviceOutput}`)
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) return
    if (Date.now() - started > 60_000) throw new Error(`dist/main.js was not ready in 60 s:\n${serviceOutput}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const stopService = async () => {
  if (service && service.exitCode === null && service.signalCode === null) {
    const exited = once(service, "exit")
    service.kill("SIGTERM")
    const timer = setTimeout(() => service?.kill("SIGKILL"), 30_000)
    await exited
    clearTimeout(timer)
  }
}

/** Runs `script` in `bash -euo pipefail` with `BASE` set; at most `timeoutMs`. */
const runBash = async (script: string, timeoutMs: number) => {
  const child = spawn("bash", ["-euo", "pipefail", "-c", script], {
    cwd: workDir,
    env: { PATH: process.env["PATH"] ?? "", HOME: workDir, LANG: "C.UTF-8", BASE: base },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
  const [code, signal] = (await once(child, "exit")) as [number | null, NodeJS.Signals | null]
  clearTimeout(timer)
  return { code, signal, stdout, stderr }
}

describe("the README's walkthrough", () => {
  const blocks = walkthroughBlocks(readme)

  it("is marked in the README, and pasted as-is targets npm start's default port", () => {
    expect(blocks.length).toBeGreaterThan(0)
    const defaults = Effect.runSync(appConfig.parse(ConfigProvider.fromUnknown({})))
    expect(blocks[0]!.split("\n")[0]).toBe(`BASE=\${BASE:-http://localhost:${defaults.port}}`)
  })

  describe.runIf(missing.length === 0)("against the built service", () => {
    beforeAll(async () => {
      ensureBuilt()
      dataDir = mkdtempSync(join(tmpdir(), "etd-walkthrough-data-"))
      workDir = mkdtempSync(join(tmpdir(), "etd-walkthrough-shell-"))
      try {
        await startService()
      } catch (first) {
        // test/build/Dist.test.ts rebuilds dist/ whatever its age, and may run beside this file: a
        // start that read a bundle file while it was being rewritten exits at once. One more start,
        // once that build is over, tells such a race from a service that does not start.
        if (service?.exitCode === null) throw first
        await new Promise((resolve) => setTimeout(resolve, 5_000))
        rmSync(dataDir, { recursive: true, force: true })
        dataDir = mkdtempSync(join(tmpdir(), "etd-walkthrough-data-"))
        await startService().catch((second: Error) => {
          throw new Error(`${second.message}\n--- the first start\n${(first as Error).message}`)
        })
      }
    }, 120_000)

    afterAll(async () => {
      await stopService()
      for (const dir of [dataDir, workDir]) if (dir !== "") rmSync(dir, { recursive: true, force: true })
    })

    it(title("runs in bash -euo pipefail, each step answering as its comment says"), async () => {
      const result = await runBash(blocks.join("\n\n"), 90_000)
      const report =
        `exit ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}` +
        `\n--- service (last lines)\n${serviceOutput.split("\n").slice(-20).join("\n")}`
      expect(result.code, report).toBe(0)
      // What the comments under the printing steps promise.
      expect(result.stdout, report).toMatch(/"status":"authorized","authority":\{"access_key":"\d{50}"/u)
      expect(result.stdout, report).toContain("<nNFSe>1</nNFSe>")
      expect(result.stdout, report).toContain("%PDF-")
      expect(result.stdout, report).toContain("cancel_requested")
      expect(result.stdout, report).toMatch(/"status":"cancelled","cancellation":\{"reason_code":"issue_error"/u)
      expect(result.stdout, report).toMatch(/"event_type":"document.cancelled","status":"pending"/u)
      expect(result.stdout, report).toMatch(/"event_type":"document.authorized","status":"pending"/u)
      expect(result.stdout, report).toMatch(/"object":"webhook_endpoint","deleted":true/u)
      // The downloads landed where the reader stands.
      expect(readFileSync(join(workDir, "danfse.pdf")).subarray(0, 5).toString("latin1")).toBe("%PDF-")
      expect(readFileSync(join(workDir, "nfse.xml"), "utf8")).toMatch(/^<\?xml/u)
      expect(readFileSync(join(workDir, "nfce.pdf")).subarray(0, 5).toString("latin1")).toBe("%PDF-")
    }, 120_000)
  })
})
