/** SQL for `users`. Emails are unique once normalized; the address is kept as the user typed it. */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { isUniqueViolation } from "../db/errors.js"
import { decodeRows, repository } from "../db/Repository.js"
import { Conflict } from "../domain/Errors.js"
import { UserId } from "../domain/Ids.js"
import { normalizeEmail, PublicUser } from "../domain/User.js"

/** A user as others may see it (no password hash), camelCase as the SQL client maps result names. */
const UserProfile = Schema.Struct({
  id: UserId,
  email: Schema.String,
  name: Schema.NullOr(Schema.String),
  emailVerifiedAt: Schema.NullOr(Schema.Date),
  createdAt: Schema.Date
})
export type UserProfile = typeof UserProfile.Type

/** A row of `users`. */
const UserRecord = Schema.Struct({ ...UserProfile.fields, passwordHash: Schema.String })
export type UserRecord = typeof UserRecord.Type

/** The one mapping from a stored user to the API's. */
export const toPublicUser = (user: UserProfile) =>
  new PublicUser({
    id: user.id,
    email: user.email,
    name: user.name,
    email_verified: user.emailVerifiedAt !== null,
    created_at: user.createdAt
  })

const users = decodeRows(UserRecord)
const profiles = decodeRows(UserProfile)

export class UserRepo extends Context.Service<UserRepo>()("etd/UserRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (user: UserRecord) =>
      sql`INSERT INTO users ${sql.insert({ ...user, emailNormalized: normalizeEmail(user.email) })}`.pipe(
        Effect.asVoid,
        // The id is fresh, so the only unique value that can be taken is the normalized email.
        Effect.catchIf(
          (error) => isUniqueViolation(error),
          () =>
            Effect.fail(
              new Conflict({
                message: "A user with this email already exists.",
                issues: [{ path: ["email"], message: "is already registered" }]
              })
            )
        )
      )

    const findByEmail = (email: string) =>
      users(sql`
        SELECT id, email, name, password_hash, email_verified_at, created_at FROM users
        WHERE email_normalized = ${normalizeEmail(email)}`).pipe(Effect.map(Arr.head))

    const findById = (id: UserId) =>
      profiles(sql`SELECT id, email, name, email_verified_at, created_at FROM users WHERE id = ${id}`).pipe(
        Effect.map(Arr.head)
      )

    /** The users with these ids, in no particular order; unknown ids are left out. */
    const findByIds = (ids: ReadonlyArray<UserId>) => (ids.length === 0
      ? Effect.succeed([])
      : profiles(sql`SELECT id, email, name, email_verified_at, created_at FROM users WHERE id IN ${sql.in(ids)}`))

    /** Marks the address proven, keeping the first proof's time. */
    const markVerified = (id: UserId, at: Date) =>
      sql`UPDATE users SET email_verified_at = COALESCE(email_verified_at, ${at}) WHERE id = ${id}`.pipe(
        Effect.asVoid
      )

    const isVerified = (id: UserId) =>
      sql<{ verified: boolean }>`SELECT email_verified_at IS NOT NULL AS verified FROM users WHERE id = ${id}`.pipe(
        Effect.map((rows) => rows[0]?.verified === true)
      )

    const setPasswordHash = (id: UserId, passwordHash: string) =>
      sql`UPDATE users SET password_hash = ${passwordHash} WHERE id = ${id}`.pipe(Effect.asVoid)

    return repository("UserRepo", {
      insert,
      findByEmail,
      findById,
      findByIds,
      markVerified,
      isVerified,
      setPasswordHash
    })
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps
}
