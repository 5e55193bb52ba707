/**
 * What every endpoint requires, read from the contract (SPEC §3-§5), and proof that the
 * authentication middleware enforces it: a key without an endpoint's scope gets 403
 * `insufficient_scope` naming the scope, on every `api_key` endpoint there is.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Api } from "../../src/Api.js"
import { ApiKeyAuth, KeyOrSessionAuth, SessionAuth } from "../../src/domain/Authentication.js"
import { idPrefixes } from "../../src/domain/Ids.js"
import {
  allScopes,
  managerRoles,
  RequiredRoles,
  RequiredScope,
  type Role,
  type Scope
} from "../../src/domain/Principal.js"
import { endpointPolicies, type EndpointPolicy, keyRefusal, policyTable, requireRole } from "../../src/keys/Policy.js"
import { addMember, expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"

const policies = endpointPolicies(Api)

/** One line per endpoint: `METHOD path  authentication  scope  roles`. */
const table = policies.map((p) =>
  [p.method, p.path, p.authentication, p.scope ?? "-", p.roles === null ? "-" : p.roles.join("|")].join("  ")
)

describe("the endpoint policy table", () => {
  it("every endpoint's authentication, scope and roles are as the SPEC requires", () => {
    expect(table).toEqual(EXPECTED_TABLE)
  })

  it("every api_key endpoint declares a scope, and only endpoints that take a key do", () => {
    for (const policy of policies) {
      if (policy.authentication === "api_key") expect(policy.scope, policy.endpoint).not.toBe(null)
      else if (policy.authentication !== "session_or_api_key") expect(policy.scope, policy.endpoint).toBe(null)
    }
  })

  it("roles are declared only where a session reaches a tenant path: writes need owner/admin, developers only read", () => {
    // Every member may leave a tenant; MemberService lets a developer remove no one else.
    const everyMember = (policy: EndpointPolicy) =>
      policy.method === "GET" || policy.endpoint === "tenants.removeMember"
    for (const policy of policies) {
      const takesSession = policy.authentication === "session" || policy.authentication === "session_or_api_key"
      if (!takesSession) expect(policy.roles, policy.endpoint).toBe(null)
      if (takesSession && policy.path.includes(":tenantId")) {
        expect(policy.roles, policy.endpoint).toEqual(
          everyMember(policy) ? ["owner", "admin", "developer"] : ["owner", "admin"]
        )
      }
    }
  })

  it("no tenant's data is public", () => {
    for (const policy of policies) {
      if (policy.path.includes(":tenantId")) expect(policy.authentication, policy.endpoint).not.toBe("public")
    }
    const publicEndpoints = policies.filter((p) => p.authentication === "public").map((p) => p.endpoint)
    expect(publicEndpoints.sort()).toEqual(EXPECTED_PUBLIC)
  })

  it("the policy table finds a policy by method and route template", () => {
    const find = Effect.runSync(policyTable(Api))
    expect(find("POST", "/v1/tenants/:tenantId/api-keys")?.endpoint).toBe("apiKeys.create")
    expect(find("GET", "/v1/tenants/:tenantId/api-keys")?.endpoint).toBe("apiKeys.list")
    expect(find("DELETE", "/v1/tenants/:tenantId/api-keys")).toBeUndefined()
    expect(find("GET", "/v1/tenants/ten_x/api-keys")).toBeUndefined()
  })
})

