import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"

export interface SessionRow {
  readonly id: string
  readonly userId: string
  readonly expiresAt: Date
  readonly revokedAt: Date | null
}

export class SessionRepo extends Context.Service<SessionRepo>()("etd/SessionRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (session: { id: string; userId: string; tokenHash: string; createdAt: Date; expiresAt: Date }) =>
      sql`INSERT INTO sessions ${sql.insert(session)}`.pipe(Effect.asVoid, Effect.withSpan("SessionRepo.insert"))

    const findByTokenHash = (tokenHash: string) =>
      sql<SessionRow>`SELECT id, user_id, expires_at, revoked_at FROM sessions WHERE token_hash = ${tokenHash}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("SessionRepo.findByTokenHash")
      )

    const revoke = (id: string, at: Date) =>
      sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(
        Effect.asVoid,
        Effect.withSpan("SessionRepo.revoke")
      )

    /** Revokes the live session with this token hash, if any, returning which one it was. */
    const revokeByTokenHash = (tokenHash: string, at: Date) =>
      sql<{ id: string; userId: string }>`
        UPDATE sessions SET revoked_at = ${at}
        WHERE token_hash = ${tokenHash} AND revoked_at IS NULL
        RETURNING id, user_id`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("SessionRepo.revokeByTokenHash")
      )

    return { insert, findByTokenHash, revoke, revokeByTokenHash } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
