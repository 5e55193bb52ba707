/**
 * The auth module's side of the tenants' `UserDirectory`: members are registered users, looked up
 * here so the tenants module never reads the `users` table.
 */
import { Effect, Layer, Option } from "effect"
import { UserDirectory } from "../tenants/UserDirectory.js"
import { toPublicUser, UserRepo } from "./UserRepo.js"

export const UserDirectoryLive = Layer.effect(
  UserDirectory,
  Effect.gen(function*() {
    const users = yield* UserRepo
    return UserDirectory.of({
      findByEmail: (email) =>
        Effect.map(users.findByEmail(email), Option.map((user) => ({ id: user.id, user: toPublicUser(user) }))),
      findByIds: (ids) => Effect.map(users.findByIds(ids), (found) => found.map(toPublicUser)),
      emailVerified: users.isVerified
    })
  })
).pipe(Layer.provide(UserRepo.layer))
