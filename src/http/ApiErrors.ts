/**
 * Failures as the SPEC's error bodies, in two places:
 *
 * - `ApiErrorsLive` implements the contract's `ApiErrors`, an API middleware on every endpoint,
 *   inside the API, so its errors are encoded by the contract: it maps the framework's own
 *   failures (validation, unreadable or oversized bodies, unstorable text, defects) onto the
 *   SPEC's error bodies.
 * - `errorResponse` answers the contract errors the server middleware gives before the API runs
 *   (`RequestGuards.ts`, `Routing.ts`).
 */
import { Cause, Effect, Layer, Option, Schema, SchemaIssue } from "effect"
import { HttpEffect, HttpServerError, type HttpServerRequest, HttpServerResponse, Multipart } from "effect/http"
import { HttpApi, type HttpApiEndpoint, HttpApiError, type HttpApiGroup } from "effect/http-api"
import { Api, ApiErrors } from "../Api.js"
import { isDatabaseUnavailable, isUnstorableText } from "../db/errors.js"
import {
  ApiKeyInBrowser,
  ApiKeyInUrl,
  InternalError,
  InvalidRequest,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  ServiceUnavailable,
  statusOf
} from "../domain/Errors.js"
import { UNKNOWN_DOCUMENT_TYPE } from "../domain/GoodsDocument.js"

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const issuesOf = (error: HttpApiError.HttpApiSchemaError) => {
  const issues = formatIssues(error.cause.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => {
      const key = typeof segment === "object" ? segment.key : segment
      return typeof key === "number" ? key : String(key)
    }),
    message: issue.message
  })).map((issue) =>
    // A document of no known type matches none of the payloads: the issue is its `type`'s.
    issue.path.length === 0 && issue.message === UNKNOWN_DOCUMENT_TYPE ? { ...issue, path: ["type"] } : issue
  )
  // Schema's default messages quote the actual value ("Expected …, got …"); a secret must never be echoed back.
  return issues.map((issue) =>
    issue.path.some((segment) => typeof segment === "string" && /password|secret|pkcs12/i.test(segment)) &&
      /\b(got|actual)\b/.test(issue.message)
      ? { ...issue, message: "is not valid" }
      : issue
  )
}

/** Bounds on what a validation error reports, so an error body never grows with the input. */
const MAX_ISSUES = 20
const MAX_ISSUE_MESSAGE = 240

const clip = (text: string) => (text.length > MAX_ISSUE_MESSAGE ? `${text.slice(0, MAX_ISSUE_MESSAGE - 1)}…` : text)

const invalidRequest = (error: HttpApiError.HttpApiSchemaError) => {
  const issues = issuesOf(error)
    .slice(0, MAX_ISSUES)
    .map((issue) => ({
      path: issue.path.slice(0, 16).map((s) => (typeof s === "string" ? clip(s) : s)),
      message: clip(issue.message)
    }))
  const summary = issues.map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
  return new InvalidRequest({ message: `The request is not valid. ${summary.join("; ")}`, issues })
}

/**
 * A multipart body that could not be read: too many parts or a parse failure is the client's
 * malformed request; a part over its limit (e.g. the credential upload's file size) is a 413.
 */
const multipartError = (error: Multipart.MultipartError): PayloadTooLarge | InvalidRequest => {
  switch (error.reason._tag) {
    case "TooManyParts":
      return new InvalidRequest({ message: "The multipart/form-data body has too many parts." })
    case "Parse":
    case "InternalError":
      return new InvalidRequest({ message: "The multipart/form-data body could not be read." })
    default:
      return new PayloadTooLarge({
        message: "A part of the multipart/form-data body is larger than this endpoint accepts."
      })
  }
}

/** An unreadable body: over the size limit, or not what its content type says. */
const bodyError = (error: HttpServerError.HttpServerError): PayloadTooLarge | InvalidRequest =>
  error.reason._tag === "RequestParseError" && error.reason.reason === "BodyTooLarge"
    ? new PayloadTooLarge()
    : new InvalidRequest({ message: "The request body could not be read as JSON." })

type ApiFailure = InvalidRequest | PayloadTooLarge | ServiceUnavailable | InternalError

/**
 * Sets `Retry-After` on the response this request ends with. A pre-response handler, because the
 * response is built later, by the API (which encodes the error itself).
 */
const withRetryAfter = (seconds: number) =>
  HttpEffect.appendPreResponseHandler((_, response) =>
    Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds)))
  )

/** Seconds a client should wait before retrying while the database is out of reach. */
const DATABASE_RETRY_AFTER_SECONDS = 2

/** An outage is the client's to retry, not our bug (SPEC §2): 503 with `Retry-After`, logged as a warning. */
const databaseUnavailable = withRetryAfter(DATABASE_RETRY_AFTER_SECONDS).pipe(
  Effect.andThen(Effect.logWarning("the database is unreachable: answered 503")),
  Effect.andThen(Effect.fail(new ServiceUnavailable({ retry_after: DATABASE_RETRY_AFTER_SECONDS })))
)

