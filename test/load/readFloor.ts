/**
 * The floor of the read benchmark (read.bench.ts): `GET /v1/tenants/{tenantId}` with an API key,
 * served by plain `node:http` and `pg` doing what the service does for that read and nothing more:
 * the same token checks, the same two statements one after the other (the key by its token's
 * SHA-256, then the tenant with the month's usage: src/keys/KeyRepo.ts findByTokenHash,
 * src/tenants/TenantRepo.ts findById), and the same JSON. What the service spends above this is the
 * framework's and our own per-request work.
 *
 * FLOOR_PREPARED=1 sends the statements as named prepared statements (pg's `{ name, text, values }`:
 * parsed once per connection), as the service's client does by default (src/db/Database.ts); without
 * it each statement is parsed on every execution, as behind a transaction-mode pooler.
 *
 * The benchmark starts it as a child process with plain `node` (Node strips the types; it imports
 * nothing of ours), as the service runs from dist/ with no loader, so neither shares an event loop
 * with the load generator.
 *
 * Environment: DATABASE_URL, PORT, POOL_MAX (the connections the service has for requests),
 * FLOOR_PREPARED.
 */
import { createHash } from "node:crypto"
import { createServer, type ServerResponse } from "node:http"
import pg from "pg"

const BEARER = /^Bearer +([^\s]+)$/i
const API_KEY = /^etd_(live|test)_[a-z2-7]{32}$/
const TENANT_PATH = /^\/v1\/tenants\/([^/?#]+)(?:\?.*)?$/

// The columns the service reads: the row's width is part of the work.
const KEY_BY_HASH = `
  SELECT id, tenant_id, name, environment, scopes, hint, created_at, last_used_at, expires_at, revoked_at, replaced_by
  FROM api_keys WHERE token_hash = $1`
const TENANT_BY_ID = `
  SELECT t.id, t.name, t.tax_id, t.verified,
    EXISTS (SELECT 1 FROM tenants o WHERE o.tax_id = t.tax_id AND o.verified AND o.id <> t.id) AS verified_by_another,
    t.status, t.plan, t.monthly_quota, t.simples_nacional, t.registration,
    t.note_mail_enabled, t.note_mail_sender_name, t.created_at, q.used
  FROM tenants t
  LEFT JOIN quota_usage q ON q.tenant_id = t.id AND q.period = $2
  WHERE t.id = $1`

interface KeyRow {
  readonly tenant_id: string
  readonly expires_at: Date | null
  readonly revoked_at: Date | null
}

interface TenantRow {
  readonly id: string
  readonly name: string
  readonly tax_id: string
  readonly verified: boolean
  readonly verified_by_another: boolean
  readonly status: string
  readonly plan: string
  readonly monthly_quota: number
  readonly simples_nacional: string
  readonly registration: { readonly address?: object | null } | null
  readonly note_mail_enabled: boolean
  readonly note_mail_sender_name: string | null
  readonly created_at: Date
  readonly used: number | null
}

const PREPARED = process.env["FLOOR_PREPARED"] === "1"
/** A statement as pg sends it: named (prepared once per connection) or not. */
const statement = (name: string, text: string, values: Array<unknown>) =>
  PREPARED ? { name, text, values } : { text, values }

/** Every registration field is shown, null when not declared (src/tenants/TenantRepo.ts). */
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

const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"], max: Number(process.env["POOL_MAX"] ?? 20) })
// An idle connection the server drops must not end the process; the next query opens another.
pool.on("error", () => {})

const send = (response: ServerResponse, status: number, value: unknown) => {
  const body = JSON.stringify(value)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(
    body
  )
}

const refuse = (response: ServerResponse, status: number, code: string) => send(response, status, { code })

const server = createServer((request, response) => {
  const url = request.url ?? "/"
  if (url === "/healthz") return send(response, 200, { status: "ok" })
  const tenantId = request.method === "GET" ? TENANT_PATH.exec(url)?.[1] : undefined
  if (tenantId === undefined) return refuse(response, 404, "not_found")
  const token = BEARER.exec(request.headers.authorization ?? "")?.[1]
  if (token === undefined) return refuse(response, 401, "missing_credentials")
  if (!API_KEY.test(token)) return refuse(response, 401, "invalid_api_key")
  const tokenHash = createHash("sha256").update(token).digest("hex")
  void (async () => {
    const key = (await pool.query<KeyRow>(statement("key_by_hash", KEY_BY_HASH, [tokenHash]))).rows[0]
    if (key === undefined) return refuse(response, 401, "invalid_api_key")
    const at = new Date()
    if (key.revoked_at !== null) return refuse(response, 401, "api_key_revoked")
    if (key.expires_at !== null && key.expires_at <= at) return refuse(response, 401, "api_key_expired")
    // Another tenant's id: the same 404 as an unknown one.
    if (key.tenant_id !== tenantId) return refuse(response, 404, "not_found")
    const period = at.toISOString().slice(0, 7)
    const tenant = (await pool.query<TenantRow>(statement("tenant_by_id", TENANT_BY_ID, [tenantId, period]))).rows[0]
    if (tenant === undefined) return refuse(response, 404, "not_found")
    send(response, 200, {
      id: tenant.id,
      object: "tenant",
      name: tenant.name,
      tax_id: tenant.tax_id,
      verified: tenant.verified,
      tax_id_status: tenant.verified ? "verified" : tenant.verified_by_another ? "verified_by_another" : "unverified",
      status: tenant.status,
      plan: tenant.plan,
      quota: { period, limit: tenant.monthly_quota, used: tenant.used ?? 0 },
      simples_nacional: tenant.simples_nacional,
      registration: {
        ...EMPTY_REGISTRATION,
        ...tenant.registration,
        address: tenant.registration?.address == null ? null : { complement: null, ...tenant.registration.address }
      },
      note_mail: { enabled: tenant.note_mail_enabled, sender_name: tenant.note_mail_sender_name },
      created_at: tenant.created_at.toISOString()
    })
  })().catch(() => {
    if (!response.headersSent) refuse(response, 500, "internal_error")
  })
})

server.listen(Number(process.env["PORT"] ?? 0), "127.0.0.1")

process.once("SIGTERM", () => {
  server.close()
  server.closeAllConnections()
  void pool.end().finally(() => process.exit(0))
})
