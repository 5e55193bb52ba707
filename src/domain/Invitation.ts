/**
 * Invitations (SPEC §5): how a person joins a tenant. An owner or admin invites an address with a
 * role; the person accepts from the mailbox (the link carries a one-time token) or, signed in with
 * that address verified, from their own list. Shared by the tenants module (which keeps them) and
 * the auth module (where people accept them).
 */
import { Schema } from "effect"
import { Role } from "./Principal.js"
import { Tenant } from "./Tenant.js"
import { DateTime } from "./Time.js"
import { Email, PublicUser } from "./User.js"

/** `expired` is not stored: a pending invitation past its `expires_at` is shown as expired. */
export const InvitationStatus = Schema.Literals(["pending", "accepted", "revoked", "declined", "expired"])
export type InvitationStatus = typeof InvitationStatus.Type

/** The language of the invitation's e-mail. */
export const InvitationLocale = Schema.Literals(["pt-BR", "en"])
export type InvitationLocale = typeof InvitationLocale.Type

export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: Schema.String,
  object: Schema.tag("invitation"),
  tenant: Schema.Struct({ id: Schema.String, name: Schema.String }),
  email: Schema.String,
  role: Role,
  status: InvitationStatus,
  invited_by: Schema.Struct({ id: Schema.String, name: Schema.NullOr(Schema.String) }).annotate({
    description: "Who sent (or last resent) the invitation; accepting needs that person to still may grant the role."
  }),
  locale: InvitationLocale,
  expires_at: DateTime,
  created_at: DateTime,
  accepted_at: Schema.NullOr(DateTime),
  revoked_at: Schema.NullOr(DateTime)
}, { description: "An invitation to join a tenant with a role, sent to an e-mail address." }) {}

export const NewInvitation = Schema.Struct({
  email: Email,
  role: Role,
  locale: Schema.optionalKey(InvitationLocale.annotate({ description: "The e-mail's language; `pt-BR` by default." }))
})
export type NewInvitation = typeof NewInvitation.Type

/**
 * The one-time token of an invitation's link (`etd_inv_…`). Only in request bodies, never in a URL
 * the service receives: the dashboard's link carries it in the fragment.
 */
export const InvitationToken = Schema.String.check(Schema.isMaxLength(100)).annotate({
  description: "The token of the invitation's link (`etd_inv_…`)."
})

export const InvitationTokenPayload = Schema.Struct({ token: InvitationToken })

export class InvitationLookup extends Schema.Class<InvitationLookup>("InvitationLookup")({
  object: Schema.tag("invitation_lookup"),
  invitation: Invitation,
  account_exists: Schema.Boolean.annotate({
    description: "Whether an account has the invited address: then accepting needs its session; else the " +
      "person registers while accepting (`name`, `password`)."
  })
}, { description: "What an invitation link offers (tenant, role, address), read before accepting it." }) {}

export class InvitationAcceptance extends Schema.Class<InvitationAcceptance>("InvitationAcceptance")({
  object: Schema.tag("invitation_acceptance"),
  user: PublicUser,
  tenant: Tenant,
  role: Role,
  token: Schema.NullOr(Schema.String).annotate({
    description: "A session token (`etd_sess_…`) for an account created by this acceptance, shown once; null " +
      "when an existing account accepted with its own session."
  }),
  expires_at: Schema.NullOr(DateTime)
}, { description: "What accepting an invitation did: the tenant joined and the role given." }) {}