/** The start-up check, on small APIs: one endpoint each, annotated (or not) as given. */
describe("the policy table, checked when the server starts", () => {
  const tenantPath = "/v1/tenants/:tenantId/things"
  const params = { tenantId: Schema.String }
  const failureOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
    Effect.runSync(Effect.match(policyTable(api), { onFailure: (error) => error.message, onSuccess: () => undefined }))
  const apiWith = <G extends HttpApiGroup.Constraint>(group: G) => HttpApi.make("probe").add(group)

  it("refuses an API-key endpoint without a scope, naming it", () => {
    const api = apiWith(
      HttpApiGroup.make("things").add(HttpApiEndpoint.get("list", tenantPath, { params }).middleware(ApiKeyAuth))
    )
    expect(failureOf(api)).toBe(
      `Endpoint policies are incomplete: things.list (GET ${tenantPath}) takes an API key but declares no RequiredScope.`
    )
  })

  it("refuses a session endpoint on a tenant path without roles", () => {
    const api = apiWith(
      HttpApiGroup.make("things").add(HttpApiEndpoint.post("create", tenantPath, { params }).middleware(SessionAuth))
    )
    expect(failureOf(api)).toContain("things.create (POST /v1/tenants/:tenantId/things) takes a member's session")
  })

  it("refuses a requirement the middleware would never enforce", () => {
    const scopeOnSession = HttpApiGroup.make("things")
      .add(
        HttpApiEndpoint.get("me", "/v1/things", {}).middleware(SessionAuth).annotate(RequiredScope, "documents:read")
      )
    expect(failureOf(apiWith(scopeOnSession))).toContain("things.me (GET /v1/things) declares a RequiredScope")
    const rolesOnKey = HttpApiGroup.make("things")
      .add(
        HttpApiEndpoint.get("get", tenantPath, { params }).middleware(ApiKeyAuth).annotate(
          RequiredScope,
          "documents:read"
        ).annotate(RequiredRoles, managerRoles)
      )
    expect(failureOf(apiWith(rolesOnKey))).toContain(
      "things.get (GET /v1/tenants/:tenantId/things) declares RequiredRoles"
    )
    const rolesOffTenantPath = HttpApiGroup.make("things")
      .add(
        HttpApiEndpoint.get("mine", "/v1/things", {}).middleware(KeyOrSessionAuth).annotate(RequiredRoles, managerRoles)
      )
    expect(failureOf(apiWith(rolesOffTenantPath))).toContain("things.mine (GET /v1/things) declares RequiredRoles")
  })

  it("refuses a key-or-session endpoint on a tenant path without roles: a session's role must be checked", () => {
    const api = apiWith(
      HttpApiGroup.make("things").add(
        HttpApiEndpoint.post("create", tenantPath, { params }).middleware(KeyOrSessionAuth).annotate(
          RequiredScope,
          "webhooks:write"
        )
      )
    )
    expect(failureOf(api)).toContain("things.create (POST /v1/tenants/:tenantId/things) takes a member's session")
  })

  it("names every incomplete endpoint at once", () => {
    const api = apiWith(
      HttpApiGroup.make("things")
        .add(HttpApiEndpoint.get("list", tenantPath, { params }))
        .add(HttpApiEndpoint.post("create", tenantPath, { params }))
        .middleware(ApiKeyAuth)
    )
    expect(failureOf(api)).toMatch(/things\.list .* no RequiredScope; things\.create .* no RequiredScope\.$/)
  })

  it("accepts complete policies, group-level annotations included, and public endpoints", () => {
    const api = apiWith(
      HttpApiGroup.make("things")
        .add(
          HttpApiEndpoint.get("list", tenantPath, { params }).middleware(ApiKeyAuth).annotate(
            RequiredScope,
            "documents:read"
          )
        )
        .add(HttpApiEndpoint.get("health", "/healthz", {}))
    )
    expect(failureOf(api)).toBeUndefined()
    expect(failureOf(Api)).toBeUndefined()
  })
})

