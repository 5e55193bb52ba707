import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NotReady } from "../domain/Errors.js"

export class Health extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }) {}

export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ok"),
  checks: Schema.Record({ key: Schema.String, value: Schema.Literal("ok", "failed") })
}) {}

export class SystemApi extends HttpApiGroup.make("system")
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(Readiness)
      .addError(NotReady)
      .annotate(OpenApi.Description, "Ready when the database answers, migrations are applied and the workers run.")
  )
  .annotate(OpenApi.Title, "System")
{}
