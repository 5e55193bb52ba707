/**
 * Who is calling. Authentication middleware provides one of these; handlers read it.
 */
import { Context, Effect, Schema } from "effect"
import { type ApiKeyId, asId, type TenantId, type UserId } from "./Ids.js"

export const Scope = Schema.Literals([
  "documents:read",
  "documents:write",
  "documents:cancel",
  "credentials:read",
  "webhooks:read",
  "webhooks:write"
])
export type Scope = typeof Scope.Type
export const allScopes: ReadonlyArray<Scope> = Scope.literals

export const Environment = Schema.Literals(["live", "test"])
export type Environment = typeof Environment.Type

/**
 * The environments a tenant-path list reads (SPEC §4, §5): a key's own, or both for a member's
 * session (`own` undefined), narrowed by the list's `environment` filter. A key that names the
 * other environment reads none (an empty page), never that environment's data.
 */
export const listedEnvironments = (
  own: Environment | undefined,
  filter: Environment | undefined
): ReadonlyArray<Environment> =>
  own === undefined
    ? filter === undefined ? Environment.literals : [filter]
    : filter === undefined || filter === own
    ? [own]
    : []

export const Role = Schema.Literals(["owner", "admin", "developer"])
export type Role = typeof Role.Type

export interface ApiKeyPrincipal {
  readonly _tag: "ApiKey"
  readonly keyId: ApiKeyId
  readonly tenantId: TenantId
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
}

export interface SessionPrincipal {
  readonly _tag: "Session"
  readonly sessionId: string
  readonly userId: UserId
  /** The user's role in the `{tenantId}` of the path, when the path has one. */
  readonly role?: Role | undefined
}

/** The API key of the current request (endpoints behind `ApiKeyAuth`). */
export class CurrentApiKey extends Context.Service<CurrentApiKey, ApiKeyPrincipal>()("etd/CurrentApiKey") {}

/** The user session of the current request (endpoints behind `SessionAuth`). */
export class CurrentSession extends Context.Service<CurrentSession, SessionPrincipal>()("etd/CurrentSession") {}

/** Either principal, for endpoints a member's session and any key of the tenant may both read. */
export class CurrentPrincipal
  extends Context.Service<CurrentPrincipal, ApiKeyPrincipal | SessionPrincipal>()("etd/CurrentPrincipal")
{}

/**
 * Whose data a request on a tenant's path reaches (SPEC §4, §5): an API key's tenant in the key's
 * environment, or a member's session's tenant in both (`environment` undefined). The middleware has
 * already matched the path's tenant and checked the scope or the role.
 */
export interface TenantReach {
  readonly tenantId: TenantId
  readonly environment?: Environment | undefined
}

/**
 * The `{tenantId}` of a tenant's path, as a handler's `params` hold it: validated by its
 * `TenantIdParam` schema, and the tenant of the caller's key or one its session's user is a member
 * of, or the middleware would have answered 404.
 */
export const pathTenant = (params: { readonly tenantId: string }): TenantId => asId("tenant", params.tenantId)

export const reachOf = (params: { readonly tenantId: string }) =>
  Effect.map(CurrentPrincipal, (principal): TenantReach =>
    principal._tag === "Session"
      ? { tenantId: pathTenant(params) }
      : { tenantId: principal.tenantId, environment: principal.environment })

/**
 * Endpoint annotations read by the authentication middleware: the scope a key needs, and the
 * roles a member's session needs on the `{tenantId}` of the path.
 */
export class RequiredScope extends Context.Service<RequiredScope, Scope>()("etd/RequiredScope") {}
export class RequiredRoles extends Context.Service<RequiredRoles, ReadonlyArray<Role>>()("etd/RequiredRoles") {}

/** Who may change a tenant's settings (members, keys, credentials) in the dashboard. */
export const managerRoles: ReadonlyArray<Role> = ["owner", "admin"]
/** Every member; developers are read-only in the dashboard, so they get the reads. */
export const memberRoles: ReadonlyArray<Role> = ["owner", "admin", "developer"]