describe("authorization rules", () => {
  const failureOf = <E>(effect: Effect.Effect<void, E>) => {
    const exit = Effect.runSyncExit(effect)
    return Exit.isFailure(exit) ? exit.cause : undefined
  }
  const errorOf = <E>(effect: Effect.Effect<void, E>) => Effect.runSync(Effect.flip(effect))

  it("keyRefusal passes a granted or absent scope and names a missing one", () => {
    const refusal = (required: Scope | null, granted: ReadonlyArray<Scope>) =>
      keyRefusal(undefined, "ten_a", required, granted)
    expect(refusal(null, [])).toBeUndefined()
    expect(refusal("documents:read", ["documents:read"])).toBeUndefined()
    expect(refusal("webhooks:write", allScopes)).toBeUndefined()
    for (const scope of allScopes) {
      const error = refusal(scope, allScopes.filter((s) => s !== scope))
      expect(error?._tag).toBe("InsufficientScope")
      expect(error?.code).toBe("insufficient_scope")
      expect(error?._tag === "InsufficientScope" && error.required_scope).toBe(scope)
      expect(error?.message).toContain(scope)
    }
    // Related scopes do not stand in for each other.
    const write = refusal("documents:write", ["documents:read", "documents:cancel"])
    expect(write?._tag === "InsufficientScope" && write.required_scope).toBe("documents:write")
    const read = refusal("webhooks:read", ["webhooks:write"])
    expect(read?._tag === "InsufficientScope" && read.required_scope).toBe("webhooks:read")
  })

  it("keyRefusal passes the key's own tenant or a path without one, and is 404 otherwise, before any scope", () => {
    expect(keyRefusal(undefined, "ten_a", null, [])).toBeUndefined()
    expect(keyRefusal("ten_a", "ten_a", null, [])).toBeUndefined()
    for (const other of ["ten_b", "", "TEN_A", "ten_a "]) {
      // Another tenant's path is the 404 of an unknown tenant even when the scope is missing too,
      // so a key without the scope cannot tell other tenants' ids from unknown ones.
      for (const granted of [allScopes, []]) {
        const error = keyRefusal(other, "ten_a", "documents:read", granted)
        expect(error?._tag).toBe("NotFound")
        expect(error?.code).toBe("not_found")
      }
    }
  })

  it("requireRole passes a listed role or no requirement, and is 403 forbidden otherwise", () => {
    const ownerOrAdmin: ReadonlyArray<Role> = ["owner", "admin"]
    expect(failureOf(requireRole(null, "developer"))).toBeUndefined()
    expect(failureOf(requireRole(ownerOrAdmin, "owner"))).toBeUndefined()
    expect(failureOf(requireRole(ownerOrAdmin, "admin"))).toBeUndefined()
    const error = errorOf(requireRole(ownerOrAdmin, "developer"))
    expect(error._tag).toBe("Forbidden")
    expect(error.code).toBe("forbidden")
    expect(error.message).toContain("owner or admin")
    expect(errorOf(requireRole(["owner"], "admin"))._tag).toBe("Forbidden")
    expect(errorOf(requireRole([], "owner"))._tag).toBe("Forbidden")
  })
})

/** A well-formed id for a path parameter, from its name (`keyId` is an API key, `docId` a document, `credId` a credential…). */
const sampleParam = (name: string, tenantId: string): string => {
  if (name === "tenantId") return tenantId
  const stem = name.replace(/Id$/, "").toLowerCase()
  const prefix = Object.entries(idPrefixes).find(([kind, prefix]) =>
    prefix === stem || kind.toLowerCase().startsWith(stem) || (kind === "apiKey" && stem === "key")
  )?.[1]
  return prefix === undefined ? "x" : `${prefix}_${"0".repeat(26)}`
}

const urlOf = (path: string, tenantId: string) =>
  path.replace(/:(\w+)/g, (_, name: string) => sampleParam(name, tenantId))

type Method = "GET" | "POST" | "PATCH" | "DELETE"
const methodOf = (method: string): Method => {
  if (method === "GET" || method === "POST" || method === "PATCH" || method === "DELETE") return method
  throw new Error(`no raw request for ${method}`)
}

/** A request to an endpoint: well-formed ids in the path, an empty JSON object as the body. */
const requestFor = (policy: EndpointPolicy, tenantId: string) => {
  const method = methodOf(policy.method)
  return {
    method,
    url: urlOf(policy.path, tenantId),
    body: method === "GET" || method === "DELETE" ? undefined : {}
  }
}

