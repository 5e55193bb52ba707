import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Concurrency caps in the shared queue (SPEC §11 fairness): at most so many jobs of one tenant (and
 * of one webhook endpoint) leased at once, across all instances. A claim walks the tenants (and a
 * tenant's endpoints) with pending jobs one index probe at a time, asks `etd_queue_room` how many
 * more each may lease, and takes that many of its oldest due jobs.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The walk: the next (tenant, endpoint) with pending deliveries is one probe, and a group's oldest
  // due jobs come in index order (the id breaks ties without a sort). They replace the oldest-first
  // and per-tenant indexes, which no claim reads any more.
  yield* sql`DROP INDEX webhook_deliveries_due`
  yield* sql`DROP INDEX webhook_deliveries_by_tenant`
  yield* sql`
    CREATE INDEX webhook_deliveries_walk ON webhook_deliveries (tenant_id, endpoint_id, next_attempt_at, id)
    WHERE status = 'pending'`
  yield* sql`DROP INDEX document_jobs_due`
  yield* sql`DROP INDEX document_jobs_by_tenant`
  yield* sql`CREATE INDEX document_jobs_walk ON document_jobs (tenant_id, run_at, id) WHERE state = 'pending'`

  // The leases of a tenant, or of one of its endpoints: only jobs in hand (or whose holder died and
  // whose lease has not been taken over yet) are in these indexes, so counting them never reads a
  // backlog. One per table: every index a claim writes to costs each claim (and it can no longer
  // update its row in place, as it could while no lease column was indexed).
  yield* sql`
    CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (tenant_id, endpoint_id, locked_until)
    WHERE status = 'pending' AND locked_until IS NOT NULL`
  yield* sql`
    CREATE INDEX document_jobs_leased ON document_jobs (tenant_id, locked_until)
    WHERE state = 'pending' AND locked_until IS NOT NULL`

  // How many more jobs of `tenant` (in `tenant_column`), or of its group `grp` (in `group_column`,
  // unless that is null), a claim may lease now: `cap` less the live leases.
  // Two claims on several instances must not both see the last free place, so a tenant's room is
  // counted under a lock on the tenant, held until the claim commits: claims for one tenant take
  // turns. `lock`: 'wait' for it (a claim's first tenant, while the claim holds no lock, so no two
  // claims can wait for each other), 'try' (a later tenant: one that another claim holds gets no
  // room from this one), 'held' (the claim holds the tenant's lock: for one of its groups). The
  // count runs on a fresh snapshot (VOLATILE), taken after the lock, so it sees the leases of a
  // claim that committed while the calling statement was under way (its own snapshot would not).
  // A claim that took a lock commits without waiting for its WAL flush, which it would otherwise
  // wait for holding the tenant: a claim lost in a database crash only means the job is claimed
  // again, which the queue's at-least-once handling allows.
  yield* sql`
    CREATE FUNCTION etd_queue_room(
      queue_table text, state_column text, tenant_column text, tenant text, group_column text, grp text,
      cap integer, at timestamptz, lock text
    ) RETURNS integer VOLATILE LANGUAGE plpgsql AS $$
    DECLARE
      leased integer;
    BEGIN
      IF lock = 'wait' THEN
        PERFORM pg_advisory_xact_lock(hashtext(queue_table), hashtext(tenant));
      ELSIF lock = 'try' AND NOT pg_try_advisory_xact_lock(hashtext(queue_table), hashtext(tenant)) THEN
        RETURN 0;
      END IF;
      IF lock <> 'held' THEN
        PERFORM set_config('synchronous_commit', 'off', true);
      END IF;
      IF group_column IS NULL THEN
        EXECUTE format('SELECT count(*) FROM %I WHERE %I = $1 AND %I = ''pending'' AND locked_until > $2',
          queue_table, tenant_column, state_column) INTO leased USING tenant, at;
      ELSE
        EXECUTE format('SELECT count(*) FROM %I WHERE %I = $1 AND %I = $2 AND %I = ''pending'' AND locked_until > $3',
          queue_table, tenant_column, group_column, state_column) INTO leased USING tenant, grp, at;
      END IF;
      RETURN GREATEST(cap - leased, 0);
    END $$`
})
