/**
 * The router-global middleware: it wraps every request before routing. Under the request's server
 * span (`ServerSpan.ts`) it names the client (`ClientAddress.ts`: behind `TRUSTED_PROXIES`, the
 * address they forwarded for), refuses what the guards refuse (`RequestGuards.ts`), serves the
 * unprefixed aliases of `/v1` paths, and answers a request no route matches (`Routing.ts`).
 * Failures inside the API become the SPEC's error bodies there (`ApiErrors.ts`).
 */
import { Effect } from "effect"
import { HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest } from "effect/http"
import type { HttpApi, HttpApiGroup } from "effect/http-api"
import { AppConfig } from "../Config.js"
import { TraceSampler } from "../telemetry/Sampler.js"
import { withClientAddress } from "./ClientAddress.js"
import { maxBodySize, requestGuards } from "./RequestGuards.js"
import { makeRouting } from "./Routing.js"
import { withServerSpan } from "./ServerSpan.js"

const isRouteNotFound = (error: unknown) =>
  HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/** The middleware for the routes of `api` (and the root pages `App.ts` serves beside it). */
export const serverMiddleware = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
) => {
  const routing = makeRouting(api)
  return HttpRouter.middleware(
    Effect.map(
      Effect.all([requestGuards, TraceSampler, AppConfig]),
      ([refusal, sampler, config]) => (app) =>
        Effect.gen(function*() {
          // Real time, not the Clock: a duration is only measured where real I/O takes real time.
          const started = performance.now()
          const received = yield* HttpServerRequest.HttpServerRequest
          // The one place the client is named: everything after reads `request.remoteAddress`.
          const request = withClientAddress(config.trustedProxies, received)
          const url = routing.aliasOf(request.url)
          const template = routing.templateOf(request.method, url)
          const handled = Effect.gen(function*() {
            const target = url === request.url ? request : request.modify({ url })
            const refused = yield* refusal(request, target)
            if (refused !== null) return refused
            const routed = request === received && target === request
              ? app
              : Effect.provideService(app, HttpServerRequest.HttpServerRequest, target)
            return yield* Effect.provideService(routed, HttpIncomingMessage.MaxBodySize, maxBodySize).pipe(
              Effect.catchIf(isRouteNotFound, () => Effect.succeed(routing.unrouted(request.method, url)))
            )
          })
          return yield* withServerSpan(sampler, { request, started, template }, handled)
        })
    ),
    { global: true }
  )
}
