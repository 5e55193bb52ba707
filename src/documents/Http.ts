import { Effect } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiSchema } from "effect/http-api"
import { Api } from "../Api.js"
import type { AnyDocument } from "../domain/GoodsDocument.js"
import { asId } from "../domain/Ids.js"
import { CurrentApiKey, pathTenant, reachOf } from "../domain/Principal.js"
import { DEFAULT_USAGE_DAYS } from "../domain/Usage.js"
import type { NewAnyDocument } from "./Api.js"
import { DocumentService, type Issuer } from "./DocumentService.js"

/** The key decides tenant and environment; the middleware already matched the path's tenant. */
export const issuer = Effect.map(
  CurrentApiKey,
  (key): Issuer => ({ tenantId: key.tenantId, environment: key.environment })
)

/** The path's `{docId}`, validated by its `IdOf("document")` schema. */
export const docId = (params: { readonly docId: string }) => asId("document", params.docId)

/** The file name's prefix of a note of each type. */
const FILE_PREFIX = { service_invoice: "NFSe", product_invoice: "NFe", consumer_invoice: "NFCe" } as const

/** The statuses a note's files say besides `authorized`: no longer standing, or not yet authorized. */
const noteStanding = new Set(["cancelled", "substituted", "contingency"])

/** A file answer: named by the note's access key, and saying whether the note still stands. */
const asNoteFile = <A>(body: A, document: AnyDocument, extension: "xml" | "pdf") =>
  HttpApiSchema.withHeaders({
    body,
    headers: {
      "content-disposition": `inline; filename="${FILE_PREFIX[document.type]}-${
        document.authority?.access_key ?? ("contingency" in document ? document.contingency?.access_key : null) ??
          document.id
      }.${extension}"`,
      "etd-document-status": noteStanding.has(document.status) ? document.status : "authorized",
      "cache-control": "private, no-store",
      "content-security-policy": "default-src 'none'; sandbox"
    }
  })

/**
 * Marks this request's response, success or error, as a stored answer replayed (Stripe's
 * `Idempotent-Replayed: true`), so a client can tell its retry did not act a second time. A
 * pre-response handler, because a replayed error's response is built later, by the API. The
 * request is captured here so the mark is a plain effect for the service, which knows no HTTP.
 */
export const markReplayed = Effect.map(
  HttpServerRequest.HttpServerRequest,
  (request) =>
    HttpEffect.appendPreResponseHandler((_, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "idempotent-replayed", "true"))
    ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request))
)

export const DocumentsHttpLive = HttpApiBuilder.group(
  Api,
  "documents",
  Effect.fn(function*(handlers) {
    const documents = yield* DocumentService
    const issue = ({ headers, payload }: {
      readonly headers: { readonly "idempotency-key"?: string | undefined }
      readonly payload: NewAnyDocument
    }) =>
      Effect.flatMap(
        Effect.zip(issuer, markReplayed),
        ([by, onReplay]) => documents.issue(by, payload, headers["idempotency-key"], onReplay)
      )
    const xml = ({ params }: { readonly params: { readonly docId: string } }) =>
      Effect.flatMap(issuer, (by) => documents.nfseXml(by, docId(params))).pipe(
        Effect.map((file) => asNoteFile(file.xml, file.document, "xml"))
      )
    const pdf = ({ params }: { readonly params: { readonly docId: string } }) =>
      Effect.flatMap(issuer, (by) => documents.danfse(by, docId(params))).pipe(
        Effect.map((file) => asNoteFile(file.pdf, file.document, "pdf"))
      )
    return handlers
      .handle("issue", issue)
      .handle("list", ({ params, query }) => Effect.flatMap(reachOf(params), (by) => documents.list(by, query)))
      .handle("get", ({ params }) => Effect.flatMap(reachOf(params), (by) => documents.get(by, docId(params))))
      .handle(
        "cancel",
        ({ params, payload }) => Effect.flatMap(reachOf(params), (by) => documents.cancel(by, docId(params), payload))
      )
      .handle("issueForKey", issue)
      .handle("listForKey", ({ query }) => Effect.flatMap(issuer, (by) => documents.list(by, query)))
      .handle("getForKey", ({ params }) => Effect.flatMap(issuer, (by) => documents.get(by, docId(params))))
      .handle(
        "cancelForKey",
        ({ params, payload }) => Effect.flatMap(issuer, (by) => documents.cancel(by, docId(params), payload))
      )
      .handle("xmlForKey", xml)
      .handle("pdfForKey", pdf)
  })
)

export const DocumentFilesHttpLive = HttpApiBuilder.group(
  Api,
  "documentFiles",
  Effect.fn(function*(handlers) {
    const documents = yield* DocumentService
    return handlers
      .handle("xml", ({ params }) =>
        Effect.flatMap(reachOf(params), (by) => documents.nfseXml(by, docId(params))).pipe(
          Effect.map((file) => asNoteFile(file.xml, file.document, "xml"))
        ))
      .handle("pdf", ({ params }) =>
        Effect.flatMap(reachOf(params), (by) => documents.danfse(by, docId(params))).pipe(
          Effect.map((file) => asNoteFile(file.pdf, file.document, "pdf"))
        ))
  })
)

export const UsageHttpLive = HttpApiBuilder.group(
  Api,
  "usage",
  Effect.fn(function*(handlers) {
    const documents = yield* DocumentService
    return handlers.handle(
      "get",
      ({ params, query }) => documents.usage(pathTenant(params), query.days ?? DEFAULT_USAGE_DAYS)
    )
  })
)
