import { NodeRuntime } from "@effect/platform-node"
import { Cause, Effect, Exit, Layer, Runtime } from "effect"
import { makeApp } from "./App.js"
import { AppConfig, AppConfigLive } from "./Config.js"
import * as Server from "./http/Server.js"

// The port opens once the whole app is built (src/http/Server.ts); requests in flight at SIGTERM
// get the same grace as the jobs in hand.
const ServerLive = Layer.unwrap(
  Effect.map(AppConfig, ({ port, queue }) => Server.layer({ port, drainTimeout: queue.shutdownGrace }))
).pipe(Layer.provide(AppConfigLive))

/** SIGTERM or SIGINT interrupts the app; having drained, it exits 0 like any orderly stop. */
const teardown: Runtime.Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

makeApp(AppConfigLive).pipe(Layer.provide(ServerLive), Layer.launch, NodeRuntime.runMain({ teardown }))
