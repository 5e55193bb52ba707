/**
 * What the documentation tests read in Markdown: the repository's Markdown files, their relative
 * links and headings (with GitHub's anchors), and the README's marked walkthrough blocks.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, statSync } from "node:fs"
import { join, posix } from "node:path"

/** Folders that hold no documentation of ours, for the walk used where git is not available. */
const NOT_OURS = new Set([".git", "node_modules", "dist", "coverage", "data", "test-results"])

/**
 * The repository's files as git sees them (tracked, plus new files git does not ignore), as
 * repository-relative paths with `/`. Without git (an unpacked archive), every file outside the
 * folders above.
 */
export const repositoryFiles = (root: string): ReadonlySet<string> => {
  try {
    const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"]
    })
    // A deleted but still tracked file is listed too: keep only what is on disk.
    return new Set(listed.split("\0").filter((path) => path !== "" && isFile(join(root, path))))
  } catch {
    const files = new Set<string>()
    const walk = (dir: string) => {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
        const path = dir === "" ? entry.name : `${dir}/${entry.name}`
        if (entry.isDirectory()) {
          if (!NOT_OURS.has(entry.name)) walk(path)
        } else if (entry.isFile()) files.add(path)
      }
    }
    walk("")
    return files
  }
}

const isFile = (path: string) => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

export const isMarkdown = (path: string) => /\.md$/iu.test(path)

