/**
 * A header on the response this request ends with, success or error. Set by a pre-response
 * handler because the response is built later, by the API (which encodes errors itself).
 */
import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"

export const withResponseHeader = (name: string, value: string) =>
  HttpEffect.appendPreResponseHandler((_, response) => Effect.succeed(HttpServerResponse.setHeader(response, name, value)))
