/** LOG_LEVEL as operators write it: any case, and `Warning` for `Warn` (Effect 4 itself wants "Warn"). */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { logLevelConfig } from "../../src/telemetry/Logger.js"

const parse = (env: Record<string, string>) => Effect.runSyncExit(logLevelConfig.parse(ConfigProvider.fromEnv({ env })))

describe("LOG_LEVEL", () => {
  it("accepts level names in any case, and Warning", () => {
    const cases: Record<string, string> = {
      debug: "Debug",
      INFO: "Info",
      Warn: "Warn",
      warning: "Warn",
      Error: "Error",
      none: "None"
    }
    for (const [input, level] of Object.entries(cases)) {
      expect(parse({ LOG_LEVEL: input }), input).toEqual(Exit.succeed(level))
    }
  })

  it("defaults to Info and refuses an unknown name, naming the choices", () => {
    expect(parse({})).toEqual(Exit.succeed("Info"))
    const refused = parse({ LOG_LEVEL: "loud" })
    expect(Exit.isFailure(refused)).toBe(true)
    expect(String(refused)).toContain("LOG_LEVEL must be one of")
  })
})
