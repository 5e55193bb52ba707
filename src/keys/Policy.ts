/**
 * Authorization rules, one small function each, and the table of what every endpoint requires.
 * The table is read from the contract's annotations, so it cannot drift from what is enforced, and
 * checked when the server starts: an endpoint without its policy stops the start, not its first request.
 */
import { Context, Data, Effect, Option } from "effect"
import { HttpApi, type HttpApiGroup } from "effect/http-api"
import { Forbidden, InsufficientScope, NotFound } from "../domain/Errors.js"
import { RequiredRoles, RequiredScope, type Role, type Scope } from "../domain/Principal.js"

export type Authentication = "public" | "api_key" | "session" | "session_or_api_key"

export interface EndpointPolicy {
  readonly method: string
  readonly path: string
  readonly endpoint: string
  readonly authentication: Authentication
  readonly scope: Scope | null
  readonly roles: ReadonlyArray<Role> | null
}

const authenticationOf = (middleware: ReadonlySet<{ readonly key: string }>): Authentication => {
  const keys = new Set([...middleware].map((tag) => tag.key))
  if (keys.has("ApiKeyAuth")) return "api_key"
  if (keys.has("SessionAuth")) return "session"
  if (keys.has("KeyOrSessionAuth")) return "session_or_api_key"
  return "public"
}

export const endpointPolicies = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<EndpointPolicy> => {
  const policies: Array<EndpointPolicy> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      policies.push({
        method: endpoint.method,
        path: endpoint.path,
        endpoint: `${group.identifier}.${endpoint.identifier}`,
        authentication: authenticationOf(middleware),
        scope: Option.getOrNull(Context.getOption(mergedAnnotations, RequiredScope)),
        roles: Option.getOrNull(Context.getOption(mergedAnnotations, RequiredRoles))
      })
    }
  })
  return policies
}

/** Whether a member's session reaches the endpoint on a tenant's path, where its role is known. */
const sessionOnTenantPath = (policy: EndpointPolicy) =>
  (policy.authentication === "session" || policy.authentication === "session_or_api_key") &&
  policy.path.includes(":tenantId")

/**
 * What is wrong with an endpoint's policy, if anything: a requirement its authentication needs is
 * missing, or one is declared where the middleware never reads it (a rule that looks enforced but is not).
 */
const policyProblem = (policy: EndpointPolicy): string | undefined => {
  if (policy.authentication === "api_key" && policy.scope === null) {
    return "takes an API key but declares no RequiredScope"
  }
  if (sessionOnTenantPath(policy) && policy.roles === null) {
    return "takes a member's session on a tenant path but declares no RequiredRoles"
  }
  if (policy.authentication !== "api_key" && policy.authentication !== "session_or_api_key" && policy.scope !== null) {
    return "declares a RequiredScope, which only endpoints that take an API key enforce"
  }
  if (policy.roles !== null && !sessionOnTenantPath(policy)) {
    return "declares RequiredRoles, which only endpoints that take a session on a tenant path enforce"
  }
  return undefined
}

/** The contract has an endpoint whose authorization is incomplete: the server must not start. */
export class IncompletePolicy extends Data.TaggedError("IncompletePolicy")<{ readonly message: string }> {}

/** An endpoint's policy by method and path template (`/v1/tenants/:tenantId`). */
export type PolicyLookup = (method: string, path: string) => EndpointPolicy | undefined

/** Every endpoint's policy, checked once and indexed by route, for the middleware to look up per request. */
export const policyTable = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): Effect.Effect<PolicyLookup, IncompletePolicy> =>
  Effect.suspend(() => {
    const policies = endpointPolicies(api)
    const problems = policies.flatMap((policy) => {
      const problem = policyProblem(policy)
      return problem === undefined ? [] : [`${policy.endpoint} (${policy.method} ${policy.path}) ${problem}`]
    })
    if (problems.length > 0) {
      return Effect.fail(new IncompletePolicy({ message: `Endpoint policies are incomplete: ${problems.join("; ")}.` }))
    }
    const index = new Map(policies.map((policy) => [`${policy.method} ${policy.path}`, policy]))
    return Effect.succeed((method: string, path: string) => index.get(`${method} ${path}`))
  })

/**
 * Why a key may not make this request, if it may not: another tenant's path answers as if it did
 * not exist, so tenants cannot be probed; then the endpoint's scope. A plain check, not an effect:
 * every key-authenticated request makes it.
 */
export const keyRefusal = (
  pathTenantId: string | undefined,
  tenantId: string,
  required: Scope | null,
  granted: ReadonlyArray<Scope>
): NotFound | InsufficientScope | undefined => {
  if (pathTenantId !== undefined && pathTenantId !== tenantId) return new NotFound()
  if (required === null || granted.includes(required)) return undefined
  return new InsufficientScope({
    message: `This endpoint requires the \`${required}\` scope.`,
    required_scope: required
  })
}

export const requireRole = (required: ReadonlyArray<Role> | null, role: Role) =>
  required === null || required.includes(role)
    ? Effect.void
    : Effect.fail(new Forbidden({ message: `This operation requires the role ${required.join(" or ")}.` }))
