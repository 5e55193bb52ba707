/**
 * Invitations (SPEC §5): members join a tenant by accepting, never by being added. Owners and admins
 * invite an address with a role, list, resend and revoke; the person accepts with the link's one-time
 * token, or signed in with that address verified (the auth module proves who accepts and calls
 * `accept`).
 *
 * Everything that changes an invitation runs under its tenant's row lock, like role changes and
 * removals: an acceptance sees the invitation, the inviter's role and the memberships as they are
 * once every concurrent change has landed, so a link is used once, and an inviter demoted or removed
 * meanwhile no longer vouches for it.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "../Config.js"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { Conflict, Forbidden, InvalidState, InvalidToken, NotFound } from "../domain/Errors.js"
import { type InvitationId, makeId, type TenantId, type UserId } from "../domain/Ids.js"
import { Invitation, type InvitationStatus, type NewInvitation } from "../domain/Invitation.js"
import { cursorOf, type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import type { Role } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { generateLinkToken, hashToken, invitationTokenPattern } from "../domain/Tokens.js"
import { normalizeEmail } from "../domain/User.js"
import { linkTo } from "../mail/MailConfig.js"
import { Outbox } from "../mail/Outbox.js"
import { type InvitationFilter, type InvitationRecord, InvitationRepo } from "./InvitationRepo.js"
import { memberChangeRefusal } from "./MemberRules.js"
import { TenantRepo } from "./TenantRepo.js"
import { UserDirectory } from "./UserDirectory.js"

/** Whether `granter` may hand out `role`: the members' own rule for an addition. */
const mayGrant = (granter: Role, role: Role) => memberChangeRefusal(granter, { _tag: "Add", role }) === undefined

/** What an acceptance did: who joined which tenant with which role. */
export interface Accepted {
  readonly invitationId: InvitationId
  readonly tenantId: TenantId
  readonly userId: UserId
  readonly role: Role
}

const statusAt = (record: InvitationRecord, at: Date): InvitationStatus =>
  record.status === "pending" && record.expiresAt <= at ? "expired" : record.status

const open = (record: InvitationRecord, at: Date) => statusAt(record, at) === "pending"

