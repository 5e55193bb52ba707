import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { AuthorizerStatus } from "../domain/AuthorizerStatus.js"
import { NotReady } from "../domain/Errors.js"

export class Health
  extends Schema.Class<Health>("Health")({ status: Schema.Literal("ok") }, { description: "This instance is up." })
{}

export class Readiness extends Schema.Class<Readiness>("Readiness")({
  status: Schema.Literal("ok"),
  checks: Schema.Record(Schema.String, Schema.Literals(["ok", "failed"])),
  authorizers: Schema.optionalKey(Schema.Array(AuthorizerStatus)).annotate({
    description:
      "The state authorities' status service, as last asked (every `SEFAZ_STATUS_CHECK_INTERVAL`), for the " +
      "states of the tenants that issue goods invoices to a SEFAZ; absent until asked. Details only: an authorizer " +
      "that is down does not make the instance unready (its notes wait)."
  })
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
