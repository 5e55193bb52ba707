import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { BillingService } from "./BillingService.js"

export const BillingHttpLive = HttpApiBuilder.group(
  Api,
  "billing",
  Effect.fn(function*(handlers) {
    const billing = yield* BillingService
    return handlers
      // Raw: the signature covers the exact body bytes, so they are verified before any parsing.
      // An unreadable body (over 1 MiB) dies with the framework's request error, which the API
      // middleware answers like any other unreadable body.
      .handleRaw(
        "paymentProviderWebhook",
        ({ request }) => Effect.flatMap(Effect.orDie(request.text), (body) => billing.receive(request.headers, body))
      )
  })
)
