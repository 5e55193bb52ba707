/**
 * The framework floor of the read benchmark (read.bench.ts): `GET /v1/tenants/{tenantId}` with an
 * API key, written the way the service is written but with nothing of the service's own: an Effect
 * `HttpApi` contract with one endpoint, a bearer middleware that looks the key and its tenant up in
 * one prepared statement through `@effect/sql-pg` (the service's statement, src/keys/KeyRepo.ts) and
 * checks the row inline, a handler that returns the tenant, and the response encoded by its Schema.
 * No access log, metrics, tracing, request guards, rate limits or policy table.
 *
 * What the service spends above this is its own per-request work; what this spends above the plain
 * floor (readFloor.ts) is the framework's. So `service / framework` is the part of the read path the
 * service can still win back, and `framework / floor-prepared` the part it cannot without changing
 * the framework.
 *
 * Started by the benchmark as a child process with plain `node` (Node strips the types); it imports
 * Effect's packages, not our bundle. Environment: DATABASE_URL, PORT, POOL_MAX.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity
} from "effect/http-api"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { createServer } from "node:http"

const API_KEY = /^etd_(live|test)_[a-z2-7]{32}$/

// The service's statement (src/keys/KeyRepo.ts KEY_WITH_TENANT).
const KEY_WITH_TENANT = `
  SELECT k.environment AS "keyEnvironment", k.expires_at AS "keyExpiresAt", k.revoked_at AS "keyRevokedAt",
    t.id, t.name, t.tax_id AS "taxId", t.verified,
    EXISTS (SELECT 1 FROM tenants o WHERE o.tax_id = t.tax_id AND o.verified AND o.id <> t.id)
      AS "taxIdVerifiedByAnother",
    t.status, t.plan, t.monthly_quota AS "monthlyQuota", t.simples_nacional AS "simplesNacional",
    t.registration, t.note_mail_enabled AS "noteMailEnabled", t.note_mail_sender_name AS "noteMailSenderName",
    t.created_at AS "createdAt", q.used
  FROM api_keys k
  JOIN tenants t ON t.id = k.tenant_id
  LEFT JOIN quota_usage q ON q.tenant_id = t.id AND q.period = $2
  WHERE k.token_hash = $1`

interface TenantRow {
  readonly keyExpiresAt: Date | null
  readonly keyRevokedAt: Date | null
  readonly id: string
  readonly name: string
  readonly taxId: string
  readonly verified: boolean
  readonly taxIdVerifiedByAnother: boolean
  readonly status: string
  readonly plan: string
  readonly monthlyQuota: number
  readonly simplesNacional: string
  readonly registration: { readonly address?: object | null } | null
  readonly noteMailEnabled: boolean
  readonly noteMailSenderName: string | null
  readonly createdAt: Date
  readonly used: number | null
}

class Refused extends Schema.TaggedError<Refused>()("Refused", { code: Schema.String }, { httpApiStatus: 401 }) {}
class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { code: Schema.String }, { httpApiStatus: 404 }) {}

class AuthenticatedTenant
  extends Context.Service<AuthenticatedTenant, { readonly row: TenantRow; readonly period: string }>()(
    "AuthenticatedTenant"
  )
{}

class KeyAuth extends HttpApiMiddleware.Service<KeyAuth, { provides: AuthenticatedTenant }>()("KeyAuth", {
  error: [Refused, NotFound],
  security: { apiKey: HttpApiSecurity.bearer }
}) {}

const Nullable = Schema.NullOr(Schema.String)
const Tenant = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("tenant"),
  name: Schema.String,
  tax_id: Schema.String,
  verified: Schema.Boolean,
  tax_id_status: Schema.Literals(["verified", "verified_by_another", "unverified"]),
  status: Schema.String,
  plan: Schema.String,
  quota: Schema.Struct({ period: Schema.String, limit: Schema.Number, used: Schema.Number }),
  simples_nacional: Schema.String,
  registration: Schema.Struct({
    legal_name: Nullable,
    trade_name: Nullable,
    municipal_registration: Nullable,
    state_registration: Nullable,
    address: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
    phone: Nullable,
    email: Nullable,
    simples_nacional_apportionment: Nullable,
    special_regime: Nullable,
    crt: Nullable
  }),
  note_mail: Schema.Struct({ enabled: Schema.Boolean, sender_name: Nullable }),
  created_at: Schema.Date
})

const FloorApi = HttpApi.make("floor").add(
  HttpApiGroup.make("tenants").add(
    HttpApiEndpoint.get("get", "/tenants/:tenantId", {
      params: { tenantId: Schema.String },
      success: Tenant,
      error: NotFound
    }).middleware(KeyAuth)
  ).prefix("/v1")
)

/** Every registration field is shown, null when not declared (as the service and readFloor.ts do). */
const EMPTY_REGISTRATION = {
  legal_name: null,
  trade_name: null,
  municipal_registration: null,
  state_registration: null,
  address: null,
  phone: null,
  email: null,
  simples_nacional_apportionment: null,
  special_regime: null,
  crt: null
}

