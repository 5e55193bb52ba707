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
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { extname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { sendAsset, type StaticAsset, staticAsset } from "../http/StaticAsset.js"

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

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json"
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
const readFiles = (root: string): ReadonlyMap<string, StaticAsset> => {
  const files = new Map<string, StaticAsset>()
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`)
      else if (CONTENT_TYPES[extname(entry.name)] !== undefined) {
        const identity = readFileSync(path)
        files.set(
          `${prefix}${entry.name}`,
          staticAsset(CONTENT_TYPES[extname(entry.name)]!, identity, {
            br: readOptional(`${path}.br`),
            gzip: readOptional(`${path}.gz`)
          })
        )
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
        return file === undefined
          ? notFound
          : sendAsset(file, request, { cacheControl, contentSecurityPolicy: DASHBOARD_CSP })
      })
    yield* router.add("GET", "/", serve(() => "/index.html", "no-cache"))
    yield* router.add(
      "GET",
      "/assets/*",
      serve((request) => new URL(request.url, "http://dashboard").pathname, "public, max-age=31536000, immutable")
    )
  })
)