const scopeOf = (policy: EndpointPolicy): Scope => {
  if (policy.scope === null) throw new Error(`${policy.endpoint} declares no scope`)
  return policy.scope
}

const apiKeyEndpoints = policies.filter((p) => p.authentication === "api_key")
/** Where a member's session reaches a tenant's path, and so its role decides. */
const sessionTenantEndpoints = policies.filter((p) =>
  (p.authentication === "session" || p.authentication === "session_or_api_key") && p.path.includes(":tenantId")
)
/** What only an owner or admin may do from a session (SPEC §5: developers are read-only). */
const managerEndpoints = sessionTenantEndpoints.filter((p) => p.roles !== null && !p.roles.includes("developer"))
/** Where a key needs a scope: every api_key endpoint, and the session-or-key ones that declare one. */
const scopedEndpoints = policies.filter((p) => p.scope !== null)

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(
    `scope enforcement (${database})`,
    (it) => {
      it.effect(`a key without the scope gets 403 insufficient_scope on each of the ${scopedEndpoints.length} endpoints that declare one`, () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const keysWithout = new Map<Scope, string>()
          for (const scope of allScopes) {
            const others = allScopes.filter((s) => s !== scope)
            keysWithout.set(scope, (yield* createKey(owner, "test", others)).token)
          }
          for (const policy of scopedEndpoints) {
            const scope = scopeOf(policy)
            const { body, method, url } = requestFor(policy, owner.tenantId)
            const response = yield* rawRequest(method, url, { token: keysWithout.get(scope)!, body })
            expectError(response, 403, "insufficient_scope")
            expect(field(response.json, "required_scope"), `${policy.endpoint} ${url}`).toBe(scope)
          }
        }))

      it.effect("a key with the scope gets past the scope check on every endpoint that declares one", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          for (const policy of scopedEndpoints) {
            const key = yield* createKey(owner, "test", [scopeOf(policy)])
            // An invalid body: whatever the answer, it is not an authentication or authorization one.
            const { body, method, url } = requestFor(policy, owner.tenantId)
            const response = yield* rawRequest(method, url, { token: key.token, body })
            expect([401, 403], `${policy.endpoint} ${url}: ${response.text}`).not.toContain(response.status)
          }
        }))

      it.effect("a key of another tenant on a tenant path is 404 before any scope check", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const other = yield* registerOwner("other")
          const foreign = yield* createKey(other, "live", allScopes)
          const scopeless = yield* createKey(other, "live", ["webhooks:read"])
          for (const policy of policies.filter((p) => p.authentication !== "public" && p.path.includes(":tenantId"))) {
            if (policy.authentication === "session") continue
            const { body, method, url } = requestFor(policy, owner.tenantId)
            for (const token of [foreign.token, scopeless.token]) {
              expectError(yield* rawRequest(method, url, { token, body }), 404, "not_found")
            }
          }
        }))

      it.effect(`a developer's session gets 403 forbidden on each of the ${managerEndpoints.length} tenant writes a session may make`, () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const developer = yield* addMember(owner, "developer")
          for (const policy of managerEndpoints) {
            const { body, method, url } = requestFor(policy, owner.tenantId)
            const response = yield* rawRequest(method, url, { token: developer.session, body })
            expectError(response, 403, "forbidden")
            expect(field(response.json, "message"), policy.endpoint).toContain("owner or admin")
          }
        }))

      it.effect("every member's session gets past the role check on every tenant read; an admin's on every write", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const developer = yield* addMember(owner, "developer")
          const admin = yield* addMember(owner, "admin")
          for (const policy of sessionTenantEndpoints) {
            const { body, method, url } = requestFor(policy, owner.tenantId)
            // (A developer's DELETE of a member is the service's to judge: only themselves.)
            const members = policy.method === "GET" ? [developer, admin] : [admin]
            for (const member of members) {
              const response = yield* rawRequest(method, url, { token: member.session, body })
              expect([401, 403], `${policy.endpoint} ${url}: ${response.text}`).not.toContain(response.status)
            }
          }
        }))

      it.effect("a session of a user who is no member gets 404 on every tenant path a session may use", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          const stranger = yield* registerOwner("stranger")
          for (const policy of sessionTenantEndpoints) {
            const { body, method, url } = requestFor(policy, owner.tenantId)
            expectError(yield* rawRequest(method, url, { token: stranger.session, body }), 404, "not_found")
          }
        }))

      it.effect("a session is not an API key: 401 on every api_key endpoint", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner()
          for (const policy of apiKeyEndpoints) {
            const { body, method, url } = requestFor(policy, owner.tenantId)
            const response = yield* rawRequest(method, url, { token: owner.session, body })
            expectError(response, 401, "invalid_api_key")
          }
        }))
    }
  )
}

