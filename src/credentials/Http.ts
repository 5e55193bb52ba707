import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { AppConfig } from "../Config.js"
import { pathTenant } from "../domain/Principal.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"
import { CredentialService } from "./CredentialService.js"

export const CredentialsHttpLive = HttpApiBuilder.group(
  Api,
  "credentials",
  Effect.fn(function*(handlers) {
    const credentials = yield* CredentialService
    const limiter = yield* RateLimiter
    const { uploadRateLimit } = yield* AppConfig
    // Per tenant, whoever uploads: opening a PKCS#12 is the most expensive work a request can ask for.
    const uploads = { capacity: uploadRateLimit.perMinute, refillPerSecond: uploadRateLimit.perMinute / 60 }
    return handlers
      .handle("upload", ({ params, payload }) =>
        Effect.andThen(
          limiter.consume([{ key: `upload:${params.tenantId}`, policy: uploads }]),
          credentials.upload(pathTenant(params), payload)
        ))
      .handle("list", ({ params, query }) => credentials.list(pathTenant(params), query))
      .handle("get", ({ params }) => credentials.get(pathTenant(params), params.credId))
  })
)
