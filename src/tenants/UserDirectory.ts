/**
 * What the tenants module needs to know of users, who belong to the auth module. Tenants define
 * the port and auth implements it (src/auth/Directory.ts), so tenants never import auth.
 */
import { Context, type Effect, type Option } from "effect"
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
}>()("etd/UserDirectory") {}
