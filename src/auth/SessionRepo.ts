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

    return { insert, findByTokenHash, revoke } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
