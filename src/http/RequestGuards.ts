/**
 * What is refused before routing, each with its contract error: an API key in the URL or from a
 * browser (SPEC §4), a body over 1 MiB, and a JSON body nested too deep or that is not text
 * (SPEC §11, `JsonText.ts`).
 */
import { ByteSize, Effect, Option } from "effect"
import { HttpIncomingMessage, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { ApiKeyInBrowser, ApiKeyInUrl, InvalidRequest, PayloadTooLarge } from "../domain/Errors.js"
import { apiKeyTokenPattern, embeddedTokenPattern, findTokensInUrl } from "../domain/Tokens.js"
import { ExposureReports } from "../telemetry/ExposureReports.js"
import { errorResponse } from "./ApiErrors.js"
import { shownAddress } from "./ClientAddress.js"
import { jsonTextProblem, MAX_JSON_DEPTH } from "./JsonText.js"

export const MAX_BODY_BYTES = 1024 * 1024

/** The most a request body may hold, for whatever reads it (the guard below, the API). */
export const maxBodySize = ByteSize.bytes(MAX_BODY_BYTES)

const tokensIn = (url: string): ReadonlyArray<string> => {
  let decoded = url
  try {
    decoded = decodeURIComponent(url)
  } catch {
    // A malformed escape cannot hide a token better than the raw text shows it.
  }
  return [
    ...new Set([...url.matchAll(embeddedTokenPattern), ...decoded.matchAll(embeddedTokenPattern)].map((m) => m[0]))
  ]
}

const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.method !== "GET" && request.method !== "HEAD" && /\bjson\b/i.test(request.headers["content-type"] ?? "")

/**
 * A JSON body's shape problems, answered before the API parses it (`JsonText.ts`). The body is read
 * here once; the request caches it, so the API reads the same bytes.
 */
const earlyJsonError = (request: HttpServerRequest.HttpServerRequest) =>
  hasJsonBody(request)
    ? request.text.pipe(
      Effect.map((text): PayloadTooLarge | InvalidRequest | null => {
        switch (jsonTextProblem(text)) {
          case "too_deep":
            return new InvalidRequest({ message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.` })
          case "lone_surrogate":
            return new InvalidRequest({
              message:
                "The JSON body contains an unpaired UTF-16 surrogate escape (\\uD800–\\uDFFF), which is not text."
            })
          case null:
            return null
        }
      }),
      Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodySize),
      // An unreadable body is the API's to report, with the rest of its validation.
      Effect.catch((error) =>
        Effect.succeed(
          error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
            ? new PayloadTooLarge()
            : null
        )
      )
    )
    : Effect.succeed(null)

/**
 * Headers only a browser sets (the Fetch standard's forbidden request headers, which page scripts
 * cannot remove). `Sec-Fetch-Mode` is not one of them: Node's own `fetch` sends it too, and a
 * backend using it must not be refused.
 */
const BROWSER_MARKS = ["origin", "sec-fetch-site", "sec-fetch-dest"] as const

/**
 * Keys stay on backends (SPEC §4): the API key of a request that carries a browser's marks, on any
 * path, public ones included. Judged by the token's shape before anything else runs, as a key in
 * the URL is: the key is exposed whether or not it is valid, so an unknown, revoked or expired key
 * gets the same 403 as an active one (a page's script learns nothing of its validity), and the
 * refused request records no use of the key and spends none of its rate limit. The exposure monitor
 * then names the key if one has that token (an unknown one is only counted); a malformed token is
 * no key, and the authentication answers it as usual.
 */
const apiKeyFromBrowser = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  if (!BROWSER_MARKS.some((name) => headers[name] !== undefined)) return undefined
  const token = /^Bearer +(\S+)$/i.exec(headers["authorization"] ?? "")?.[1]
  return token !== undefined && apiKeyTokenPattern.test(token) ? token : undefined
}

/**
 * The guards, over the exposure reports: given the request as it came and as it will be routed
 * (`target`, its `/v1` alias), the error response it is refused with, or `null` to serve it.
 */
export const requestGuards = Effect.map(ExposureReports, (exposure) =>
(
  request: HttpServerRequest.HttpServerRequest,
  target: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse | null> =>
  Effect.gen(function*() {
    const leaked = tokensIn(request.url)
    if (leaked.length > 0) {
      yield* exposure.report(
        findTokensInUrl(request.url),
        "url",
        Option.getOrUndefined(Option.map(request.remoteAddress, shownAddress))
      )
      return errorResponse(new ApiKeyInUrl())
    }
    const fromBrowser = apiKeyFromBrowser(request.headers)
    if (fromBrowser !== undefined) {
      yield* exposure.report(
        [fromBrowser],
        "browser",
        Option.getOrUndefined(Option.map(request.remoteAddress, shownAddress))
      )
      return errorResponse(new ApiKeyInBrowser())
    }
    if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) {
      return errorResponse(new PayloadTooLarge())
    }
    const early = yield* earlyJsonError(target)
    return early === null ? null : errorResponse(early)
  }))
