import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Api } from "../Api.js"
import { Readiness } from "../runtime/Readiness.js"
import { Health, Readiness as ReadinessBody } from "./Api.js"

export const SystemHttpLive = HttpApiBuilder.group(
  Api,
  "system",
  Effect.fn(function*(handlers) {
    const readiness = yield* Readiness
    return handlers
      .handle("healthz", () => Effect.succeed(new Health({ status: "ok" })))
      .handle("readyz", () => Effect.map(readiness.check, (ready) => new ReadinessBody(ready)))
  })
)
