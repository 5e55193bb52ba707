import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE documents (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      type text NOT NULL,
      status text NOT NULL CHECK (status IN
        ('queued', 'submitting', 'authorized', 'rejected', 'failed', 'cancel_requested', 'cancelled')),
      reference text,
      series text NOT NULL,
      number bigint NOT NULL,
      issue_date text NOT NULL,
      taker jsonb NOT NULL,
      service jsonb NOT NULL,
      amounts jsonb NOT NULL,
      notes text,
      submission_id text NOT NULL,
      authority jsonb,
      rejection jsonb,
      cancellation jsonb,
      attempts integer NOT NULL DEFAULT 0,
      last_error jsonb,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (tenant_id, environment, series, number),
      UNIQUE (tenant_id, environment, submission_id)
    )`
  // Lists are newest first within a tenant and environment, optionally by status.
  yield* sql`CREATE INDEX documents_by_tenant ON documents (tenant_id, environment, id DESC)`
  yield* sql`CREATE INDEX documents_by_status ON documents (tenant_id, environment, status, id DESC)`
  yield* sql`
    CREATE UNIQUE INDEX documents_reference ON documents (tenant_id, environment, reference)
    WHERE reference IS NOT NULL`

  // The last number handed out per series; the row lock makes numbering gap-free and atomic.
  yield* sql`
    CREATE TABLE document_series (
      tenant_id text NOT NULL REFERENCES tenants (id),
      environment text NOT NULL,
      series text NOT NULL,
      last_number bigint NOT NULL,
      PRIMARY KEY (tenant_id, environment, series)
    )`

  // The durable work queue of the issuance pipeline (submissions and cancellations).
  yield* sql`
    CREATE TABLE document_jobs (
      id bigserial PRIMARY KEY,
      document_id text NOT NULL REFERENCES documents (id),
      kind text NOT NULL CHECK (kind IN ('submit', 'cancel')),
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      first_attempt_at timestamptz,
      locked_by text,
      locked_until timestamptz,
      traceparent text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX document_jobs_due ON document_jobs (run_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX document_jobs_by_document ON document_jobs (document_id)`

  yield* sql`
    CREATE TABLE idempotency_keys (
      tenant_id text NOT NULL REFERENCES tenants (id),
      environment text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      response_status integer,
      response_body jsonb,
      claim_token text,
      locked_until timestamptz,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, environment, key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`

  // Events are written in the same transaction as the state change that causes them (outbox).
  yield* sql`
    CREATE TABLE events (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      environment text NOT NULL,
      type text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX events_by_tenant ON events (tenant_id, environment, id)`
})