/** The lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
export const proseLines = (text: string): Array<{ readonly line: number; readonly text: string }> => {
  const out: Array<{ line: number; text: string }> = []
  let fence: string | undefined
  text.split(/\r?\n/u).forEach((line, index) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/u.exec(line)
    if (fence === undefined) {
      if (opening) fence = opening[1]
      else out.push({ line: index + 1, text: line })
    } else if (
      opening && opening[1]![0] === fence[0] && opening[1]!.length >= fence.length && line.trim() === opening[1]
    ) {
      fence = undefined
    }
  })
  return out
}

/** A heading's text as GitHub renders it: no inline markup, links and images reduced to their text. */
const headingText = (raw: string) =>
  raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/gu, "$1")
    .replace(/<[^>]+>/gu, "")
    .replace(/`/gu, "")
    .replace(/(\*\*|__|\*)/gu, "")
    .trim()

/**
 * GitHub's anchor for a heading (as github-slugger makes it): lower case, every character that is
 * not a letter, mark, digit, connector (`_`), space or hyphen dropped, each space made a hyphen.
 */
export const githubSlug = (heading: string) =>
  headingText(heading).toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /gu, "-")

/** Every anchor a Markdown text offers: its headings' slugs (repeats numbered `-1`, `-2`, as GitHub does) and explicit HTML ids. */
export const anchorsOf = (text: string): ReadonlySet<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const lines = proseLines(text)
  lines.forEach(({ line, text: content }, index) => {
    let heading: string | undefined
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/u.exec(content)
    if (atx) heading = atx[1] ?? ""
    const next = lines[index + 1]
    if (
      heading === undefined && next !== undefined && next.line === line + 1 && content.trim() !== "" &&
      /^ {0,3}(=+|-+)[ \t]*$/u.test(next.text) && !/^ {0,3}([-*+]|\d+[.)])[ \t]/u.test(content) &&
      !content.includes("|")
    ) {
      heading = content
    }
    if (heading !== undefined) {
      const slug = githubSlug(heading)
      const count = seen.get(slug) ?? 0
      seen.set(slug, count + 1)
      anchors.add(count === 0 ? slug : `${slug}-${count}`)
    }
    for (const match of content.matchAll(/<a\s[^>]*\b(?:id|name)=["']([^"']+)["']/giu)) anchors.add(match[1]!)
  })
  return anchors
}

export interface Link {
  readonly line: number
  readonly target: string
}

/** The link destinations of a Markdown text: inline links and images, and reference definitions; not in code. */
export const linksOf = (text: string): Array<Link> => {
  const links: Array<Link> = []
  for (const { line, text: content } of proseLines(text)) {
    const definition = /^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)/u.exec(content)
    if (definition) {
      links.push({ line, target: unbracket(definition[1]!) })
      continue
    }
    const withoutCode = content.replace(/(`+)[^`]*?\1/gu, (span) => " ".repeat(span.length))
    for (
      const match of withoutCode.matchAll(
        /\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/gu
      )
    ) {
      links.push({ line, target: unbracket(match[1]!) })
    }
  }
  return links
}

const unbracket = (target: string) => (target.startsWith("<") && target.endsWith(">") ? target.slice(1, -1) : target)

export interface BrokenLink {
  readonly file: string
  readonly line: number
  readonly target: string
  readonly problem: string
}

/**
 * Every relative link of every Markdown file among `files` that does not resolve: to a file or
 * folder of the repository (never outside it), and for `#anchor` into Markdown, to one of its
 * anchors. Links with a scheme (`https:`, `mailto:`) are not followed.
 */
export const brokenLinks = (files: ReadonlySet<string>, read: (path: string) => string): Array<BrokenLink> => {
  const broken: Array<BrokenLink> = []
  const anchorCache = new Map<string, ReadonlySet<string>>()
  const anchors = (path: string) => {
    let found = anchorCache.get(path)
    if (found === undefined) anchorCache.set(path, found = anchorsOf(read(path)))
    return found
  }
  const isFolder = (path: string) => path === "" || [...files].some((file) => file.startsWith(`${path}/`))

  for (const file of [...files].filter(isMarkdown).sort()) {
    for (const { line, target } of linksOf(read(file))) {
      if (target === "" || /^[a-z][a-z0-9+.-]*:/iu.test(target)) continue
      const fail = (problem: string) => broken.push({ file, line, target, problem })
      const hash = target.indexOf("#")
      const pathPart = (hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/u, "")
      const anchor = hash === -1 ? undefined : target.slice(hash + 1)
      let decoded: string
      try {
        decoded = decodeURIComponent(pathPart)
      } catch {
        fail("is not a valid URL path")
        continue
      }
      const joined = decoded === ""
        ? file
        : decoded.startsWith("/")
        ? posix.normalize(decoded.slice(1))
        : posix.normalize(posix.join(posix.dirname(file), decoded))
      const resolved = joined.replace(/\/+$/u, "").replace(/^\.$/u, "")
      if (resolved === ".." || resolved.startsWith("../")) {
        fail("points outside the repository")
        continue
      }
      if (!files.has(resolved) && !isFolder(resolved)) {
        fail(`names ${resolved === "" ? "the root" : resolved}, which is not in the repository`)
        continue
      }
      if (anchor !== undefined && anchor !== "" && files.has(resolved) && isMarkdown(resolved)) {
        let name = anchor
        try {
          name = decodeURIComponent(anchor)
        } catch {
          // Left as written: it then matches no heading, and is reported.
        }
        if (!anchors(resolved).has(name)) fail(`has no heading for #${anchor} in ${resolved}`)
      }
    }
  }
  return broken
}

/** The marker of a walkthrough block: an HTML comment starting `<!-- walkthrough`, right before a ```bash fence. */
const WALKTHROUGH_MARKER = /^<!--\s*walkthrough\b.*-->$/u

/**
 * The bash blocks marked as the walkthrough, in the order they appear. A marker not followed
 * (blank lines aside) by a ```bash fence is an error, so a marker cannot silently stop marking.
 */
export const walkthroughBlocks = (markdown: string): Array<string> => {
  const lines = markdown.split(/\r?\n/u)
  const blocks: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    if (!WALKTHROUGH_MARKER.test(lines[i]!.trim())) continue
    let j = i + 1
    while (j < lines.length && lines[j]!.trim() === "") j++
    if (!/^```bash\s*$/u.test(lines[j] ?? "")) {
      throw new Error(`line ${i + 1}: a walkthrough marker must be followed by a \`\`\`bash block`)
    }
    const body: Array<string> = []
    for (j++; j < lines.length && !/^```\s*$/u.test(lines[j]!); j++) body.push(lines[j]!)
    if (j === lines.length) throw new Error(`line ${i + 1}: the walkthrough block is not closed`)
    blocks.push(body.join("\n"))
    i = j
  }
  return blocks
}
