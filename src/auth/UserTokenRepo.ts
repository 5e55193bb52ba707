/**
 * SQL for `user_tokens`: the one-time tokens of e-mail verification and password reset links. Only
 * a token's SHA-256 is stored. A token is good once, before it expires, and only while it is its
 * user's newest of its purpose: issuing a new one uses up the older ones.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeRows, repository } from "../db/Repository.js"
import { UserId } from "../domain/Ids.js"

export type TokenPurpose = "email_verification" | "password_reset"

const consumed = decodeRows(Schema.Struct({ userId: UserId }))

export class UserTokenRepo extends Context.Service<UserTokenRepo>()("etd/UserTokenRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Stores a new token of `purpose` for the user; the user's older open ones of that purpose are used up. */
    const issue = (token: {
      readonly id: string
      readonly userId: UserId
      readonly purpose: TokenPurpose
      readonly tokenHash: string
      readonly createdAt: Date
      readonly expiresAt: Date
    }) =>
      Effect.andThen(
        sql`
          UPDATE user_tokens SET used_at = ${token.createdAt}
          WHERE user_id = ${token.userId} AND purpose = ${token.purpose} AND used_at IS NULL`,
        sql`INSERT INTO user_tokens ${sql.insert(token)}`
      ).pipe(Effect.asVoid)

    /**
     * Uses up the token with this hash if it is open, of `purpose` and not expired, returning whose
     * it was; one statement, so two uses at once cannot both succeed.
     */
    const consume = (tokenHash: string, purpose: TokenPurpose, at: Date) =>
      consumed(sql`
        UPDATE user_tokens SET used_at = ${at}
        WHERE token_hash = ${tokenHash} AND purpose = ${purpose} AND used_at IS NULL AND expires_at > ${at}
        RETURNING user_id`).pipe(Effect.map((rows) => rows[0]?.userId))

    return repository("UserTokenRepo", { issue, consume })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
