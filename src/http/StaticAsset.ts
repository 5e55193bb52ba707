/**
 * Files the service serves to browsers (the dashboard, the API reference page): each with an ETag,
 * sent compressed when the browser accepts it, and with the same security headers, the
 * Content-Security-Policy being the page's own.
 */
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash } from "node:crypto"
import { promisify } from "node:util"
import { brotliCompress, constants, gzip } from "node:zlib"

export interface StaticAsset {
  readonly contentType: string
  /** The content's hash: each coding's ETag is made of it (`etagOf`). */
  readonly etag: string
  readonly identity: Uint8Array
  readonly br: Uint8Array | undefined
  readonly gzip: Uint8Array | undefined
}

/** A content hash short enough for a file name or an ETag. */
export const contentHash = (bytes: Uint8Array | string) =>
  createHash("sha256").update(bytes).digest("base64url").slice(0, 22)

export const staticAsset = (
  contentType: string,
  identity: Uint8Array,
  compressed: { readonly br: Uint8Array | undefined; readonly gzip: Uint8Array | undefined }
): StaticAsset => ({ contentType, etag: contentHash(identity), identity, ...compressed })

/**
 * A strong ETag names one representation (RFC 9110 §8.8.3): the brotli and gzip bodies of a file
 * are other bytes than the plain one, so each coding has its own tag.
 */
const etagOf = (asset: StaticAsset, coding: "br" | "gzip" | undefined) =>
  coding === undefined ? `"${asset.etag}"` : `"${asset.etag}-${coding}"`

/**
 * `If-None-Match` against the tag about to be sent: a list of tags, or `*`; compared weakly, as
 * RFC 9110 §13.1.2 says for this header, so a proxy that marked a tag weak (`W/"…"`) still gets a 304.
 */
const matchesNoneOf = (header: string | undefined, etag: string) =>
  header !== undefined &&
  header.split(",").some((tag) => {
    const trimmed = tag.trim()
    return trimmed === "*" || trimmed.replace(/^W\//, "") === etag
  })

const brotli = promisify(brotliCompress)
const gzipped = promisify(gzip)

/**
 * Compresses on libuv's thread pool, so the event loop keeps serving meanwhile. Brotli quality 9:
 * on Scalar's 3.2 MB bundle, 11 saves a tenth more (700 kB against 770 kB) but takes about ten
 * times as long (35 s against 4 s here), and the first visitor of the page waits for it.
 */
export const compressedAsset = async (contentType: string, identity: Uint8Array): Promise<StaticAsset> => {
  const [br, gz] = await Promise.all([
    brotli(identity, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: 9,
        [constants.BROTLI_PARAM_SIZE_HINT]: identity.byteLength
      }
    }),
    gzipped(identity, { level: 9 })
  ])
  return staticAsset(contentType, identity, { br, gzip: gz })
}

/** The headers of every page the service serves to a browser, but its Content-Security-Policy. */
const BROWSER_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=()"
}

/** Whether `Accept-Encoding` takes the coding (listed, and not with `q=0`). */
const accepts = (header: string | undefined, coding: string) =>
  (header ?? "").split(",").some((part) => {
    const [name, ...parameters] = part.split(";").map((piece) => piece.trim().toLowerCase())
    const quality = parameters.find((parameter) => parameter.startsWith("q="))
    return name === coding && (quality === undefined || Number(quality.slice(2)) > 0)
  })

export const sendAsset = (
  asset: StaticAsset,
  request: HttpServerRequest.HttpServerRequest,
  policy: { readonly cacheControl: string; readonly contentSecurityPolicy: string }
) => {
  const encoding = request.headers["accept-encoding"]
  const [body, coding] = asset.br !== undefined && accepts(encoding, "br")
    ? [asset.br, "br" as const]
    : asset.gzip !== undefined && accepts(encoding, "gzip")
    ? [asset.gzip, "gzip" as const]
    : [asset.identity, undefined]
  const etag = etagOf(asset, coding)
  const headers = {
    ...BROWSER_HEADERS,
    "content-security-policy": policy.contentSecurityPolicy,
    "cache-control": policy.cacheControl,
    etag,
    vary: "accept-encoding"
  }
  if (matchesNoneOf(request.headers["if-none-match"], etag)) return HttpServerResponse.empty({ status: 304, headers })
  return HttpServerResponse.uint8Array(body, {
    contentType: asset.contentType,
    headers: coding === undefined ? headers : { ...headers, "content-encoding": coding }
  })
}
