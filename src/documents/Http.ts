import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CurrentApiKey } from "../domain/Principal.js"
import { DocumentService, type Issuer } from "./DocumentService.js"

/** The key decides tenant and environment; the middleware already matched the path's tenant. */
const issuer = Effect.map(CurrentApiKey, (key): Issuer => ({ tenantId: key.tenantId, environment: key.environment }))

export const DocumentsHttpLive = HttpApiBuilder.group(Api, "documents", (handlers) =>
  Effect.gen(function*() {
    const documents = yield* DocumentService
    const issue = ({ headers, payload }: { headers: { "idempotency-key"?: string | undefined }; payload: Parameters<typeof documents.issue>[1] }) =>
      Effect.flatMap(issuer, (by) => documents.issue(by, payload, headers["idempotency-key"]))
    const list = ({ urlParams }: { urlParams: Parameters<typeof documents.list>[1] }) =>
      Effect.flatMap(issuer, (by) => documents.list(by, urlParams))
    const get = ({ path }: { path: { docId: string } }) => Effect.flatMap(issuer, (by) => documents.get(by, path.docId))
    const cancel = ({ path, payload }: { path: { docId: string }; payload: Parameters<typeof documents.cancel>[2] }) =>
      Effect.flatMap(issuer, (by) => documents.cancel(by, path.docId, payload))
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
