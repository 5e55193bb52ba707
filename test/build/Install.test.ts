/**
 * What `npm install` does before any of our code runs.
 *
 * On a Node older than `engines` (22.19), `npm install` stops before fetching or installing anything,
 * saying which Node is needed: the repository's `.npmrc` sets `engine-strict` (docs/development.md).
 * Run on a copy of the project's manifest, lock file and `.npmrc`, as `--dry-run --offline --ignore-scripts`, so it
 * reaches neither the registry nor the checkout's node_modules.
 */
import { describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The machine's own Node, 20 on this project's machines and its CI's (the suite runs on 24). */
const OLD_NODE = "/usr/bin/node"
const oldNodeVersion = existsSync(OLD_NODE)
  ? spawnSync(OLD_NODE, ["--version"], { encoding: "utf8" }).stdout.trim()
  : ""
const oldNodeIsOld = /^v(1\d|20|21|22\.(1[0-8]|[0-9]))\./.test(oldNodeVersion)

/** npm's own script, so that it runs on whichever Node the test picks. */
const npmCli = (): string => {
  const fromNpm = process.env["npm_execpath"]
  if (fromNpm?.endsWith(".js")) return fromNpm
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    const candidate = join(dir, "npm")
    if (existsSync(candidate)) return realpathSync(candidate)
  }
  throw new Error("npm is not on PATH")
}

const installIn = (nodeBinary: string) => {
  const dir = mkdtempSync(join(tmpdir(), "etd-node-version-"))
  try {
    for (const file of ["package.json", "package-lock.json", ".npmrc"]) copyFileSync(join(root, file), join(dir, file))
    const result = spawnSync(
      nodeBinary,
      [
        npmCli(),
        "install",
        "--dry-run",
        "--offline",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--no-update-notifier"
      ],
      { cwd: dir, encoding: "utf8", timeout: 120_000, env: { ...process.env, npm_config_loglevel: "warn" } }
    )
    return {
      status: result.status,
      output: `${result.stdout}${result.stderr}`,
      installed: existsSync(join(dir, "node_modules"))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("the Node version npm install accepts", () => {
  it.skipIf(!oldNodeIsOld)(
    `stops at once on an old Node, naming the version needed (${OLD_NODE} ${oldNodeVersion || "is absent"})`,
    () => {
      const { installed, output, status } = installIn(OLD_NODE)
      expect(status, output).toBe(1)
      expect(output).toContain("EBADENGINE")
      expect(output).toContain(`Required: {"node":">=22.19"}`)
      expect(output).toContain(`"node":"${oldNodeVersion}"`)
      // Stopped at the project itself: no dependency was looked at.
      expect(output).not.toMatch(/@effect|undici|dependency-cruiser/)
      expect(installed).toBe(false)
    },
    150_000
  )

  it("goes ahead on the Node running the suite", () => {
    const { output, status } = installIn(process.execPath)
    expect(status, output).toBe(0)
    expect(output).not.toContain("EBADENGINE")
  }, 150_000)
})

/**
 * npm 11 warns about every dependency whose install script nobody reviewed, and is to skip those
 * scripts later: each one in the lock file is approved or denied in `allowScripts`
 * (docs/development.md says why esbuild's and dprint's are approved).
 */
describe("dependencies' install scripts", () => {
  it("are each reviewed in package.json's allowScripts", () => {
    const readJson = (file: string) => JSON.parse(readFileSync(join(root, file), "utf8"))
    const lock = readJson("package-lock.json") as {
      packages: Record<string, { hasInstallScript?: boolean; version?: string }>
    }
    const reviewed = Object.keys((readJson("package.json") as { allowScripts?: object }).allowScripts ?? {})
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
    expect(withScripts.length).toBeGreaterThan(0)
    expect(withScripts.filter((name) => !reviewed.includes(name))).toEqual([])
  })
})
