/**
 * The API reference page (Scalar, served by this service so the page makes no request outside
 * it). Scalar's bundle is ~3 MB of JavaScript: the page loads it as a file named by its content
 * (cached for a year, sent compressed), beside a small script of ours that holds the document
 * and starts Scalar, so the Content-Security-Policy admits no inline script at all.
 *
 * API keys stay on servers (SPEC §4): the service answers a key sent from a browser with
 * `403 api_key_in_browser` and treats it as exposed, so this page must never send one. Its
 * script refuses, before anything leaves the browser, every request that carries a key, and the
 * page's document says so at the top; the page's "try" client is meant for a member's session.
 *
 * Everything is built on the first request for the page and kept: the bundle takes ~9 MiB of heap
 * once loaded, and an instance that never serves the page (most behind a load balancer) carries
 * none of it.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { type HttpApi, type HttpApiGroup, HttpApiScalar, OpenApi } from "effect/http-api"
import { referenceDocument } from "./ReferenceDocument.js"
import { compressedAsset, contentHash, sendAsset, type StaticAsset } from "./StaticAsset.js"

/**
 * Scalar adds its own styles at run time (a `<style>` element it fills from its bundle, and
 * inline `style` attributes), so styles need `'unsafe-inline'`; scripts come from this origin only.
 * Images include `data:` for the icons Scalar inlines; requests go to this origin only, which is
 * also where the page's "try" client sends them.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/** Matches an API key's prefix anywhere (SPEC §3): what the page's script never lets out. */
const API_KEY_SOURCE = "etd_(?:live|test)_"

/**
 * Runs before Scalar's bundle, so every request Scalar makes goes through it: a request whose URL,
 * headers or text body carry an API key fails in the browser with an explanation, and is never sent.
 */
const KEY_GUARD = `"use strict";
(() => {
  const apiKey = new RegExp(${JSON.stringify(API_KEY_SOURCE)}, "i");
  const refusal = "This page never sends an API key: keys are for your servers, and the service treats a key " +
    "sent from a browser as exposed. Try the endpoint with a session token (etd_sess_…) from POST /v1/auth/login, " +
    "or copy the curl example and run it from a server.";
  const textOf = (body) =>
    typeof body === "string" ? body
    : body instanceof URLSearchParams ? body.toString()
    : body instanceof FormData ? [...body.values()].filter((value) => typeof value === "string").join("\\n")
    : "";
  const carriesKey = (url, headers, body) =>
    apiKey.test(String(url)) || [...new Headers(headers).values()].some((value) => apiKey.test(value)) ||
    apiKey.test(textOf(body));
  const send = window.fetch.bind(window);
  window.fetch = (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = request ? request.url : input;
    const headers = init.headers ?? request?.headers;
    return carriesKey(url, headers, init.body) ? Promise.reject(new TypeError(refusal)) : send(input, init);
  };
  const { open, setRequestHeader, send: sendXhr } = XMLHttpRequest.prototype;
  XMLHttpRequest.prototype.open = function(method, url, ...rest) {
    if (carriesKey(url, undefined, undefined)) throw new TypeError(refusal);
    return open.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.setRequestHeader = function(name, value) {
    if (apiKey.test(String(value))) throw new TypeError(refusal);
    return setRequestHeader.call(this, name, value);
  };
  XMLHttpRequest.prototype.send = function(body) {
    if (apiKey.test(textOf(body))) throw new TypeError(refusal);
    return sendXhr.call(this, body);
  };
})();
`

/** Scalar's options (`HttpApiScalar.ScalarConfig`, and what Scalar 1.43 reads besides). */
const SCALAR_OPTIONS = {
  _integration: "html",
  withDefaultFonts: false,
  // The "try" client starts on the session scheme; auth typed there is never written to storage.
  authentication: { preferredSecurityScheme: "session" },
  persistAuth: false,
  // Its toolbar offers to share the document through Scalar's servers.
  showDeveloperTools: "never"
}

const startScript = (document: unknown) =>
  `${KEY_GUARD}
document.addEventListener("DOMContentLoaded", () => {
  window.Scalar.createApiReference(document.getElementById("api-reference-container"), {
    ...${JSON.stringify(SCALAR_OPTIONS)},
    content: ${JSON.stringify(document)}
  });
});
`

/** Scalar's bundle as Effect embeds it: the first inline script of the page its own layer renders. */
const scalarBundle = async <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  path: `/${string}`
): Promise<string> => {
  const scalar = HttpApiScalar.layer(api, { path })
  const { dispose, handler } = HttpRouter.toWebHandler(scalar, { disableLogger: true })
  try {
    const html = await (await handler(new Request(`http://reference.invalid${path}`))).text()
    const bundle = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1]
    if (bundle === undefined || !bundle.includes("createApiReference")) {
      throw new Error("ReferencePage: Scalar's bundle was not found in the page HttpApiScalar renders")
    }
    return bundle
  } finally {
    await dispose()
  }
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

interface ReferenceFiles {
  readonly page: StaticAsset
  readonly assets: ReadonlyMap<string, StaticAsset>
}

const JAVASCRIPT = "text/javascript; charset=utf-8"

const buildFiles = async <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  path: `/${string}`
): Promise<ReferenceFiles> => {
  const spec = OpenApi.fromApi(api)
  const encoder = new TextEncoder()
  const bundle = encoder.encode(await scalarBundle(api, path))
  const start = encoder.encode(startScript(referenceDocument(spec)))
  const bundleName = `scalar.${contentHash(bundle)}.js`
  const startName = `reference.${contentHash(start)}.js`
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(spec.info.title)}</title>
    <meta name="description" content="${escapeHtml(spec.info.description ?? spec.info.title)}" />
  </head>
  <body>
    <div id="api-reference-container"></div>
    <script src="${path}/assets/${startName}"></script>
    <script src="${path}/assets/${bundleName}"></script>
  </body>
</html>
`
  const [page, bundleAsset, startAsset] = await Promise.all([
    compressedAsset("text/html; charset=utf-8", encoder.encode(html)),
    compressedAsset(JAVASCRIPT, bundle),
    compressedAsset(JAVASCRIPT, start)
  ])
  return { page, assets: new Map([[bundleName, bundleAsset], [startName, startAsset]]) }
}

const notFound = HttpServerResponse.text(
  JSON.stringify({ code: "not_found", message: "No such file." }),
  { status: 404, contentType: "application/json" }
)

export const referencePageLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  path: `/${string}`
) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      // Built on the first request and kept; a failed build is not kept, so the next request tries again.
      let built: Promise<ReferenceFiles> | undefined
      const files = Effect.promise(() =>
        built ??= buildFiles(api, path).catch((error: unknown) => {
          built = undefined
          throw error
        })
      )
      const policy = { contentSecurityPolicy: REFERENCE_CSP }
      yield* router.add(
        "GET",
        path,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          return sendAsset((yield* files).page, request, { ...policy, cacheControl: "no-cache" })
        })
      )
      yield* router.add(
        "GET",
        `${path}/assets/*`,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const name = new URL(request.url, "http://reference").pathname.slice(`${path}/assets/`.length)
          const asset = (yield* files).assets.get(name)
          return asset === undefined
            ? notFound
            : sendAsset(asset, request, { ...policy, cacheControl: "public, max-age=31536000, immutable" })
        })
      )
    })
  )
