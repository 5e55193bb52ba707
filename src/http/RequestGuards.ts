/**
 * What is refused before routing, each with its contract error: an API key in the URL or from a
 * browser (SPEC §4), a body over 1 MiB, and a JSON body nested too deep or that is not text
 * (SPEC §11, `JsonText.ts`).
 *
 * Every request passes these checks, so they are one synchronous pass over what the request
 * already holds (`refusalOf`); only a refusal, and a JSON body's shape, need effects.
 */
import { ByteSize, Effect, Layer, Option } from "effect"
import { HttpIncomingMessage, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { ApiKeyInBrowser, ApiKeyInUrl, InvalidRequest, PayloadTooLarge } from "../domain/Errors.js"
import { apiKeyTokenPattern, findTokensInUrl, percentDecoded } from "../domain/Tokens.js"
import { ExposureReports, type ExposureSource } from "../telemetry/ExposureReports.js"
import { errorResponse } from "./ApiErrors.js"
import { shownAddress } from "./ClientAddress.js"
import { jsonTextProblem, MAX_JSON_DEPTH } from "./JsonText.js"

export const MAX_BODY_BYTES = 1024 * 1024

/** The most a request body may hold, for whatever reads it (the guard below, the API). */
export const maxBodySize = ByteSize.bytes(MAX_BODY_BYTES)

/**
 * The limit for every request the server serves, set once in the server's context rather than per
 * request: the API's body decoding and the JSON check below read it from there.
 */
export const MaxBodySizeLive = Layer.succeed(HttpIncomingMessage.MaxBodySize, maxBodySize)

/** Anything shaped like a bearer token (`embeddedTokenPattern` without the global flag, so `test` keeps no state). */
const EMBEDDED_TOKEN = /etd_(?:live|test|sess)_[a-z2-7]{32}/

const holdsToken = (text: string) => text.includes("etd_") && EMBEDDED_TOKEN.test(text)

/** Whether a URL carries a token, as sent or percent-decoded (an encoded token is a token all the same). */
const urlHoldsToken = (url: string): boolean => {
  if (holdsToken(url)) return true
  const decoded = percentDecoded(url)
  return decoded !== url && holdsToken(decoded)
}

/**
 * Keys stay on backends (SPEC §4): the API key of a request that carries a browser's marks, on any
 * path, public ones included. Judged by the token's shape before anything else runs, as a key in
 * the URL is: the key is exposed whether or not it is valid, so an unknown, revoked or expired key
 * gets the same 403 as an active one (a page's script learns nothing of its validity), and the
 * refused request records no use of the key and spends none of its rate limit. The exposure monitor
 * then names the key if one has that token (an unknown one is only counted); a malformed token is
 * no key, and the authentication answers it as usual.
 *
 * The marks are headers only a browser sets (the Fetch standard's forbidden request headers, which
 * page scripts cannot remove). `Sec-Fetch-Mode` is not one of them: Node's own `fetch` sends it
 * too, and a backend using it must not be refused.
 */
const apiKeyFromBrowser = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (
    headers["origin"] === undefined && headers["sec-fetch-site"] === undefined &&
    headers["sec-fetch-dest"] === undefined
  ) {
    return undefined
  }
  const token = /^Bearer +(\S+)$/i.exec(headers["authorization"] ?? "")?.[1]
  return token !== undefined && apiKeyTokenPattern.test(token) ? token : undefined
}

/** Why a request is refused before routing; an exposed key is reported before the answer. */
export interface Refusal {
  readonly error: ApiKeyInUrl | ApiKeyInBrowser | PayloadTooLarge
  readonly exposed?: { readonly source: ExposureSource; readonly tokens: ReadonlyArray<string> }
}

/**
 * The checks every request passes, in the order they answer: a token in the URL, an API key from
 * a browser, a declared length over the limit. `null` when none refuses the request.
 */
export const refusalOf = (request: HttpServerRequest.HttpServerRequest): Refusal | null => {
  if (urlHoldsToken(request.url)) {
    return { error: new ApiKeyInUrl(), exposed: { source: "url", tokens: findTokensInUrl(request.url) } }
  }
  const headers = request.headers
  const fromBrowser = apiKeyFromBrowser(headers)
  if (fromBrowser !== undefined) {
    return { error: new ApiKeyInBrowser(), exposed: { source: "browser", tokens: [fromBrowser] } }
  }
  const length = headers["content-length"]
  if (length !== undefined && Number(length) > MAX_BODY_BYTES) return { error: new PayloadTooLarge() }
  return null
}

/** Whether the request's body is JSON, whose shape is checked before the API parses it. */
export const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.method !== "GET" && request.method !== "HEAD" && /\bjson\b/i.test(request.headers["content-type"] ?? "")

/**
 * A JSON body's shape problems, answered before the API parses it (`JsonText.ts`). The body is read
 * here once; the request caches it, so the API reads the same bytes.
 */
const earlyJsonError = (request: HttpServerRequest.HttpServerRequest) =>
  request.text.pipe(
    Effect.map((text): PayloadTooLarge | InvalidRequest | null => {
      switch (jsonTextProblem(text)) {
        case "too_deep":
          return new InvalidRequest({ message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.` })
        case "lone_surrogate":
          return new InvalidRequest({
            message: "The JSON body contains an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF), which is not text."
          })
        case null:
          return null
      }
    }),
    // An unreadable body is the API's to report, with the rest of its validation.
    Effect.catch((error) =>
      Effect.succeed(
        error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
          ? new PayloadTooLarge()
          : null
      )
    )
  )

/**
 * The guards' effects, over the exposure reports: `refuse` reports what a refusal exposed and
 * answers it; `checkJsonBody` runs `serve` unless the body (of the request as it will be routed)
 * is refused.
 */
export const requestGuards = Effect.map(ExposureReports, (exposure) => ({
  refuse: (
    request: HttpServerRequest.HttpServerRequest,
    refusal: Refusal
  ): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
    const answer = errorResponse(refusal.error)
    if (refusal.exposed === undefined) return Effect.succeed(answer)
    const client = request.remoteAddress
    return Effect.as(
      exposure.report(
        refusal.exposed.tokens,
        refusal.exposed.source,
        Option.isSome(client) ? shownAddress(client.value) : undefined
      ),
      answer
    )
  },
  checkJsonBody: <E, R>(
    target: HttpServerRequest.HttpServerRequest,
    serve: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
    Effect.flatMap(earlyJsonError(target), (early) => (early === null ? serve : Effect.succeed(errorResponse(early))))
}))
