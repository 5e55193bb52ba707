/**
 * The contract as the server documents it: `/openapi.json`, `/docs` and schemas/openapi.json.
 *
 * Rewriting the generated document (openapi.ts) and naming each operation's scope or roles
 * (keys/Policy.ts, the same annotations the server enforces) concern the server only, so they are
 * added here rather than in Api.ts, which the published client bundles.
 */
import { OpenApi } from "effect/http-api"
import { Api } from "./Api.js"
import { classDescriptions } from "./ClassDescriptions.js"
import { endpointPolicies } from "./keys/Policy.js"
import { forIntegrators } from "./openapi.js"

export const ApiDocument = Api
  .annotate(OpenApi.Transform, (spec) => forIntegrators(spec, endpointPolicies(Api), classDescriptions(Api)))
  // A variable, not a fixed host: every deployment has its own base URL; the defaults are a local start.
  .annotate(OpenApi.Servers, [{
    url: "{scheme}://{host}",
    description: "Your deployment's base URL. The defaults are a service started locally on the default `PORT`.",
    variables: {
      scheme: { default: "http", enum: ["http", "https"], description: "`https` in production." },
      host: { default: "localhost:3000", description: "Host and port of your deployment." }
    }
  }])
