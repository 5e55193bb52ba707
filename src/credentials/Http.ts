import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../Api.js"
import { CredentialService } from "./CredentialService.js"

export const CredentialsHttpLive = HttpApiBuilder.group(Api, "credentials", (handlers) =>
  Effect.gen(function*() {
    const credentials = yield* CredentialService
    return handlers
      .handle("upload", ({ path, payload }) => credentials.upload(path.tenantId, payload))
      .handle("list", ({ path, urlParams }) => credentials.list(path.tenantId, urlParams))
      .handle("get", ({ path }) => credentials.get(path.tenantId, path.credId))
  }))
