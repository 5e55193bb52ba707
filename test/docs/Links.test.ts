/**
 * Every relative link in the repository's Markdown (the README, docs/, observability/, client/, …)
 * resolves: to a file or folder of the repository, and a `#anchor` into Markdown to one of its
 * headings, named as GitHub names them. The checker is first shown to catch what it must catch, on a
 * small made-up repository, so that a quiet pass on the real one means something.
 */
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { anchorsOf, brokenLinks, githubSlug, linksOf, repositoryFiles } from "./markdown.js"

const root = fileURLToPath(new URL("../..", import.meta.url))

describe("the Markdown link checker", () => {
  it("names headings as GitHub does", () => {
    expect(githubSlug("Start-up, shutdown and outages")).toBe("start-up-shutdown-and-outages")
    expect(githubSlug("Effect 3 → Effect 4")).toBe("effect-3--effect-4")
    expect(githubSlug("The simulator's test values")).toBe("the-simulators-test-values")
    expect(githubSlug("`npm start` and [the dashboard](x.md)")).toBe("npm-start-and-the-dashboard")
    expect(githubSlug("Conta **não** verificada")).toBe("conta-não-verificada")
    expect(githubSlug("WORKER_LEASE (60 s)")).toBe("worker_lease-60-s")
    expect([...anchorsOf("# A\n\n## Notes\n\n```\n# Not a heading\n```\n\n## Notes\n\nSetext\n---\n")])
      .toEqual(["a", "notes", "notes-1", "setext"])
  })

  it("finds links outside code, and reference definitions", () => {
    const text = [
      "See [the API](docs/api.md#errors), ![a chart](img/chart.png \"title\") and `[not](a-link.md)`.",
      "```md",
      "[inside a fence](nowhere.md)",
      "```",
      "[ref]: ../other.md",
      "[angle](<docs/with space.md>)"
    ].join("\n")
    expect(linksOf(text).map((link) => [link.line, link.target])).toEqual([
      [1, "docs/api.md#errors"],
      [1, "img/chart.png"],
      [5, "../other.md"],
      [6, "docs/with space.md"]
    ])
  })

  it("reports a missing file, a missing heading and a link out of the repository, and nothing else", () => {
    const texts: Record<string, string> = {
      "README.md": [
        "# Title",
        "[ok](docs/guide.md) [ok anchor](docs/guide.md#second-part) [ok folder](docs/) [ok self](#title)",
        "[ok code](src/main.ts#L10) [ok web](https://example.com/x.md) [ok mail](mailto:a@example.com)",
        "[missing file](docs/gone.md)",
        "[missing anchor](docs/guide.md#third-part)",
        "[missing self anchor](#nothing)",
        "[outside](../shared/SPEC.md)"
      ].join("\n"),
      "docs/guide.md": "# Guide\n\n## Second part\n\n[back](../README.md#title) [wrong case](../README.md#Title)\n",
      "src/main.ts": ""
    }
    const broken = brokenLinks(new Set(Object.keys(texts)), (path) => texts[path]!)
    expect(broken.map(({ file, line, target }) => `${file}:${line} ${target}`)).toEqual([
      "README.md:4 docs/gone.md",
      "README.md:5 docs/guide.md#third-part",
      "README.md:6 #nothing",
      "README.md:7 ../shared/SPEC.md",
      "docs/guide.md:5 ../README.md#Title"
    ])
  })
})

describe("the repository's Markdown", () => {
  it("has no broken relative link", () => {
    const files = repositoryFiles(root)
    // The check must have found the documentation, or it proves nothing.
    expect(files.has("README.md")).toBe(true)
    expect([...files].filter((file) => file.startsWith("docs/") && file.endsWith(".md")).length).toBeGreaterThan(0)
    const broken = brokenLinks(files, (path) => readFileSync(join(root, path), "utf8"))
    expect(broken.map(({ file, line, target, problem }) => `${file}:${line}: (${target}) ${problem}`)).toEqual([])
  })
})
