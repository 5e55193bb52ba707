import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { AppConfig } from "../Config.js"
import { CurrentSession, pathTenant } from "../domain/Principal.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"
import { requireVerifiedEmail, UserDirectory } from "../tenants/UserDirectory.js"
import { CredentialService } from "./CredentialService.js"

export const CredentialsHttpLive = HttpApiBuilder.group(
  Api,
  "credentials",
  Effect.fn(function*(handlers) {
    const credentials = yield* CredentialService
    const limiter = yield* RateLimiter
    const directory = yield* UserDirectory
    const { uploadRateLimit } = yield* AppConfig
    // Per tenant, whoever uploads: opening a PKCS#12 is the most expensive work a request can ask for.
    const uploads = { capacity: uploadRateLimit.perMinute, refillPerSecond: uploadRateLimit.perMinute / 60 }
    return handlers
      .handle("upload", ({ params, payload }) =>
        Effect.gen(function*() {
          // An upload verifies the tenant's tax id: only someone whose own address is proven may do it.
          const session = yield* CurrentSession
          yield* requireVerifiedEmail(session.userId).pipe(Effect.provideService(UserDirectory, directory))
          yield* limiter.consume([{ key: `upload:${params.tenantId}`, policy: uploads }])
          return yield* credentials.upload(pathTenant(params), payload)
        }))
      .handle("list", ({ params, query }) => credentials.list(pathTenant(params), query))
      .handle("get", ({ params }) => credentials.get(pathTenant(params), params.credId))
  })
)
