import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Invitations (SPEC §5): members join by accepting, no longer by being added. Only the SHA-256 of a
 * link's token is kept, and only while the invitation can still be accepted (cleared once it is
 * accepted, revoked, declined or replaced); a resend replaces it. `expired` is stored only when a new
 * invitation replaces a lapsed one; otherwise it is read from `expires_at`.
 *
 * At most one pending invitation per tenant and address: a second invite is a conflict (resend
 * instead), and two racing invites cannot both land.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE invitations (
      id text PRIMARY KEY,
      tenant_id text NOT NULL REFERENCES tenants (id),
      email text NOT NULL,
      email_normalized text NOT NULL,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer')),
      locale text NOT NULL CHECK (locale IN ('pt-BR', 'en')),
      invited_by text NOT NULL REFERENCES users (id),
      token_hash text UNIQUE,
      status text NOT NULL CHECK (status IN ('pending', 'accepted', 'revoked', 'declined', 'expired')),
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      accepted_at timestamptz,
      accepted_by text REFERENCES users (id),
      revoked_at timestamptz,
      declined_at timestamptz
    )`
  yield* sql`
    CREATE UNIQUE INDEX invitations_one_pending ON invitations (tenant_id, email_normalized)
    WHERE status = 'pending'`
  yield* sql`CREATE INDEX invitations_by_tenant ON invitations (tenant_id, id)`
  yield* sql`CREATE INDEX invitations_pending_by_email ON invitations (email_normalized, id) WHERE status = 'pending'`
})
