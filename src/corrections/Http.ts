/** The correction letters' handlers: thin, over `CorrectionService` (the key or the path decides the tenant). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CorrectionService } from "../documents/Corrections.js"
import { docId, issuer } from "../documents/Http.js"
import type { Correction } from "../domain/Correction.js"
import { reachOf } from "../domain/Principal.js"

/** The letters as one page: an NF-e has at most 20 registered ones. */
const page = (data: ReadonlyArray<Correction>) => ({ data, has_more: false, next_cursor: null })

export const CorrectionsHttpLive = HttpApiBuilder.group(
  Api,
  "corrections",
  Effect.fn(function*(handlers) {
    const corrections = yield* CorrectionService
    return handlers
      .handle(
        "correct",
        ({ params, payload }) =>
          Effect.flatMap(reachOf(params), (by) => corrections.correct(by, docId(params), payload))
      )
      .handle(
        "list",
        ({ params }) => Effect.map(Effect.flatMap(reachOf(params), (by) => corrections.list(by, docId(params))), page)
      )
      .handle(
        "correctForKey",
        ({ params, payload }) => Effect.flatMap(issuer, (by) => corrections.correct(by, docId(params), payload))
      )
      .handle(
        "listForKey",
        ({ params }) => Effect.map(Effect.flatMap(issuer, (by) => corrections.list(by, docId(params))), page)
      )
  })
)
