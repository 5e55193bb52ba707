/**
 * The web dashboard's files (SPEC §15), built by Vite into dist/dashboard (scripts/build-dashboard.mjs)
 * and served at `/` beside the API. `index.html` is revalidated on every visit (`no-cache` with an
 * ETag), so a new release is seen at once; everything under `/assets/` is named by its content and
 * cached for a year. The files are read on the first request (a service nobody opens the dashboard
 * of never reads them) and sent compressed as the build wrote them when the browser accepts it.
 *
 * The Content-Security-Policy allows nothing but this origin's own scripts, styles, images and API
 * calls: no inline code, no external request, no framing.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { extname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

const SECURITY_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()"
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json"
}

interface StaticFile {
  readonly contentType: string
  readonly etag: string
  readonly identity: Uint8Array
  readonly br: Uint8Array | undefined
  readonly gzip: Uint8Array | undefined
}

/**
 * Where the build put the files: beside the bundle when the service runs from dist/ (`npm start`),
 * or in dist/ at the project's root when it runs from the sources (`npm run dev`, the tests).
 */
const dashboardDirectory = (): string | undefined =>
  [new URL("./dashboard/", import.meta.url), new URL("../../dist/dashboard/", import.meta.url)]
    .map((url) => fileURLToPath(url))
    .find((dir) => existsSync(join(dir, "index.html")))

const readOptional = (path: string) => (existsSync(path) ? readFileSync(path) : undefined)

/** Every file the build wrote, keyed by its URL path (`/index.html`, `/assets/index-….js`). */
const readFiles = (root: string): ReadonlyMap<string, StaticFile> => {
  const files = new Map<string, StaticFile>()
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`)
      else if (CONTENT_TYPES[extname(entry.name)] !== undefined) {
        const identity = readFileSync(path)
        files.set(`${prefix}${entry.name}`, {
          contentType: CONTENT_TYPES[extname(entry.name)]!,
          etag: `"${createHash("sha256").update(identity).digest("base64url").slice(0, 22)}"`,
          identity,
          br: readOptional(`${path}.br`),
          gzip: readOptional(`${path}.gz`)
        })
      }
    }
  }
  walk(root, "/")
  return files
}

const notBuilt = HttpServerResponse.text(
  JSON.stringify({ code: "not_found", message: "The dashboard is not built here: run `npm run build`." }),
  { status: 404, contentType: "application/json" }
)

const notFound = HttpServerResponse.text(
  JSON.stringify({ code: "not_found", message: "No such file." }),
  { status: 404, contentType: "application/json" }
)

/** Whether `Accept-Encoding` takes the coding (listed, and not with `q=0`). */
const accepts = (header: string | undefined, coding: string) =>
  (header ?? "").split(",").some((part) => {
    const [name, ...parameters] = part.split(";").map((piece) => piece.trim().toLowerCase())
    const quality = parameters.find((parameter) => parameter.startsWith("q="))
    return name === coding && (quality === undefined || Number(quality.slice(2)) > 0)
  })

const send = (file: StaticFile, request: HttpServerRequest.HttpServerRequest, cacheControl: string) => {
  const headers = { ...SECURITY_HEADERS, "cache-control": cacheControl, etag: file.etag, vary: "accept-encoding" }
  if (request.headers["if-none-match"] === file.etag) return HttpServerResponse.empty({ status: 304, headers })
  const encoding = request.headers["accept-encoding"]
  const [body, coding] = file.br !== undefined && accepts(encoding, "br")
    ? [file.br, "br"]
    : file.gzip !== undefined && accepts(encoding, "gzip")
    ? [file.gzip, "gzip"]
    : [file.identity, undefined]
  return HttpServerResponse.uint8Array(body, {
    contentType: file.contentType,
    headers: coding === undefined ? headers : { ...headers, "content-encoding": coding }
  })
}

export const DashboardFilesLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const catalogue = yield* Effect.cached(Effect.sync(() => {
      const root = dashboardDirectory()
      return root === undefined ? undefined : readFiles(root)
    }))
    const serve = (pathOf: (request: HttpServerRequest.HttpServerRequest) => string, cacheControl: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const files = yield* catalogue
        if (files === undefined) return notBuilt
        const file = files.get(pathOf(request))
        return file === undefined ? notFound : send(file, request, cacheControl)
      })
    yield* router.add("GET", "/", serve(() => "/index.html", "no-cache"))
    yield* router.add(
      "GET",
      "/assets/*",
      serve((request) => new URL(request.url, "http://dashboard").pathname, "public, max-age=31536000, immutable")
    )
  })
)
