/**
 * The OpenAPI document as the reference page shows it: the published one, told that keys are
 * never used on the page, and with the page's own origin as the server its "try" client calls
 * (the page's Content-Security-Policy lets it call no other).
 */
import type { OpenApi } from "effect/http-api"

export const KEYS_STAY_ON_SERVERS = "**API keys stay on your servers.** This page never sends an API key " +
  "(`etd_live_…`, `etd_test_…`): it refuses, before anything leaves the browser, a request that carries one, " +
  "because the service answers a key sent from a browser with `403 api_key_in_browser` and treats the key as " +
  "exposed. To try an endpoint here, log in with `POST /v1/auth/login` and give the session token " +
  "(`etd_sess_…`) to the `session` scheme; for an endpoint that takes only a key, copy the curl example and run " +
  "it from a server."

export const referenceDocument = (spec: OpenApi.OpenAPISpec): OpenApi.OpenAPISpec => ({
  ...spec,
  info: {
    ...spec.info,
    description: spec.info.description === undefined
      ? KEYS_STAY_ON_SERVERS
      : `${KEYS_STAY_ON_SERVERS}\n\n${spec.info.description}`
  },
  servers: [{ url: "/", description: "This deployment: the origin this page was served from." }]
})
