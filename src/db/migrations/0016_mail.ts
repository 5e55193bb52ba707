import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Outgoing mail on the shared leased queue, e-mail verification and password reset.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // Null until the user proved they read the mailbox (a verification or reset link).
  yield* sql`ALTER TABLE users ADD COLUMN email_verified_at timestamptz`

  // One mail per row. The payload (address, link with its one-time token) is sealed under the
  // credentials master key and erased once the mail is sent or given up; `recipient_key` is a hash
  // of the address, the queue's fairness group, so one mailbox cannot hold every sender.
  yield* sql`
    CREATE TABLE mail_jobs (
      id text PRIMARY KEY,
      recipient_key text NOT NULL,
      template text NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
      payload text,
      attempts integer NOT NULL DEFAULT 0,
      run_at timestamptz NOT NULL,
      locked_by text,
      locked_until timestamptz,
      last_error text,
      sent_at timestamptz,
      traceparent text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX mail_jobs_walk ON mail_jobs (recipient_key, run_at, id) WHERE state = 'pending'`
  yield* sql`
    CREATE INDEX mail_jobs_leased ON mail_jobs (recipient_key, locked_until)
    WHERE state = 'pending' AND locked_until IS NOT NULL`

  // One-time links: only the token's SHA-256 is kept. A token is good once, until it expires, and
  // only while it is the user's newest of its purpose (issuing one uses up the older ones).
  yield* sql`
    CREATE TABLE user_tokens (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id),
      purpose text NOT NULL CHECK (purpose IN ('email_verification', 'password_reset')),
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`CREATE INDEX user_tokens_open ON user_tokens (user_id, purpose) WHERE used_at IS NULL`
})