const KeyAuthLive = Layer.effect(
  KeyAuth,
  Effect.map(SqlClient.SqlClient, (sql) =>
    KeyAuth.of({
      apiKey: (httpEffect, { credential }) => {
        const token = Redacted.value(credential)
        if (!API_KEY.test(token)) return Effect.fail(new Refused({ code: "invalid_api_key" }))
        const at = new Date()
        const period = at.toISOString().slice(0, 7)
        const tokenHash = createHash("sha256").update(token).digest("hex")
        return Effect.flatMap(
          Effect.orDie(sql.unsafe<TenantRow>(KEY_WITH_TENANT, [tokenHash, period])),
          ([row]): ReturnType<KeyAuth["Service"]["apiKey"]> => {
            if (row === undefined) return Effect.fail(new Refused({ code: "invalid_api_key" }))
            if (row.keyRevokedAt !== null) return Effect.fail(new Refused({ code: "api_key_revoked" }))
            if (row.keyExpiresAt !== null && row.keyExpiresAt <= at) {
              return Effect.fail(new Refused({ code: "api_key_expired" }))
            }
            return Effect.provideService(httpEffect, AuthenticatedTenant, { row, period })
          }
        )
      }
    }))
)

const TenantsLive = HttpApiBuilder.group(
  FloorApi,
  "tenants",
  (handlers) =>
    handlers.handle("get", ({ params }) =>
      Effect.flatMap(AuthenticatedTenant, ({ period, row }) =>
        // Another tenant's id: the same 404 as an unknown one.
        row.id !== params.tenantId ? Effect.fail(new NotFound({ code: "not_found" })) : Effect.succeed({
          id: row.id,
          object: "tenant" as const,
          name: row.name,
          tax_id: row.taxId,
          verified: row.verified,
          tax_id_status: row.verified
            ? "verified" as const
            : row.taxIdVerifiedByAnother
            ? "verified_by_another" as const
            : "unverified" as const,
          status: row.status,
          plan: row.plan,
          quota: { period, limit: row.monthlyQuota, used: row.used ?? 0 },
          simples_nacional: row.simplesNacional,
          registration: {
            ...EMPTY_REGISTRATION,
            ...row.registration,
            address: row.registration?.address == null ? null : { complement: null, ...row.registration.address }
          },
          note_mail: { enabled: row.noteMailEnabled, sender_name: row.noteMailSenderName },
          created_at: row.createdAt
        })))
)

const HealthLive = HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ status: "ok" }))

const SqlLive = PgClient.layer({
  url: Redacted.make(process.env["DATABASE_URL"] ?? ""),
  maxConnections: Number(process.env["POOL_MAX"] ?? 20),
  prepare: true
})

const Main = HttpRouter.serve(
  Layer.mergeAll(
    HttpApiBuilder.layer(FloorApi).pipe(Layer.provide(TenantsLive), Layer.provide(KeyAuthLive)),
    HealthLive
  ),
  { disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env["PORT"] ?? 0), host: "127.0.0.1" })),
  Layer.provide(SqlLive)
)

NodeRuntime.runMain(Layer.launch(Main))
