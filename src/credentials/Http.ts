import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { CredentialService } from "./CredentialService.js"

export const CredentialsHttpLive = HttpApiBuilder.group(Api, "credentials", Effect.fn(function*(handlers) {
  const credentials = yield* CredentialService
  return handlers
    .handle("upload", ({ params, payload }) => credentials.upload(params.tenantId, payload))
    .handle("list", ({ params, query }) => credentials.list(params.tenantId, query))
    .handle("get", ({ params }) => credentials.get(params.tenantId, params.credId))
}))
