import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Credentials vault (SPEC §8) and the payment provider's webhook (SPEC §10). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // `envelope` is the only place the key material lives: `v1:<master key id>:<wrapped data key>:<ciphertext>`
  // (src/credentials/Envelope.ts). `master_key_id` repeats the envelope's key id so a rotation can
  // find what still needs re-wrapping with an index instead of parsing every row.
  yield* sql`
    CREATE TABLE credentials (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      kind text NOT NULL CHECK (kind IN ('a1_certificate')),
      subject text NOT NULL,
      issuer text NOT NULL,
      serial_number text NOT NULL,
      tax_id text NOT NULL,
      not_before timestamptz NOT NULL,
      not_after timestamptz NOT NULL,
      fingerprint_sha256 text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'expired', 'replaced')),
      envelope text NOT NULL,
      master_key_id text NOT NULL,
      -- The last \`credential.expiring\` warning recorded, in days before not_after (30, 7, 1). Warnings
      -- only ever go down, so this one number says which were sent; null = none yet.
      last_expiry_warning_days integer,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  // At most one active credential per tenant: two concurrent uploads cannot both stay active.
  yield* sql`CREATE UNIQUE INDEX credentials_one_active ON credentials (tenant_id) WHERE status = 'active'`
  yield* sql`CREATE INDEX credentials_by_tenant ON credentials (tenant_id, id)`
  yield* sql`CREATE INDEX credentials_active_by_expiry ON credentials (not_after) WHERE status = 'active'`
  yield* sql`CREATE INDEX credentials_by_master_key ON credentials (master_key_id)`

  // One row per accepted `webhook-id`, inserted in the transaction of the change it causes.
  yield* sql`
    CREATE TABLE payment_provider_events (
      webhook_id text PRIMARY KEY,
      event_id text,
      type text NOT NULL,
      tenant_id text,
      outcome text NOT NULL,
      received_at timestamptz NOT NULL
    )`
  // The provider's time of the last billing event applied, so an older event delivered late
  // (retries are not ordered) cannot undo a newer one.
  yield* sql`ALTER TABLE tenants ADD COLUMN billing_event_at timestamptz`
})
