/**
 * The substitution group's handlers: thin, over `DocumentService.substitute` (the key decides the
 * tenant and environment, as for issuing).
 */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { DocumentService } from "../documents/DocumentService.js"
import { docId, issuer, markReplayed } from "../documents/Http.js"
import type { SubstituteDocument } from "./Api.js"

export const SubstitutionHttpLive = HttpApiBuilder.group(
  Api,
  "substitution",
  Effect.fn(function*(handlers) {
    const documents = yield* DocumentService
    const substitute = ({ headers, params, payload }: {
      readonly headers: { readonly "idempotency-key"?: string | undefined }
      readonly params: { readonly docId: string }
      readonly payload: SubstituteDocument
    }) =>
      Effect.flatMap(
        Effect.zip(issuer, markReplayed),
        ([by, onReplay]) => documents.substitute(by, docId(params), payload, headers["idempotency-key"], onReplay)
      )
    return handlers.handle("substitute", substitute).handle("substituteForKey", substitute)
  })
)