export class InvitationService extends Context.Service<InvitationService>()("etd/InvitationService", {
  make: Effect.gen(function*() {
    const repo = yield* InvitationRepo
    const tenants = yield* TenantRepo
    const directory = yield* UserDirectory
    const config = yield* AppConfig
    const outbox = yield* Outbox
    const inTransaction = yield* makeTransaction

    const expiry = (at: Date) => new Date(at.getTime() + Duration.toMillis(config.invitationTtl))

    /** The API's invitations, with their inviters' names, as they are at `at`. */
    const present = (records: ReadonlyArray<InvitationRecord>, at: Date) =>
      Effect.map(directory.findByIds([...new Set(records.map((record) => record.invitedBy))]), (users) => {
        const names = new Map(users.map((user) => [user.id, user.name]))
        return records.map((record) =>
          new Invitation({
            id: record.id,
            tenant: { id: record.tenantId, name: record.tenantName },
            email: record.email,
            role: record.role,
            status: statusAt(record, at),
            invited_by: { id: record.invitedBy, name: names.get(record.invitedBy) ?? null },
            locale: record.locale,
            expires_at: record.expiresAt,
            created_at: record.createdAt,
            accepted_at: record.acceptedAt,
            revoked_at: record.revokedAt
          })
        )
      })

    const presentOne = (record: InvitationRecord, at: Date) => Effect.map(present([record], at), (all) => all[0]!)

    /**
     * Queues the invitation's mail with its link, in the transaction that wrote the invitation (both
     * land or neither). The token is in the link's fragment: it never reaches a server or a Referer.
     */
    const mail = (invitation: Invitation, token: string) =>
      outbox.send({
        to: invitation.email,
        locale: invitation.locale,
        message: {
          template: "invitation",
          tenantName: invitation.tenant.name,
          role: invitation.role,
          inviterName: invitation.invited_by.name,
          link: linkTo(config.mail, `invitation/${token}`),
          expiresAt: invitation.expires_at
        }
      })

    /** The invitation as written in this transaction, presented, with its mail queued. */
    const written = (id: InvitationId, token: string, at: Date) =>
      Effect.gen(function*() {
        // The row was written in this transaction.
        const invitation = yield* presentOne(Option.getOrThrow(yield* repo.findById(id)), at)
        yield* mail(invitation, token)
        return invitation
      })

    /**
     * The caller's role, read under the tenant's lock (call inside the transaction that takes it):
     * the middleware checked it before the lock, and a concurrent change may have lowered or ended it.
     */
    const lockedManager = (tenantId: TenantId, actorId: UserId) =>
      Effect.gen(function*() {
        yield* tenants.lock(tenantId)
        const role = yield* tenants.roleOf(tenantId, actorId)
        if (Option.isNone(role)) return yield* new NotFound()
        if (role.value === "developer") {
          return yield* new Forbidden({ message: "Only owners and admins manage invitations." })
        }
        return role.value
      })

    /** The tenant's invitation `id` that the caller may act on, under the tenant's lock. */
    const managed = (tenantId: TenantId, actorId: UserId, id: InvitationId) =>
      Effect.gen(function*() {
        const actorRole = yield* lockedManager(tenantId, actorId)
        const found = yield* repo.findById(id)
        // Another tenant's invitation is the 404 of one that does not exist.
        if (Option.isNone(found) || found.value.tenantId !== tenantId) return yield* new NotFound()
        if (!mayGrant(actorRole, found.value.role)) {
          return yield* new Forbidden({ message: "Only an owner can manage an invitation to the owner role." })
        }
        return found.value
      })

    const invite = Effect.fn("InvitationService.invite")(function*(
      tenantId: TenantId,
      actorId: UserId,
      input: NewInvitation
    ) {
      const token = generateLinkToken("inv")
      const id = yield* makeId("invitation")
      const at = yield* now
      const invitation = yield* Effect.gen(function*() {
        const actorRole = yield* lockedManager(tenantId, actorId)
        if (!mayGrant(actorRole, input.role)) {
          return yield* new Forbidden({ message: "Only an owner can invite an owner." })
        }
        const existing = yield* directory.findByEmail(input.email)
        if (Option.isSome(existing) && Option.isSome(yield* tenants.roleOf(tenantId, existing.value.id))) {
          return yield* new Conflict({ message: "This person is already a member of the tenant." })
        }
        const pending = yield* repo.findPending(tenantId, input.email)
        if (Option.isSome(pending)) {
          if (open(pending.value, at)) {
            return yield* new Conflict({ message: "This address already has a pending invitation: resend it instead." })
          }
          // A lapsed invitation makes way for the new one.
          yield* repo.end(pending.value.id, "expired", at)
        }
        yield* repo.insert({
          id,
          tenantId,
          email: input.email,
          role: input.role,
          locale: input.locale ?? "pt-BR",
          invitedBy: actorId,
          tokenHash: hashToken(token),
          expiresAt: expiry(at),
          createdAt: at
        })
        return yield* written(id, token, at)
      }).pipe(inTransaction)
      yield* Effect.annotateCurrentSpan({ "invitation.id": id })
      return invitation
    })

    const list = Effect.fn("InvitationService.list")(
      function*(tenantId: TenantId, filter: InvitationFilter, page: PageParams) {
        const at = yield* now
        const cursor = cursorOf(page)
        const rows = yield* repo.listByTenant(tenantId, filter, at, pageSize(page.limit), cursor)
        const result = toPage(rows, pageSize(page.limit), cursor)
        return { ...result, data: yield* present(result.data, at) }
      }
    )

    /** A new link (the old one stops working) and a fresh expiry; the resender now vouches for it. */
    const resend = Effect.fn("InvitationService.resend")(
      function*(tenantId: TenantId, actorId: UserId, id: InvitationId) {
        const token = generateLinkToken("inv")
        const at = yield* now
        return yield* Effect.gen(function*() {
          const found = yield* managed(tenantId, actorId, id)
          const renewed = yield* repo.renew(id, {
            tokenHash: hashToken(token),
            expiresAt: expiry(at),
            invitedBy: actorId
          })
          if (!renewed) {
            return yield* new InvalidState({ message: `The invitation was ${found.status}: invite the address again.` })
          }
          return yield* written(id, token, at)
        }).pipe(inTransaction)
      }
    )

    const revoke = Effect.fn("InvitationService.revoke")(
      function*(tenantId: TenantId, actorId: UserId, id: InvitationId) {
        const at = yield* now
        const record = yield* Effect.gen(function*() {
          const found = yield* managed(tenantId, actorId, id)
          if (!(yield* repo.end(id, "revoked", at))) {
            return yield* new InvalidState({ message: `The invitation was already ${found.status}.` })
          }
          return Option.getOrThrow(yield* repo.findById(id))
        }).pipe(inTransaction)
        return yield* presentOne(record, at)
      }
    )

    /** The invitation a link's token names, while it can be accepted; `InvalidToken` otherwise. */
    const lookup = Effect.fn("InvitationService.lookup")(function*(token: string) {
      const at = yield* now
      return yield* presentOne(yield* byToken(token)(at), at)
    })

    /** The invitation a link's token names, while it can be accepted. */
    const byToken = (token: string) => (at: Date) =>
      Effect.flatMap(
        invitationTokenPattern.test(token) ? repo.findByTokenHash(hashToken(token)) : Effect.succeedNone,
        (found) =>
          Option.isSome(found) && open(found.value, at) ? Effect.succeed(found.value) : Effect.fail(new InvalidToken())
      )

    /** One of the signed-in person's own invitations (to `email`), while it can be accepted. */
    const byId = (id: InvitationId, email: string) => (at: Date) =>
      Effect.gen(function*() {
        const found = yield* repo.findById(id)
        if (Option.isNone(found) || normalizeEmail(found.value.email) !== normalizeEmail(email)) {
          return yield* new NotFound()
        }
        if (!open(found.value, at)) {
          return yield* new InvalidState({ message: `The invitation is ${statusAt(found.value, at)}.` })
        }
        return found.value
      })

    /**
     * Accepts the invitation `named` finds for the user `becomeUser` names (it may create that user:
     * it runs in this transaction, after every check, so a refused acceptance creates nobody). Under
     * the tenant's lock: still pending and unexpired, the inviter still may grant the role, and the
     * person is not a member yet.
     */
    const acceptNamed = <E1, E2, R>(
      named: (at: Date) => Effect.Effect<InvitationRecord, E1>,
      becomeUser: (invitation: Invitation) => Effect.Effect<UserId, E2, R>
    ) =>
      Effect.gen(function*() {
        const at = yield* now
        const first = yield* named(at)
        const accepted = yield* Effect.gen(function*() {
          yield* tenants.lock(first.tenantId)
          // Named again under the lock: a concurrent acceptance, resend (a new token) or revocation
          // has landed by now, and the old token names nothing.
          const current = yield* named(at)
          const inviterRole = yield* tenants.roleOf(current.tenantId, current.invitedBy)
          if (Option.isNone(inviterRole) || !mayGrant(inviterRole.value, current.role)) {
            return yield* new InvalidState({
              message: "Whoever invited you may no longer grant this role: ask the tenant for a new invitation."
            })
          }
          const userId = yield* becomeUser(yield* presentOne(current, at))
          if (Option.isSome(yield* tenants.roleOf(current.tenantId, userId))) {
            return yield* new Conflict({ message: "You are already a member of this tenant." })
          }
          yield* tenants.addMember({ tenantId: current.tenantId, userId, role: current.role, createdAt: at })
          // Every change to an invitation holds the tenant's lock, so it is still pending here.
          if (!(yield* repo.claim(current.id, userId, at))) {
            return yield* Effect.die(new Error(`invitation ${current.id} changed under its tenant's lock`))
          }
          const result: Accepted = { invitationId: current.id, tenantId: current.tenantId, userId, role: current.role }
          return result
        }).pipe(inTransaction)
        yield* Effect.logInfo("member joined by invitation").pipe(
          Effect.annotateLogs({
            "invitation.id": accepted.invitationId,
            "tenant.id": accepted.tenantId,
            "user.id": accepted.userId,
            role: accepted.role
          })
        )
        return accepted
      })

    /** Accepts by a link's token (the auth module has proven who accepts). */
    const acceptByToken = <E, R>(token: string, becomeUser: (invitation: Invitation) => Effect.Effect<UserId, E, R>) =>
      acceptNamed(byToken(token), becomeUser).pipe(Effect.withSpan("InvitationService.acceptByToken"))

    /** Accepts one of the signed-in person's own invitations (their address verified). */
    const acceptById = (id: InvitationId, email: string, userId: UserId) =>
      acceptNamed(byId(id, email), () => Effect.succeed(userId)).pipe(Effect.withSpan("InvitationService.acceptById"))

    /** The invitations an address can still accept, newest first. */
    const listFor = Effect.fn("InvitationService.listFor")(function*(email: string, page: PageParams) {
      const at = yield* now
      const cursor = cursorOf(page)
      const rows = yield* repo.listPendingFor(email, at, pageSize(page.limit), cursor)
      const result = toPage(rows, pageSize(page.limit), cursor)
      return { ...result, data: yield* present(result.data, at) }
    })

    /** The signed-in person turns down one of their own invitations. */
    const decline = Effect.fn("InvitationService.decline")(function*(id: InvitationId, email: string) {
      const at = yield* now
      const first = yield* byId(id, email)(at)
      const record = yield* Effect.gen(function*() {
        yield* tenants.lock(first.tenantId)
        if (!(yield* repo.end(id, "declined", at))) {
          return yield* new InvalidState({ message: "The invitation can no longer be declined." })
        }
        return Option.getOrThrow(yield* repo.findById(id))
      }).pipe(inTransaction)
      return yield* presentOne(record, at)
    })

    return { invite, list, resend, revoke, lookup, acceptByToken, acceptById, listFor, decline } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs a `UserDirectory` (the auth module's, src/auth/Directory.ts) and the `Outbox`. */
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([InvitationRepo.layer, TenantRepo.layer, Transaction.layer])
  )
}
