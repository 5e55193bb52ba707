import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { AppConfig } from "../Config.js"
import { CurrentSession, pathTenant } from "../domain/Principal.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"
import { requireVerifiedEmail, UserDirectory } from "../tenants/UserDirectory.js"
import { CredentialService } from "./CredentialService.js"

const perMinute = (count: number) => ({ capacity: count, refillPerSecond: count / 60 })

export const CredentialsHttpLive = HttpApiBuilder.group(
  Api,
  "credentials",
  Effect.fn(function*(handlers) {
    const credentials = yield* CredentialService
    const limiter = yield* RateLimiter
    const directory = yield* UserDirectory
    const { uploadRateLimit } = yield* AppConfig
    // Opening a PKCS#12 is the most expensive work a request can ask for: uploads are counted per
    // tenant (whoever uploads), per user (whatever the tenant: an accountant's many clients give no
    // more) and over the whole service (many accounts give no more), all in one draw.
    const perTenant = perMinute(uploadRateLimit.perMinute)
    const perUser = perMinute(uploadRateLimit.perUserPerMinute)
    const overall = perMinute(uploadRateLimit.globalPerMinute)
    return handlers
      .handle("upload", ({ params, payload }) =>
        Effect.gen(function*() {
          // An upload verifies the tenant's tax id: only someone whose own address is proven may do it.
          const { userId } = yield* CurrentSession
          yield* requireVerifiedEmail(userId).pipe(Effect.provideService(UserDirectory, directory))
          yield* limiter.consume([
            { key: `upload:${params.tenantId}`, policy: perTenant },
            { key: `upload-user:${userId}`, policy: perUser },
            { key: "upload-global:all", policy: overall }
          ])
          return yield* credentials.upload(pathTenant(params), payload, userId)
        }))
      .handle("list", ({ params, query }) => credentials.list(pathTenant(params), query))
      .handle("get", ({ params }) => credentials.get(pathTenant(params), params.credId))
  })
)
