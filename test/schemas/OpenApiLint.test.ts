/**
 * The checked-in OpenAPI document passes Redocly's recommended ruleset with no error (the freshness
 * test keeps it equal to what the contract renders and serves at /openapi.json).
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

interface LintProblem {
  readonly ruleId: string
  readonly severity: "error" | "warn"
  readonly message: string
  readonly location: ReadonlyArray<{ readonly pointer?: string }>
}

interface LintReport {
  readonly totals: { readonly errors: number; readonly warnings: number }
  readonly problems: ReadonlyArray<LintProblem>
}

/** `redocly lint --format=json`: it exits non-zero when there are errors, and reports on stdout either way. */
const lint = (file: string) =>
  new Promise<LintReport>((resolve, reject) => {
    execFile(
      process.execPath,
      ["node_modules/@redocly/cli/bin/cli.js", "lint", file, "--format=json", "--extends=recommended"],
      // No update check or telemetry: the test runs offline and must not talk to Redocly.
      { cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
      (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as LintReport)
        } catch {
          reject(error ?? new Error(`redocly printed no JSON report: ${stderr}`))
        }
      }
    )
  })

const summary = (problems: ReadonlyArray<LintProblem>) =>
  problems.map((p) => `${p.severity} ${p.ruleId} ${p.location.map((l) => l.pointer).join(" ")}: ${p.message}`)

describe("schemas/openapi.json under redocly lint (recommended rules)", () => {
  it("has no errors and no warnings but the missing license", async () => {
    const report = await lint("schemas/openapi.json")
    expect(summary(report.problems.filter((p) => p.severity === "error"))).toEqual([])
    expect(report.totals.errors).toBe(0)
    // The service is not published under a licence, so `info.license` stays absent on purpose.
    expect(summary(report.problems.filter((p) => p.ruleId !== "info-license"))).toEqual([])
  }, 30_000)
})
