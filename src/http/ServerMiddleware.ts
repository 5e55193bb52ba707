/**
 * The router-global middleware: it wraps every request before routing. Under the request's server
 * span (`ServerSpan.ts`) it names the client (`ClientAddress.ts`: behind `TRUSTED_PROXIES`, the
 * address they forwarded for), refuses what the guards refuse (`RequestGuards.ts`), serves the
 * unprefixed aliases of `/v1` paths, and answers a request no route matches (`Routing.ts`).
 * Failures inside the API become the SPEC's error bodies there (`ApiErrors.ts`).
 *
 * It is one synchronous step per request: what it needs (the guards, the sampler, the
 * configuration, the app with its answer to unrouted requests) is resolved once, when the server
 * starts, and a request goes through no more effects than its answer needs.
 */
import { Context, Effect } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest } from "effect/http"
import type { HttpApi, HttpApiGroup } from "effect/http-api"
import { AppConfig } from "../Config.js"
import { TraceSampler } from "../telemetry/Sampler.js"
import { withClientAddress } from "./ClientAddress.js"
import { hasJsonBody, refusalOf, requestGuards } from "./RequestGuards.js"
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
      ([guards, sampler, config]) => (app) => {
        // The router fails a request it has no route for (the middleware's error type does not
        // say so, hence the cast after the test); the request it saw is the routed one (the `/v1`
        // alias), whose method and URL the answer is about.
        const routed = Effect.catchIf(app, isRouteNotFound, (error) => {
          const { request } = error as unknown as HttpServerError.HttpServerError
          return Effect.succeed(routing.unrouted(request.method, request.url))
        })
        return Effect.withFiber((fiber) => {
          // Real time, not the Clock: a duration is only measured where real I/O takes real time.
          const started = performance.now()
          const context = fiber.context
          const received = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
          // The one place the client is named: everything after reads `request.remoteAddress`.
          const request = withClientAddress(config.trustedProxies, received)
          const url = routing.aliasOf(request.url)
          const template = routing.templateOf(request.method, url)
          const refusal = refusalOf(request)
          let handled: typeof routed
          if (refusal !== null) {
            handled = guards.refuse(request, refusal)
          } else {
            const target = url === request.url ? request : request.modify({ url })
            const served = target === received
              ? routed
              : Effect.provideService(routed, HttpServerRequest.HttpServerRequest, target)
            handled = hasJsonBody(target) ? guards.checkJsonBody(target, served) : served
          }
          return withServerSpan(sampler, { context, request, started, template }, handled)
        })
      }
    ),
    { global: true }
  )
}
