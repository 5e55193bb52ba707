/**
 * Accepting invitations (SPEC §5), the person's side: proving who accepts. The link's token proves
 * the mailbox; a new person registers with it (the address counts as verified, the link proved it);
 * an account that already has the address must also prove itself with its session, so a squatter
 * who registered someone else's address first gains nothing from that person's invitation. Signed
 * in, a person accepts the invitations to their own address.
 *
 * Whether the invitation still holds (pending, the inviter's right, single use) is the tenants
 * module's, checked under the tenant's lock; the account is created inside that same transaction.
 */
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { EmailUnverified, Forbidden, invalidField, InvalidSession, MissingCredentials } from "../domain/Errors.js"
import { type InvitationId, makeId, type UserId } from "../domain/Ids.js"
import { InvitationAcceptance, InvitationLookup } from "../domain/Invitation.js"
import type { PageParams } from "../domain/Pagination.js"
import { now } from "../domain/Time.js"
import { sessionTokenPattern } from "../domain/Tokens.js"
import { type Accepted, InvitationService } from "../tenants/InvitationService.js"
import { TenantService } from "../tenants/TenantService.js"
import { AuthService } from "./AuthService.js"
import { Passwords } from "./Passwords.js"
import { toPublicUser, type UserProfile, UserRepo } from "./UserRepo.js"

export interface AcceptByLink {
  readonly token: string
  readonly name?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
}

export class InvitationAcceptanceService
  extends Context.Service<InvitationAcceptanceService>()("etd/InvitationAcceptanceService", {
    make: Effect.gen(function*() {
      const auth = yield* AuthService
      const passwords = yield* Passwords
      const users = yield* UserRepo
      const invitations = yield* InvitationService
      const tenants = yield* TenantService

      const lookup = Effect.fn("InvitationAcceptance.lookup")(function*(token: string) {
        const invitation = yield* invitations.lookup(token)
        const account = yield* users.findByEmail(invitation.email)
        return new InvitationLookup({ invitation, account_exists: Option.isSome(account) })
      })

      const answer = (accepted: Accepted, user: UserProfile, session: { token: string; expiresAt: Date } | null) =>
        Effect.map(tenants.get(accepted.tenantId), (tenant) =>
          new InvitationAcceptance({
            user: toPublicUser(user),
            tenant,
            role: accepted.role,
            token: session?.token ?? null,
            expires_at: session?.expiresAt ?? null
          }))

      /** The account behind a bearer session token; `missing_credentials` without one. */
      const sessionUser = (bearer: Option.Option<string>) =>
        Effect.gen(function*() {
          if (Option.isNone(bearer)) {
            return yield* new MissingCredentials({
              message: "An account has this address: sign in to it and send its session to accept " +
                "(if its password is unknown to you, reset it by e-mail first: that also ends its other sessions)."
            })
          }
          if (!sessionTokenPattern.test(bearer.value)) return yield* new InvalidSession()
          return (yield* auth.verifySession(bearer.value)).userId
        })

      /**
       * Accepts by the link's token. Without an account for the address, registers one (`password`
       * required) and signs it in; with one, needs that account's session (`bearer`). `limit` takes
       * the invited address's share of the registration limits.
       */
      const acceptByLink = <E, R>(
        input: AcceptByLink,
        bearer: Option.Option<string>,
        limit: (email: string) => Effect.Effect<void, E, R>
      ) =>
        Effect.gen(function*() {
          const invitation = yield* invitations.lookup(input.token)
          yield* limit(invitation.email)
          const account = yield* users.findByEmail(invitation.email)
          if (Option.isSome(account)) {
            // The account may be one that a concurrent acceptance of this very link just created (in
            // the transaction that used the link): the link is looked up again, so that this request
            // is told the link is spent, not asked to sign in to an account it did not make.
            yield* invitations.lookup(input.token)
            const userId = yield* sessionUser(bearer)
            if (userId !== account.value.id) {
              return yield* new Forbidden({
                message: "This invitation is for another account's address: sign in to that account to accept it."
              })
            }
            const accepted = yield* invitations.acceptByToken(
              input.token,
              // The link proves the mailbox and the session the account: the address is now verified too.
              () => Effect.as(Effect.flatMap(now, (at) => users.markVerified(account.value.id, at)), account.value.id)
            )
            return yield* answer(accepted, Option.getOrThrow(yield* users.findById(account.value.id)), null)
          }
          if (input.password === undefined) {
            return yield* invalidField(["password"], "a new account needs a password of at least 12 characters")
          }
          // Hashed before the transaction: the KDF is slow and must not hold a connection.
          const passwordHash = yield* passwords.hash(input.password)
          const createdAt = yield* now
          // The link proved the mailbox: the address is verified from the start, no verification mail.
          const user: UserProfile = {
            id: yield* makeId("user"),
            email: invitation.email,
            name: input.name ?? null,
            emailVerifiedAt: createdAt,
            createdAt
          }
          const accepted = yield* invitations.acceptByToken(
            input.token,
            () => Effect.as(users.insert({ ...user, passwordHash }), user.id)
          )
          const session = yield* auth.openSession(user)
          return yield* answer(accepted, user, { token: session.token, expiresAt: session.expires_at })
        }).pipe(Effect.withSpan("InvitationAcceptance.acceptByLink"))

      /**
       * The signed-in user, whose address the invitations must name: verified (`403 email_unverified`
       * otherwise), or whoever registered someone else's address first would be handed their invitations.
       */
      const profile = (userId: UserId) =>
        Effect.flatMap(
          // A session always belongs to an existing user; users are never deleted.
          Effect.map(users.findById(userId), Option.getOrThrow),
          (user) => user.emailVerifiedAt === null ? Effect.fail(new EmailUnverified()) : Effect.succeed(user)
        )

      const listMine = Effect.fn("InvitationAcceptance.listMine")(function*(userId: UserId, page: PageParams) {
        const user = yield* profile(userId)
        return yield* invitations.listFor(user.email, page)
      })

      const acceptMine = Effect.fn("InvitationAcceptance.acceptMine")(function*(userId: UserId, id: InvitationId) {
        const user = yield* profile(userId)
        const accepted = yield* invitations.acceptById(id, user.email, userId)
        return yield* answer(accepted, user, null)
      })

      const declineMine = Effect.fn("InvitationAcceptance.declineMine")(function*(userId: UserId, id: InvitationId) {
        const user = yield* profile(userId)
        return yield* invitations.decline(id, user.email)
      })

      return { lookup, acceptByLink, listMine, acceptMine, declineMine } as const
    })
  })
{
  static readonly layerNoDeps = Layer.effect(this, this.make)
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([AuthService.layer, Passwords.layer, UserRepo.layer, TenantService.layer])
  )
}
