import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL,
      email_normalized text NOT NULL UNIQUE,
      name text,
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE tenants (
      id text PRIMARY KEY,
      name text NOT NULL,
      tax_id text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'past_due', 'suspended')),
      plan text NOT NULL DEFAULT 'free',
      monthly_quota integer NOT NULL CHECK (monthly_quota >= 0),
      created_at timestamptz NOT NULL
    )`
  // A CNPJ/CPF is one taxpayer at the authority, whose numbering and submission ids are keyed by
  // it: two tenants with the same tax id would collide there.
  yield* sql`CREATE UNIQUE INDEX tenants_tax_id ON tenants (tax_id)`
  yield* sql`
    CREATE TABLE memberships (
      tenant_id text NOT NULL REFERENCES tenants (id),
      user_id text NOT NULL REFERENCES users (id),
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer')),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, user_id)
    )`
  yield* sql`CREATE INDEX memberships_by_user ON memberships (user_id, tenant_id)`
  yield* sql`
    CREATE TABLE sessions (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id),
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      name text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      scopes jsonb NOT NULL,
      token_hash text NOT NULL UNIQUE,
      hint text NOT NULL,
      created_by text REFERENCES users (id),
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      expires_at timestamptz,
      revoked_at timestamptz,
      replaced_by text REFERENCES api_keys (id)
    )`
  yield* sql`CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, id)`
  yield* sql`
    CREATE TABLE quota_usage (
      tenant_id text NOT NULL REFERENCES tenants (id),
      period text NOT NULL,
      used integer NOT NULL DEFAULT 0 CHECK (used >= 0),
      PRIMARY KEY (tenant_id, period)
    )`
  yield* sql`
    CREATE TABLE security_alerts (
      id bigserial PRIMARY KEY,
      kind text NOT NULL,
      tenant_id text REFERENCES tenants (id),
      api_key_id text REFERENCES api_keys (id),
      detail text NOT NULL,
      created_at timestamptz NOT NULL
    )`
})