const EXPECTED_PUBLIC = [
  "auth.confirmEmail",
  "auth.confirmPasswordReset",
  "auth.login",
  "auth.register",
  "auth.requestPasswordReset",
  "billing.paymentProviderWebhook",
  "invitationAcceptance.accept",
  "invitationAcceptance.lookup",
  "system.healthz",
  "system.readyz"
]

// METHOD  path  authentication  scope  roles (SPEC §3-§5). Change it only with the SPEC.
const EXPECTED_TABLE: ReadonlyArray<string> = [
  "GET  /healthz  public  -  -",
  "GET  /readyz  public  -  -",
  "POST  /v1/auth/register  public  -  -",
  "POST  /v1/auth/login  public  -  -",
  "POST  /v1/auth/logout  session  -  -",
  "GET  /v1/me  session  -  -",
  "GET  /v1/me/tenants  session  -  -",
  // The links mailed to prove a mailbox or reset a password: the token in the body is the credential.
  "POST  /v1/me/email-verification  session  -  -",
  "POST  /v1/auth/email-verification/confirm  public  -  -",
  "POST  /v1/auth/password-reset  public  -  -",
  "POST  /v1/auth/password-reset/confirm  public  -  -",
  // An invitation's link: the token in the body proves the mailbox; accepting into an existing
  // account also needs that account's session, which the service checks itself.
  "POST  /v1/invitations/lookup  public  -  -",
  "POST  /v1/invitations/accept  public  -  -",
  "GET  /v1/me/invitations  session  -  -",
  "POST  /v1/me/invitations/:invitationId/accept  session  -  -",
  "POST  /v1/me/invitations/:invitationId/decline  session  -  -",
  "GET  /v1/tenants/:tenantId  session_or_api_key  -  owner|admin|developer",
  "PATCH  /v1/tenants/:tenantId  session  -  owner|admin",
  "POST  /v1/tenants/:tenantId/members  session  -  owner|admin",
  "GET  /v1/tenants/:tenantId/members  session  -  owner|admin|developer",
  "PATCH  /v1/tenants/:tenantId/members/:userId  session  -  owner|admin",
  "DELETE  /v1/tenants/:tenantId/members/:userId  session  -  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/invitations  session  -  owner|admin",
  "GET  /v1/tenants/:tenantId/invitations  session  -  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/invitations/:invitationId/resend  session  -  owner|admin",
  "POST  /v1/tenants/:tenantId/invitations/:invitationId/revoke  session  -  owner|admin",
  "POST  /v1/tenants/:tenantId/api-keys  session  -  owner|admin",
  "GET  /v1/tenants/:tenantId/api-keys  session  -  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/api-keys/:keyId/rotate  session  -  owner|admin",
  "POST  /v1/tenants/:tenantId/api-keys/:keyId/revoke  session  -  owner|admin",
  "POST  /v1/tenants/:tenantId/documents  api_key  documents:write  -",
  "GET  /v1/tenants/:tenantId/documents  session_or_api_key  documents:read  owner|admin|developer",
  "GET  /v1/tenants/:tenantId/documents/:docId  session_or_api_key  documents:read  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/documents/:docId/cancel  session_or_api_key  documents:cancel  owner|admin",
  "POST  /v1/documents  api_key  documents:write  -",
  "GET  /v1/documents  api_key  documents:read  -",
  "GET  /v1/documents/:docId  api_key  documents:read  -",
  "POST  /v1/documents/:docId/cancel  api_key  documents:cancel  -",
  "GET  /v1/documents/:docId/xml  api_key  documents:read  -",
  "GET  /v1/documents/:docId/pdf  api_key  documents:read  -",
  // A substitute is a new note: issuing is for API keys, with documents:write (SPEC §5, §6).
  "POST  /v1/tenants/:tenantId/documents/:docId/substitute  api_key  documents:write  -",
  "POST  /v1/documents/:docId/substitute  api_key  documents:write  -",
  // A correction letter changes what the note says: documents:write, as issuing; a session as owner or admin.
  "POST  /v1/tenants/:tenantId/documents/:docId/correction  session_or_api_key  documents:write  owner|admin",
  "GET  /v1/tenants/:tenantId/documents/:docId/corrections  session_or_api_key  documents:read  owner|admin|developer",
  "POST  /v1/documents/:docId/correction  api_key  documents:write  -",
  "GET  /v1/documents/:docId/corrections  api_key  documents:read  -",
  // Voiding a series' numbers is for API keys, whose environment is the series' (as issuing).
  "POST  /v1/tenants/:tenantId/voided-numbers  api_key  documents:write  -",
  "GET  /v1/tenants/:tenantId/voided-numbers  api_key  documents:read  -",
  "GET  /v1/tenants/:tenantId/voided-numbers/:voidingId  api_key  documents:read  -",
  "POST  /v1/voided-numbers  api_key  documents:write  -",
  "GET  /v1/voided-numbers  api_key  documents:read  -",
  "GET  /v1/voided-numbers/:voidingId  api_key  documents:read  -",
  "GET  /v1/tenants/:tenantId/documents/:docId/xml  session_or_api_key  documents:read  owner|admin|developer",
  "GET  /v1/tenants/:tenantId/documents/:docId/pdf  session_or_api_key  documents:read  owner|admin|developer",
  "GET  /v1/tenants/:tenantId/usage  session  -  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/webhook-endpoints  session_or_api_key  webhooks:write  owner|admin",
  "GET  /v1/tenants/:tenantId/webhook-endpoints  session_or_api_key  webhooks:read  owner|admin|developer",
  "GET  /v1/tenants/:tenantId/webhook-endpoints/:endpointId  session_or_api_key  webhooks:read  owner|admin|developer",
  "PATCH  /v1/tenants/:tenantId/webhook-endpoints/:endpointId  session_or_api_key  webhooks:write  owner|admin",
  "DELETE  /v1/tenants/:tenantId/webhook-endpoints/:endpointId  session_or_api_key  webhooks:write  owner|admin",
  "POST  /v1/tenants/:tenantId/webhook-endpoints/:endpointId/rotate-secret  session_or_api_key  webhooks:write  owner|admin",
  "GET  /v1/tenants/:tenantId/webhook-endpoints/:endpointId/deliveries  session_or_api_key  webhooks:read  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/webhook-endpoints/:endpointId/recover  session_or_api_key  webhooks:write  owner|admin",
  "GET  /v1/tenants/:tenantId/deliveries/:deliveryId  session_or_api_key  webhooks:read  owner|admin|developer",
  "POST  /v1/tenants/:tenantId/deliveries/:deliveryId/replay  session_or_api_key  webhooks:write  owner|admin",
  "POST  /v1/tenants/:tenantId/credentials  session  -  owner|admin",
  "GET  /v1/tenants/:tenantId/credentials  session_or_api_key  credentials:read  owner|admin|developer",
  "GET  /v1/tenants/:tenantId/credentials/:credId  session_or_api_key  credentials:read  owner|admin|developer",
  "POST  /v1/webhooks/payment-provider  public  -  -"
]
