import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { makeApp } from "./App.js"
import { AppConfig, AppConfigLive } from "./Config.js"

const ServerLive = Layer.unwrap(
  Effect.map(AppConfig, ({ port }) => NodeHttpServer.layer(createServer, { port }))
).pipe(Layer.provide(AppConfigLive))

makeApp(AppConfigLive).pipe(Layer.provide(ServerLive), Layer.launch, NodeRuntime.runMain())
