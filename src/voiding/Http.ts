/** The number voiding handlers: thin, over `VoidingService` (the key decides the tenant and environment). */
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { issuer } from "../documents/Http.js"
import { VoidingService } from "../documents/Voiding.js"
import type { PageParams } from "../domain/Pagination.js"
import type { NewVoiding } from "../domain/Voiding.js"

export const VoidingHttpLive = HttpApiBuilder.group(
  Api,
  "voiding",
  Effect.fn(function*(handlers) {
    const voiding = yield* VoidingService
    const voidNumbers = ({ payload }: { readonly payload: NewVoiding }) =>
      Effect.flatMap(issuer, (by) => voiding.voidNumbers(by, payload))
    const list = ({ query }: { readonly query: PageParams }) =>
      Effect.flatMap(issuer, (by) => voiding.list(by.tenantId, by.environment, query))
    const get = ({ params }: { readonly params: { readonly voidingId: string } }) =>
      Effect.flatMap(issuer, (by) => voiding.get(by.tenantId, by.environment, params.voidingId))
    return handlers
      .handle("voidNumbers", voidNumbers)
      .handle("list", list)
      .handle("get", get)
      .handle("voidNumbersForKey", voidNumbers)
      .handle("listForKey", list)
      .handle("getForKey", get)
  })
)
