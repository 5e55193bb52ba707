/**
 * The Node HTTP server of `npm start` (SPEC §12). It differs from `NodeHttpServer.layer` in when
 * the port opens: only once the application is serving, i.e. after every layer it needs (the
 * database and its migrations, the services, the routes) has been built. A connection the kernel
 * accepts is therefore always answered; before that moment clients get "connection refused", which
 * every HTTP client and load balancer retries.
 *
 * Shutdown (SIGTERM, through `NodeRuntime.runMain`) closes the port first, lets the requests in
 * flight finish (up to `drainTimeout`), and only then interrupts what is left; the background
 * workers finish the jobs in hand in their own finalizers (`WorkerPool.ts`).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { type Duration, Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { createServer, type Server } from "node:http"

export interface ServerOptions {
  readonly port: number
  /** Longest wait for requests in flight at shutdown. */
  readonly drainTimeout: Duration.Input
}

const listen = (server: Server, port: number) =>
  Effect.callback<void>((resume) => {
    const onError = (error: Error) => resume(Effect.die(error))
    server.once("error", onError)
    server.listen(port, () => {
      server.off("error", onError)
      resume(Effect.void)
    })
  })

/**
 * Stops accepting at once and resolves when every connection has ended: Node closes the idle
 * keep-alive connections itself, and each busy one after its response.
 */
const close = (server: Server) =>
  Effect.callback<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    server.close(() => resume(Effect.void))
  })

const serverLayer = (options: ServerOptions): Layer.Layer<HttpServer.HttpServer> =>
  Layer.effect(
    HttpServer.HttpServer,
    Effect.gen(function*() {
      const server = createServer()
      const address = NetAddress.inetAddressFromIpStringUnsafe("0.0.0.0", options.port)
      return HttpServer.make({
        address,
        serve: (app, middleware) =>
          Effect.gen(function*() {
            // Request fibers get a scope of their own, closed only after the drain: were it a
            // child of the serving scope, closing that scope would interrupt them at once.
            const requests = yield* Scope.make("parallel")
            const handler = yield* NodeHttpServer.makeHandler(app, { middleware, scope: requests })
            yield* Effect.addFinalizer(() =>
              close(server).pipe(
                Effect.timeoutOption(options.drainTimeout),
                Effect.andThen(Effect.sync(() => server.closeAllConnections())),
                Effect.andThen(Scope.close(requests, Exit.void))
              )
            )
            server.on("request", handler)
            yield* listen(server, options.port)
            yield* Effect.logInfo(`listening on port ${options.port}`)
          })
      })
    })
  )

/** The server with the platform services the routes use (files, ETags), as `NodeHttpServer.layer` gives. */
export const layer = (options: ServerOptions) => Layer.merge(serverLayer(options), NodeHttpServer.layerHttpServices)
