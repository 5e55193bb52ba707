/**
 * Authorization rules, one small function each, and the table of what every endpoint requires.
 * The table is read from the contract's annotations, so it cannot drift from what is enforced.
 */
import { Context, Effect, Option } from "effect"
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
  if (keys.has("TenantReaderAuth")) return "session_or_api_key"
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

/** Looks an endpoint up by method and path template. */
export const policyIndex = (policies: ReadonlyArray<EndpointPolicy>) => {
  const index = new Map(policies.map((policy) => [`${policy.method} ${policy.path}`, policy]))
  return (method: string, path: string): EndpointPolicy | undefined => index.get(`${method} ${path}`)
}

/** Another tenant's path answers as if it did not exist, so tenants cannot be probed. */
export const requireSameTenant = (pathTenantId: string | undefined, tenantId: string) =>
  pathTenantId === undefined || pathTenantId === tenantId ? Effect.void : Effect.fail(new NotFound())

export const requireScope = (required: Scope | null, granted: ReadonlyArray<Scope>) =>
  required === null || granted.includes(required)
    ? Effect.void
    : Effect.fail(
      new InsufficientScope({
        message: `This endpoint requires the \`${required}\` scope.`,
        required_scope: required
      })
    )

export const requireRole = (required: ReadonlyArray<Role> | null, role: Role) =>
  required === null || required.includes(role)
    ? Effect.void
    : Effect.fail(new Forbidden({ message: `This operation requires the role ${required.join(" or ")}.` }))
