/**
 * What the server middleware knows of routes: the templates that name a request in spans,
 * metrics and the access log; the unprefixed aliases of `/v1` paths; and the answer to a request
 * no route matches (404, or 405 and OPTIONS with `Allow`).
 */
import { HttpServerResponse } from "effect/http"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { MethodNotAllowed, NotFound } from "../domain/Errors.js"
import { errorResponse } from "./ApiErrors.js"

interface RouteTemplate {
  readonly method: string
  readonly template: string
  readonly pattern: RegExp
}

/**
 * The pages `App.ts` serves at the root beside the contract: the OpenAPI document, the reference
 * page (and its scripts under `/docs/assets/`), the metrics, and the dashboard (`/` and its files under `/assets/`). They are never aliases
 * of a `/v1` path, and they are named like routes in spans, metrics and the access log.
 */
const ROOT_PAGES: ReadonlyArray<RouteTemplate> = [
  { method: "GET", template: "/", pattern: /^\/$/ },
  { method: "GET", template: "/openapi.json", pattern: /^\/openapi\.json$/ },
  { method: "GET", template: "/docs", pattern: /^\/docs$/ },
  { method: "GET", template: "/docs/assets/{file}", pattern: /^\/docs\/assets\/.+$/ },
  { method: "GET", template: "/metrics", pattern: /^\/metrics$/ },
  { method: "GET", template: "/assets/{file}", pattern: /^\/assets\/.+$/ }
]

const isRootPage = (path: string) => ROOT_PAGES.some((page) => page.pattern.test(path))

/** The path of a request's URL, without its query. */
export const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

const isVersioned = (path: string) => path === "/v1" || path.startsWith("/v1/")

/** The route templates of the contract, in OpenAPI form (`/v1/tenants/{tenantId}`), for span names. */
const routeTemplates = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<RouteTemplate> => {
  const routes: Array<RouteTemplate> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      routes.push({
        method: endpoint.method,
        template: endpoint.path.replace(/:(\w+)/g, "{$1}"),
        pattern: new RegExp(`^${endpoint.path.replace(/:(\w+)/g, "[^/]+")}$`)
      })
    }
  })
  return routes
}

/** How many `/`-separated segments a path has, counted without splitting it. */
const segmentsOf = (path: string) => {
  let count = 1
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) count++
  return count
}

/**
 * The template a request's path matches, for its span's name. The templates are indexed once by
 * method and number of segments, so a request tests the few of its shape, not all of them.
 */
const routeTemplateIndex = (routes: ReadonlyArray<RouteTemplate>) => {
  const index = new Map<string, Map<number, Array<RouteTemplate>>>()
  for (const route of routes) {
    const byShape = index.get(route.method) ?? new Map<number, Array<RouteTemplate>>()
    index.set(route.method, byShape)
    const segments = segmentsOf(route.template)
    byShape.set(segments, [...(byShape.get(segments) ?? []), route])
  }
  return (method: string, path: string): string | undefined => {
    const candidates = index.get(method)?.get(segmentsOf(path))
    if (candidates === undefined) return undefined
    for (const route of candidates) if (route.pattern.test(path)) return route.template
    return undefined
  }
}

/** `Allow` lists methods in this order (RFC 9110 gives none; the usual one reads best). */
const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

/**
 * The methods a path takes, for `Allow` (RFC 9110 §10.2.1); none for a path the service does not
 * have. HEAD goes with GET (the router answers it with the GET handler), and OPTIONS with every
 * path the service has (answered below, before routing). Only asked for requests the router found
 * no route for, so it tests every template rather than keeping an index.
 */
const allowedMethods = (routes: ReadonlyArray<RouteTemplate>) => (path: string): ReadonlyArray<string> => {
  const methods = new Set(routes.filter((route) => route.pattern.test(path)).map((route) => route.method))
  if (isRootPage(path)) methods.add("GET")
  if (methods.size === 0) return []
  if (methods.has("GET")) methods.add("HEAD")
  methods.add("OPTIONS")
  return METHOD_ORDER.filter((method) => methods.has(method))
}

/**
 * The answer to a request the router has no route for. A path the service has answers OPTIONS with
 * `204` and `Allow` (no CORS headers: none are granted), and any other method it does not take
 * with `405 method_not_allowed` and `Allow`. Everything else is `404 not_found`, also a method
 * the path does take (the router refused the request for another reason, such as a path
 * parameter over its length limit).
 */
const unrouted = (allowedOf: (path: string) => ReadonlyArray<string>, method: string, path: string) => {
  const allowed = allowedOf(path)
  if (allowed.length === 0 || (method !== "OPTIONS" && allowed.includes(method))) {
    return errorResponse(new NotFound({ message: "No endpoint matches this method and path." }))
  }
  const allow = { allow: allowed.join(", ") }
  return method === "OPTIONS"
    ? HttpServerResponse.empty({ status: 204, headers: allow })
    : HttpServerResponse.setHeaders(errorResponse(new MethodNotAllowed()), allow)
}

export interface Routing {
  /** The URL the router is given: an unprefixed path of a `/v1` endpoint gets its prefix. */
  readonly aliasOf: (url: string) => string
  /** The route template of a request (by its method and aliased URL), if it has one. */
  readonly templateOf: (method: string, url: string) => string | undefined
  /** The answer to a request (by its method and aliased URL) the router found no route for. */
  readonly unrouted: (method: string, url: string) => HttpServerResponse.HttpServerResponse
}

/** The routing of an API's endpoints and the root pages, indexed once when the server starts. */
export const makeRouting = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): Routing => {
  const routes = routeTemplates(api)
  const routeTemplateOf = routeTemplateIndex([...routes, ...ROOT_PAGES])
  const allowedOf = allowedMethods(routes)
  // The contract's own root endpoints (`/healthz`, `/readyz`); every other unprefixed path is an alias of its `/v1` form.
  const rootRoutes = routes.filter((route) => !isVersioned(route.template))
  return {
    aliasOf: (url) => {
      const path = pathOf(url)
      return isVersioned(path) || isRootPage(path) || rootRoutes.some((route) => route.pattern.test(path))
        ? url
        : `/v1${url}`
    },
    // HEAD is served by every GET route: it has that route's template.
    templateOf: (method, url) => routeTemplateOf(method === "HEAD" ? "GET" : method, pathOf(url)),
    unrouted: (method, url) => unrouted(allowedOf, method, pathOf(url))
  }
}
