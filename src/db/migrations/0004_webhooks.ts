import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // The secret is stored as issued because signing needs it (a hash would not do). Encrypting it at
  // rest under the credentials master key is a planned follow-up (docs/architecture.md).
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      url text NOT NULL,
      description text,
      events jsonb NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text CHECK (disabled_reason IN ('manual', 'gone', 'failing')),
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      deleted_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE INDEX webhook_endpoints_by_tenant ON webhook_endpoints (tenant_id, environment, id DESC)
    WHERE deleted_at IS NULL`

  // One delivery per (event, endpoint): the durable queue of the WebhookDispatcher.
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text PRIMARY KEY,
      event_id text NOT NULL REFERENCES events (id),
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
      tenant_id text NOT NULL,
      environment text NOT NULL,
      event_type text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      run_attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      locked_by text,
      locked_until timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      traceparent text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (event_id, endpoint_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, id DESC)`

  yield* sql`
    CREATE TABLE webhook_delivery_attempts (
      id bigserial PRIMARY KEY,
      delivery_id text NOT NULL REFERENCES webhook_deliveries (id),
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      status_code integer,
      latency_ms integer NOT NULL,
      response_body text,
      error text
    )`
  yield* sql`CREATE INDEX webhook_delivery_attempts_by_delivery ON webhook_delivery_attempts (delivery_id, id)`
})
