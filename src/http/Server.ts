/**
 * The Node HTTP server of `npm start` (SPEC §12). It differs from `NodeHttpServer.layer` in when
 * the port opens: only once the application is serving, i.e. after every layer it needs (the
 * database and its migrations, the services, the routes) has been built. A connection the kernel
 * accepts is therefore always answered; before that moment clients get "connection refused", which
 * every HTTP client and load balancer retries.
 *
 * Shutdown (SIGTERM, through `NodeRuntime.runMain`) closes the port (after a second's grace for
 * connections already on their way, see `drain`), lets the requests in flight finish (up to
 * `drainTimeout`), and only then interrupts what is left; the background workers finish the jobs
 * in hand in their own finalizers (`WorkerPool.ts`).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Duration, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import type { Duplex } from "node:stream"

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
 * Stops accepting at once and resolves when every connection has ended. `http.Server#close` would
 * also destroy every connection without a request in progress, including one whose request is
 * still unread in its buffer: that client would see a reset for a request it did send. So only
 * the listening socket is closed (`net.Server#close`), and each connection ends after its current
 * response (see `drainable`) or, when idle, as `drain` says.
 */
const close = (server: Server) =>
  Effect.callback<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    NetServer.prototype.close.call(server, () => resume(Effect.void))
  })

/**
 * The drain. Connections a client has opened but this process has not accepted yet (the kernel's
 * backlog, long when the event loop is busy) would be reset by closing the listening socket at
 * once, although their requests were sent. So for a second the port keeps accepting, every
 * response closing its connection; then the listening socket closes; a second later, once what was
 * accepted has been read, idle keep-alive connections are closed; busy ones end after their
 * response.
 */
const drain = (server: Server) =>
  Effect.gen(function*() {
    yield* Effect.sleep(ACCEPT_GRACE)
    const idleCloser = yield* Effect.forkChild(
      Effect.andThen(Effect.sleep(ACCEPT_GRACE), Effect.sync(() => server.closeIdleConnections()))
    )
    yield* close(server)
    yield* Fiber.interrupt(idleCloser)
  })

const ACCEPT_GRACE = Duration.seconds(1)

/** Once draining, every response asks its client to close the connection after it. */
const drainable =
  (handler: (request: IncomingMessage, response: ServerResponse) => void, draining: () => boolean) =>
  (request: IncomingMessage, response: ServerResponse) => {
    if (draining()) response.shouldKeepAlive = false
    handler(request, response)
  }

/**
 * Requests Node refuses before the app sees them (a request line and headers over 16 KiB, a
 * malformed request line) still get the SPEC's JSON error shape and a request id, not Node's bare
 * status line. There is no span to name: the id is random.
 */
const answerClientError = (error: NodeJS.ErrnoException, socket: Duplex) => {
  if (!socket.writable) return socket.destroy()
  const tooLarge = error.code === "HPE_HEADER_OVERFLOW"
  const body = JSON.stringify(
    tooLarge
      ? { code: "request_headers_too_large", message: "The request line and headers are larger than 16 KiB." }
      : { code: "invalid_request", message: "The request is not valid HTTP." }
  )
  socket.end(
    `HTTP/1.1 ${tooLarge ? "431 Request Header Fields Too Large" : "400 Bad Request"}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `x-request-id: ${randomBytes(16).toString("hex")}\r\nconnection: close\r\n\r\n${body}`
  )
}

/**
 * The line a newcomer reads after `npm start`: where the two pages are. The port is bound on every
 * interface, so `localhost` reaches it from the machine itself.
 */
const logListening = (port: number) => {
  const origin = `http://localhost:${port}`
  return Effect.logInfo(`listening on port ${port}: dashboard ${origin}/, API reference ${origin}/docs`).pipe(
    Effect.annotateLogs({ dashboard_url: `${origin}/`, reference_url: `${origin}/docs` })
  )
}

const serverLayer = (options: ServerOptions): Layer.Layer<HttpServer.HttpServer> =>
  Layer.effect(
    HttpServer.HttpServer,
    Effect.gen(function*() {
      const server = createServer()
      server.on("clientError", answerClientError)
      const address = NetAddress.inetAddressFromIpStringUnsafe("0.0.0.0", options.port)
      return HttpServer.make({
        address,
        serve: (app, middleware) =>
          Effect.gen(function*() {
            // Request fibers get a scope of their own, closed only after the drain: were it a
            // child of the serving scope, closing that scope would interrupt them at once.
            const requests = yield* Scope.make("parallel")
            const handler = yield* NodeHttpServer.makeHandler(app, { middleware, scope: requests })
            let draining = false
            yield* Effect.addFinalizer(() =>
              Effect.sync(() => (draining = true)).pipe(
                Effect.andThen(drain(server).pipe(Effect.timeoutOption(options.drainTimeout))),
                Effect.andThen(Effect.sync(() => server.closeAllConnections())),
                Effect.andThen(Scope.close(requests, Exit.void))
              )
            )
            server.on("request", drainable(handler, () => draining))
            yield* listen(server, options.port)
            yield* logListening(options.port)
          })
      })
    })
  )

/** The server with the platform services the routes use (files, ETags), as `NodeHttpServer.layer` gives. */
export const layer = (options: ServerOptions) => Layer.merge(serverLayer(options), NodeHttpServer.layerHttpServices)
