/**
 * How the service serves the dashboard's files (SPEC §15): the page at `/` under a strict
 * Content-Security-Policy, revalidated on every visit; the hashed files under `/assets/` cached
 * for a year and sent compressed when the browser accepts it; nothing else of the disk reachable.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { makeTestApp } from "../support/TestApp.js"

const request = (method: "GET" | "HEAD" | "POST" | "OPTIONS", url: string, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(
      HttpClientRequest.make(method)(url).pipe(HttpClientRequest.setHeaders(headers))
    )
    return { status: response.status, headers: response.headers, body: new Uint8Array(yield* response.arrayBuffer) }
  }).pipe(Effect.scoped)

const text = (body: Uint8Array) => new TextDecoder().decode(body)

// The files do not depend on the database: the embedded one is enough.
layer(makeTestApp("embedded"), { timeout: 60_000, excludeTestServices: true })("dashboard files", (it) => {
  it.effect("/ is the page, under a CSP that allows only this origin's files and no inline code", () =>
    Effect.gen(function*() {
      const page = yield* request("GET", "/")
      expect(page.status, "dist/dashboard is built by `npm run build` (npm install runs it)").toBe(200)
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(page.headers["cache-control"]).toBe("no-cache")
      const csp = page.headers["content-security-policy"]!
      expect(csp).toContain("default-src 'none'")
      expect(csp).toContain("script-src 'self'")
      expect(csp).toContain("style-src 'self'")
      expect(csp).toContain("connect-src 'self'")
      expect(csp).toContain("frame-ancestors 'none'")
      expect(csp).not.toContain("unsafe")
      expect(page.headers["x-content-type-options"]).toBe("nosniff")
      expect(page.headers["referrer-policy"]).toBe("no-referrer")
      const html = text(page.body)
      // Every script is a file of this origin, and nothing is styled inline.
      expect(html).not.toMatch(/<script(?![^>]*\bsrc="\/assets\/)[^>]*>/)
      expect(html).not.toMatch(/\sstyle=/)
      expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//)
    }))

  it.effect("the page is revalidated by its ETag: an unchanged page is 304 without a body", () =>
    Effect.gen(function*() {
      const first = yield* request("GET", "/")
      const etag = first.headers["etag"]!
      expect(etag).toMatch(/^"[\w-]+"$/)
      const again = yield* request("GET", "/", { "if-none-match": etag })
      expect(again.status).toBe(304)
      expect(again.body.length).toBe(0)
      expect(again.headers["content-security-policy"]).toBeDefined()
      expect((yield* request("GET", "/", { "if-none-match": `"stale"` })).status).toBe(200)
      // A list holding the tag, or the tag marked weak by a proxy, is the same page.
      expect((yield* request("GET", "/", { "if-none-match": `"stale", ${etag}` })).status).toBe(304)
      expect((yield* request("GET", "/", { "if-none-match": `W/${etag}` })).status).toBe(304)
      expect((yield* request("GET", "/", { "if-none-match": "*" })).status).toBe(304)
    }))

  it.effect("each coding of a file has its own ETag, and a tag revalidates only its own coding", () =>
    Effect.gen(function*() {
      const tagOf = (encoding: string) =>
        Effect.map(request("GET", "/", { "accept-encoding": encoding }), (response) => ({
          etag: response.headers["etag"]!,
          coding: response.headers["content-encoding"]
        }))
      const plain = yield* tagOf("identity")
      const br = yield* tagOf("br")
      const gzip = yield* tagOf("gzip")
      expect([plain.coding, br.coding, gzip.coding]).toEqual([undefined, "br", "gzip"])
      expect(new Set([plain.etag, br.etag, gzip.etag]).size).toBe(3)
      const revalidated = yield* request("GET", "/", { "accept-encoding": "br", "if-none-match": br.etag })
      expect(revalidated.status).toBe(304)
      expect(revalidated.headers["etag"]).toBe(br.etag)
      // The plain page's tag does not stand for its brotli body.
      expect((yield* request("GET", "/", { "accept-encoding": "br", "if-none-match": plain.etag })).status).toBe(200)
    }))

  it.effect("the files the page names are cached for a year, typed, and sent compressed when accepted", () =>
    Effect.gen(function*() {
      const html = text((yield* request("GET", "/")).body)
      const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!)
      expect(assets.some((path) => /\/assets\/index-[\w-]+\.js$/.test(path))).toBe(true)
      expect(assets.some((path) => /\.css$/.test(path))).toBe(true)
      for (const path of assets) {
        const plain = yield* request("GET", path, { "accept-encoding": "identity" })
        expect(plain.status, path).toBe(200)
        expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable")
        expect(plain.headers["content-encoding"]).toBeUndefined()
        const type = plain.headers["content-type"]!
        if (path.endsWith(".js")) expect(type).toBe("text/javascript; charset=utf-8")
        if (path.endsWith(".css")) expect(type).toBe("text/css; charset=utf-8")
        for (const coding of ["br", "gzip"]) {
          // The client decompresses what it asked for; the header says what travelled.
          const compressed = yield* request("GET", path, { "accept-encoding": coding })
          expect(compressed.headers["content-encoding"], `${path} ${coding}`).toBe(coding)
          expect(compressed.headers["vary"]).toBe("accept-encoding")
          expect(compressed.body).toEqual(plain.body)
        }
        // `q=0` refuses a coding.
        const refused = yield* request("GET", path, { "accept-encoding": "br;q=0, gzip;q=0" })
        expect(refused.headers["content-encoding"]).toBeUndefined()
      }
    }))

  it.effect("HEAD answers like GET without a body; other methods are 405 with Allow", () =>
    Effect.gen(function*() {
      const head = yield* request("HEAD", "/")
      expect(head.status).toBe(200)
      expect(head.body.length).toBe(0)
      const post = yield* request("POST", "/")
      expect(post.status).toBe(405)
      expect(post.headers["allow"]).toBe("GET, HEAD, OPTIONS")
      expect((yield* request("OPTIONS", "/assets/anything.js")).status).toBe(204)
    }))

  it.effect("only the built files are served: unknown names and paths out of the folder are 404", () =>
    Effect.gen(function*() {
      for (
        const path of [
          "/assets/missing.js",
          "/assets/",
          "/assets/%2e%2e/index.html",
          "/assets/..%2f..%2fpackage.json",
          "/assets/index.html.br"
        ]
      ) {
        const response = yield* request("GET", path)
        expect(response.status, path).toBe(404)
        expect(JSON.parse(text(response.body)).code).toBe("not_found")
      }
      // The unprefixed API aliases are untouched: `/documents` is still `/v1/documents`.
      const alias = yield* request("GET", "/documents")
      expect(alias.status).toBe(401)
    }))
})
