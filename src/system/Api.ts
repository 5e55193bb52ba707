import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { NotReady } from "../domain/Errors.js"

export class Health
  extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }, { description: "This instance is up." })
{}

export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ok"),
  checks: Schema.Record(Schema.String, Schema.Literals(["ok", "failed"]))
}, { description: "Readiness of this instance: each dependency's check." }) {}

export class SystemApi extends HttpApiGroup.make("system")
  .add(
    HttpApiEndpoint.get("healthz", "/healthz", {
      success: Health
    })
      .annotate(OpenApi.Summary, "Check liveness")
      .annotate(
        OpenApi.Description,
        "200 while the process serves requests; it checks no dependency (`/readyz` does). For a liveness probe."
      )
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz", {
      success: Readiness,
      error: NotReady
    })
      .annotate(OpenApi.Summary, "Check readiness")
      .annotate(OpenApi.Description, "Ready when the database answers, migrations are applied and the workers run.")
  )
  .annotate(OpenApi.Title, "System")
  .annotate(
    OpenApi.Description,
    "Liveness and readiness probes, without authentication (and without the `/v1` prefix)."
  )
{}
