/**
 * Who is calling. Authentication middleware provides one of these; handlers read it.
 */
import { Context, Schema } from "effect"

export const Scope = Schema.Literal(
  "documents:read",
  "documents:write",
  "documents:cancel",
  "credentials:read",
  "webhooks:read",
  "webhooks:write"
)
export type Scope = typeof Scope.Type
export const allScopes: ReadonlyArray<Scope> = Scope.literals

export const Environment = Schema.Literal("live", "test")
export type Environment = typeof Environment.Type

export const Role = Schema.Literal("owner", "admin", "developer")
export type Role = typeof Role.Type

export interface ApiKeyPrincipal {
  readonly _tag: "ApiKey"
  readonly keyId: string
  readonly tenantId: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
}

export interface SessionPrincipal {
  readonly _tag: "Session"
  readonly sessionId: string
  readonly userId: string
  /** The user's role in the `{tenantId}` of the path, when the path has one. */
  readonly role?: Role | undefined
}

/** The API key of the current request (endpoints behind `ApiKeyAuth`). */
export class CurrentApiKey extends Context.Tag("etd/CurrentApiKey")<CurrentApiKey, ApiKeyPrincipal>() {}

/** The user session of the current request (endpoints behind `SessionAuth`). */
export class CurrentSession extends Context.Tag("etd/CurrentSession")<CurrentSession, SessionPrincipal>() {}

/** Either principal, for endpoints a member's session and any key of the tenant may both read. */
export class CurrentPrincipal extends Context.Tag("etd/CurrentPrincipal")<
  CurrentPrincipal,
  ApiKeyPrincipal | SessionPrincipal
>() {}

/**
 * Endpoint annotations read by the authentication middleware: the scope a key needs, and the
 * roles a member's session needs on the `{tenantId}` of the path.
 */
export class RequiredScope extends Context.Tag("etd/RequiredScope")<RequiredScope, Scope>() {}
export class RequiredRoles extends Context.Tag("etd/RequiredRoles")<RequiredRoles, ReadonlyArray<Role>>() {}
