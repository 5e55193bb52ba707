/**
 * What the tenants module needs to know of users, who belong to the auth module. Tenants define
 * the port and auth implements it (src/auth/Directory.ts), so tenants never import auth.
 */
import { Context, Effect, type Option } from "effect"
import { EmailUnverified } from "../domain/Errors.js"
import type { UserId } from "../domain/Ids.js"
import type { PublicUser } from "../domain/User.js"

/** A registered user as the API shows it, with its id as the server's type (the API's `id` is a plain string). */
export interface DirectoryUser {
  readonly id: UserId
  readonly user: PublicUser
}

export class UserDirectory extends Context.Service<UserDirectory, {
  /** The registered user with this email (compared case-insensitively), if any. */
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<DirectoryUser>>
  /** The users with these ids, in no particular order; unknown ids are left out. */
  readonly findByIds: (ids: ReadonlyArray<UserId>) => Effect.Effect<ReadonlyArray<PublicUser>>
  /** Whether the user proved they read their mailbox (false for an unknown id). */
  readonly emailVerified: (id: UserId) => Effect.Effect<boolean>
}>()("etd/UserDirectory") {}

/** Fails with `403 email_unverified` unless the user proved their address (live keys, certificate uploads). */
export const requireVerifiedEmail = (id: UserId) =>
  Effect.flatMap(
    UserDirectory,
    (directory) =>
      Effect.flatMap(directory.emailVerified(id), (verified) =>
        verified ? Effect.void : Effect.fail(new EmailUnverified()))
  )
