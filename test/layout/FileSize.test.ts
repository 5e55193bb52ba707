/**
 * No file of the service's sources grows past 400 lines: past that a file has been holding more than
 * one job, and the next change has to read all of them. The layering itself is `npm run depcruise`'s.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const MAX_LINES = 400
const root = fileURLToPath(new URL("../..", import.meta.url))

const sourcesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourcesUnder(join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [join(dir, entry.name)]
      : []
  )

const oversized = (dir: string, max = MAX_LINES) =>
  sourcesUnder(dir)
    .map((file) => ({ file: relative(root, file), lines: readFileSync(file, "utf8").split("\n").length - 1 }))
    .filter(({ lines }) => lines > max)

describe("source files", () => {
  it(`src/ has no file over ${MAX_LINES} lines`, () => {
    expect(oversized(join(root, "src"))).toEqual([])
  })

  it("the check finds a file over the limit", () => {
    // src/ holds files of well over 100 lines: the same walk with a lower limit must name some.
    expect(oversized(join(root, "src"), 100).length).toBeGreaterThan(0)
  })
})
