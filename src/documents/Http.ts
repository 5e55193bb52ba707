import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CurrentApiKey } from "../domain/Principal.js"
import type { CancelDocument, ListDocumentsParams, NewDocument } from "./Api.js"
import { DocumentService, type Issuer } from "./DocumentService.js"

/** The key decides tenant and environment; the middleware already matched the path's tenant. */
const issuer = Effect.map(CurrentApiKey, (key): Issuer => ({ tenantId: key.tenantId, environment: key.environment }))

export const DocumentsHttpLive = HttpApiBuilder.group(Api, "documents", Effect.fn(function*(handlers) {
  const documents = yield* DocumentService
  const issue = ({ headers, payload }: {
    readonly headers: { readonly "idempotency-key"?: string | undefined }
    readonly payload: NewDocument
  }) => Effect.flatMap(issuer, (by) => documents.issue(by, payload, headers["idempotency-key"]))
  const list = ({ query }: { readonly query: ListDocumentsParams }) =>
    Effect.flatMap(issuer, (by) => documents.list(by, query))
  const get = ({ params }: { readonly params: { readonly docId: string } }) =>
    Effect.flatMap(issuer, (by) => documents.get(by, params.docId))
  const cancel = ({ params, payload }: {
    readonly params: { readonly docId: string }
    readonly payload: typeof CancelDocument.Type
  }) => Effect.flatMap(issuer, (by) => documents.cancel(by, params.docId, payload))
  return handlers
    .handle("issue", issue)
    .handle("list", list)
    .handle("get", get)
    .handle("cancel", cancel)
    .handle("issueForKey", issue)
    .handle("listForKey", list)
    .handle("getForKey", get)
    .handle("cancelForKey", cancel)
}))
