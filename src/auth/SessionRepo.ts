/** SQL for `sessions`. Only a token's SHA-256 is stored. */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { UserId } from "../domain/Ids.js"

/** What checking a session needs of its row (camelCase, as the SQL client maps result names). */
const SessionRecord = Schema.Struct({
  id: Schema.String,
  userId: UserId,
  expiresAt: Schema.Date,
  revokedAt: Schema.NullOr(Schema.Date)
})

const sessions = decodeRows(SessionRecord)
const owners = decodeRows(Schema.Struct({ id: Schema.String, userId: UserId }))

export class SessionRepo extends Context.Service<SessionRepo>()("etd/SessionRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (session: { id: string; userId: UserId; tokenHash: string; createdAt: Date; expiresAt: Date }) =>
      sql`INSERT INTO sessions ${sql.insert(session)}`.pipe(Effect.asVoid)

    const findByTokenHash = (tokenHash: string) =>
      sessions(sql`SELECT id, user_id, expires_at, revoked_at FROM sessions WHERE token_hash = ${tokenHash}`).pipe(
        Effect.map(Arr.head)
      )

    const revoke = (id: string, at: Date) =>
      sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(
        Effect.asVoid
      )

    /** Revokes the live session with this token hash, if any, returning which one it was. */
    const revokeByTokenHash = (tokenHash: string, at: Date) =>
      owners(sql`
        UPDATE sessions SET revoked_at = ${at}
        WHERE token_hash = ${tokenHash} AND revoked_at IS NULL
        RETURNING id, user_id`).pipe(Effect.map(Arr.head))

    /** Ends every live session of the user (a password reset). */
    const revokeAllOf = (userId: UserId, at: Date) =>
      sql`UPDATE sessions SET revoked_at = ${at} WHERE user_id = ${userId} AND revoked_at IS NULL`.pipe(Effect.asVoid)

    return repository("SessionRepo", { insert, findByTokenHash, revoke, revokeByTokenHash, revokeAllOf })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
