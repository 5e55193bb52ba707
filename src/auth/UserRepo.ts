import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { PublicUser } from "../tenants/Api.js"

export interface UserRow {
  readonly id: string
  readonly email: string
  readonly name: string | null
  readonly passwordHash: string
  readonly createdAt: Date
}

export const toPublicUser = (row: Pick<UserRow, "id" | "email" | "name" | "createdAt">) =>
  new PublicUser({ id: row.id, email: row.email, name: row.name, created_at: row.createdAt })

/** Emails compare case-insensitively; the address is kept as the user typed it. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase()

export class UserRepo extends Context.Service<UserRepo>()("etd/UserRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (user: Omit<UserRow, "name"> & { name: string | null }) =>
      sql`INSERT INTO users ${sql.insert({ ...user, emailNormalized: normalizeEmail(user.email) })}`.pipe(
        Effect.asVoid,
        Effect.withSpan("UserRepo.insert")
      )

    const findByEmail = (email: string) =>
      sql<UserRow>`SELECT * FROM users WHERE email_normalized = ${normalizeEmail(email)}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("UserRepo.findByEmail")
      )

    const findById = (id: string) =>
      sql<UserRow>`SELECT * FROM users WHERE id = ${id}`.pipe(
        Effect.map((rows) => Option.fromNullishOr(rows[0])),
        Effect.withSpan("UserRepo.findById")
      )

    return { insert, findByEmail, findById } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