/** Framework failures become the SPEC's error values; anything unknown becomes a 500 without internals. */
const toContractError = <E>(
  cause: Cause.Cause<E>,
  isDeclared: (error: unknown) => boolean
): Effect.Effect<never, E | ApiFailure, HttpServerRequest.HttpServerRequest> => {
  for (const reason of cause.reasons) {
    const value: unknown = Cause.isFailReason(reason)
      ? reason.error
      : Cause.isDieReason(reason)
      ? reason.defect
      : undefined
    if (HttpApiError.HttpApiSchemaError.is(value)) {
      if (value.kind === "Body" || value.kind === "ResponseHeaders") break
      return Effect.fail(invalidRequest(value))
    }
    if (HttpApiError.HttpApiPayloadTooLarge.is(value)) return Effect.fail(new PayloadTooLarge())
    if (HttpServerError.isHttpServerError(value)) return Effect.fail(bodyError(value))
    if (Multipart.isMultipartError(value)) return Effect.fail(multipartError(value))
    if (isDatabaseUnavailable(value)) return databaseUnavailable
    if (isUnstorableText(value)) {
      return Effect.fail(
        new InvalidRequest({ message: "The request contains text that cannot be stored (a NUL character)." })
      )
    }
  }
  const failure = Cause.findErrorOption(cause)
  const undeclared = Option.isSome(failure) && !isDeclared(failure.value)
  if (undeclared || Cause.hasDies(cause) || (!Cause.hasFails(cause) && !Cause.hasInterruptsOnly(cause))) {
    return Effect.andThen(Effect.logError("unexpected failure", cause), Effect.fail(new InternalError()))
  }
  // Contract errors declared on the endpoint pass through unchanged; the API encodes them. A 503 or
  // a 429 names its wait in the body and, as SPEC §2 wants, in `Retry-After` (e.g. the tax authority
  // away, or a limit that is no bucket, such as one certificate opening at a time).
  if (
    Option.isSome(failure) && (failure.value instanceof ServiceUnavailable || failure.value instanceof RateLimited)
  ) {
    return withRetryAfter(failure.value.retry_after).pipe(Effect.andThen(Effect.failCause(cause)))
  }
  return Effect.failCause(cause)
}

const endpointKey = (group: HttpApiGroup.Top, endpoint: HttpApiEndpoint.Top) =>
  `${group.identifier}.${endpoint.identifier}`

/**
 * For each endpoint of the API, whether a failure is one of the errors its contract declares (its
 * own and its middlewares'). An undeclared one cannot be encoded, and the framework would answer an
 * empty 500 without logging it.
 */
const declaredErrors = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) => {
  const table = new Map<string, (error: unknown) => boolean>()
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, errors, group }) => {
      const guards = [...errors.values()].flat().map((schema) => Schema.is(schema))
      table.set(endpointKey(group, endpoint), (error) => guards.some((is) => is(error)))
    }
  })
  return table
}

const declaresNothing = () => false

/**
 * The framework answers a body of a content type the endpoint does not accept with a plain-text
 * 415 of its own; the contract's answer is a 400 `invalid_request` naming what the endpoint takes.
 */
const unsupportedContentType = (endpoint: HttpApiEndpoint.Top) => (response: HttpServerResponse.HttpServerResponse) =>
  response.status === 415
    ? Effect.fail(
      new InvalidRequest({ message: `Send the request body as ${[...endpoint.payload.keys()].join(" or ")}.` })
    )
    : Effect.succeed(response)

/** The `ApiErrors` middleware of an API, its error table read from the API's contract when the layer is built. */
export const apiErrorsLayer = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) =>
  Layer.sync(ApiErrors, () => {
    const declared = declaredErrors(api)
    return (httpEffect, { endpoint, group }) =>
      httpEffect.pipe(
        Effect.flatMap(unsupportedContentType(endpoint)),
        // An endpoint of another API declares nothing known here: its failures are logged 500s.
        Effect.catchCause((cause) =>
          toContractError(cause, declared.get(endpointKey(group, endpoint)) ?? declaresNothing)
        )
      )
  })

export const ApiErrorsLive = apiErrorsLayer(Api)

/** The contract errors answered before the API runs (a token in the URL or from a browser, no route, oversized body). */
type EarlyError = ApiKeyInUrl | ApiKeyInBrowser | NotFound | MethodNotAllowed | PayloadTooLarge | InvalidRequest

const encodeEarlyError = Schema.encodeSync(
  Schema.Union([ApiKeyInUrl, ApiKeyInBrowser, NotFound, MethodNotAllowed, PayloadTooLarge, InvalidRequest])
)

/** The response of an error answered before the API runs: the body and status the contract gives it. */
export const errorResponse = (error: EarlyError) =>
  HttpServerResponse.jsonUnsafe(encodeEarlyError(error), { status: statusOf(error) })
