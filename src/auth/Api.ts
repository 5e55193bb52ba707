import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { SessionAuth } from "../domain/Authentication.js"
import {
  Conflict,
  EmailUnverified,
  Forbidden,
  InvalidCredentials,
  InvalidSession,
  InvalidState,
  InvalidToken,
  MissingCredentials,
  NotFound,
  RateLimited
} from "../domain/Errors.js"
import {
  Invitation,
  InvitationAcceptance,
  InvitationLookup,
  InvitationToken,
  InvitationTokenPayload
} from "../domain/Invitation.js"
import { trimmedString } from "../domain/Normalized.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { NewTenant, Tenant, TenantMembership } from "../domain/Tenant.js"
import { DateTime } from "../domain/Time.js"
import { Email, PublicUser } from "../domain/User.js"

// Fixed messages: the default ones quote the actual value, and a password must never be echoed.
const passwordString = Schema.String.annotate({ message: "password must be a string" })
const passwordMaxLength = Schema.isMaxLength(1024, { message: "password must have at most 1024 characters" })

export const Password = Schema.RedactedFromValue(
  passwordString.check(
    Schema.isMinLength(12, {
      message: "password must have at least 12 characters",
      // v4 would document ceil(12 / 2) code points; the contract has always said 12.
      toJsonSchema: () => ({ minLength: 12 })
    }),
    passwordMaxLength
  ).annotate({ description: "At least 12 characters." })
)

export const MailLocale = Schema.Literals(["pt-BR", "en"]).annotate({
  description: "The language of the mail sent (default `pt-BR`)."
})

export const RegisterPayload = Schema.Struct({
  email: Email,
  password: Password,
  name: Schema.optionalKey(trimmedString(Schema.String.check(Schema.isMaxLength(200)))),
  tenant: Schema.optionalKey(NewTenant),
  locale: Schema.optionalKey(MailLocale)
})

// A link's token: bounded, and never echoed by a message (it is a secret until used).
const LinkToken = Schema.String.annotate({ message: "token must be a string" }).check(
  Schema.isMaxLength(200, { message: "token must have at most 200 characters" })
).annotate({ description: "The token of the mailed link (the part after the last `/` of its fragment)." })

export const ResendVerificationPayload = Schema.Struct({ locale: Schema.optionalKey(MailLocale) })
export const ConfirmEmailPayload = Schema.Struct({ token: LinkToken })
export const PasswordResetRequest = Schema.Struct({ email: Email, locale: Schema.optionalKey(MailLocale) })
export const PasswordResetConfirm = Schema.Struct({ token: LinkToken, password: Password })

export class Registration extends Schema.Class<Registration>("Registration")({
  user: PublicUser,
  tenant: Schema.optionalKey(Tenant)
}, { description: "A new account: its user and, when asked, a tenant owned by the user." }) {}

export const LoginPayload = Schema.Struct({
  email: Email,
  password: Schema.RedactedFromValue(passwordString.check(passwordMaxLength))
})

export class LoginResult extends Schema.Class<LoginResult>("LoginResult")({
  token: Schema.String.annotate({ description: "Bearer session token (`etd_sess_…`). Shown once." }),
  expires_at: DateTime,
  user: PublicUser
}, { description: "A session: its bearer token (`etd_sess_…`), when it expires, and the user." }) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/auth/register", {
      payload: RegisterPayload,
      success: Registration.pipe(HttpApiSchema.status(201)),
      error: [Conflict, RateLimited]
    })
      .annotate(OpenApi.Summary, "Register a user")
      .annotate(OpenApi.Description, "Creates a user; with `tenant`, also a tenant with the user as owner.")
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login", {
      payload: LoginPayload,
      success: LoginResult,
      error: [InvalidCredentials, RateLimited]
    })
      .annotate(OpenApi.Summary, "Log in")
      .annotate(
        OpenApi.Description,
        "Exchanges an email and password for a session token (`etd_sess_…`), sent as `Authorization: Bearer` on the session's operations. A wrong email or password is the same `401 invalid_credentials`; attempts are rate limited per email and per client address."
      )
  )
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout", {
      success: HttpApiSchema.NoContent
    })
      .annotate(OpenApi.Summary, "Log out")
      .annotate(OpenApi.Description, "Ends the session of the token sent: from then on it is `401 invalid_session`.")
      .middleware(SessionAuth)
  )
  .add(
    HttpApiEndpoint.get("me", "/me", {
      success: PublicUser
    })
      .annotate(OpenApi.Summary, "Get the current user")
      .annotate(OpenApi.Description, "The user of the session.")
      .middleware(SessionAuth)
  )
  .add(
    HttpApiEndpoint.get("myTenants", "/me/tenants", {
      query: PageParams,
      success: Page(TenantMembership)
    })
      .annotate(OpenApi.Summary, "List the current user's tenants")
      .annotate(OpenApi.Description, "The tenants the session's user belongs to, each with the user's role.")
      .middleware(SessionAuth)
  )
  .add(
    HttpApiEndpoint.post("resendVerification", "/me/email-verification", {
      payload: ResendVerificationPayload,
      success: HttpApiSchema.Accepted,
      error: RateLimited
    })
      .annotate(OpenApi.Summary, "Send the e-mail verification link again")
      .annotate(
        OpenApi.Description,
        "Mails the session's user a new verification link (the older ones stop working). Nothing is sent when the " +
          "address is already verified. Rate limited per user."
      )
      .middleware(SessionAuth)
  )
  .add(
    HttpApiEndpoint.post("confirmEmail", "/auth/email-verification/confirm", {
      payload: ConfirmEmailPayload,
      success: HttpApiSchema.NoContent,
      error: [InvalidToken, RateLimited]
    })
      .annotate(OpenApi.Summary, "Confirm an e-mail address")
      .annotate(
        OpenApi.Description,
        "Marks the address verified with the token of the mailed link (`#/verify-email/<token>`), sent in the body, " +
          "never in the URL. A token works once, for 24 hours by default, and only while it is the newest sent; " +
          "anything else is `400 invalid_token`."
      )
  )
  .add(
    HttpApiEndpoint.post("requestPasswordReset", "/auth/password-reset", {
      payload: PasswordResetRequest,
      success: HttpApiSchema.Accepted,
      error: RateLimited
    })
      .annotate(OpenApi.Summary, "Ask for a password reset link")
      .annotate(
        OpenApi.Description,
        "Always `202`, whether or not a user has this address (no account enumeration); a user who has gets a " +
          "link (`#/reset-password/<token>`) by mail. Rate limited per address and per client."
      )
  )
  .add(
    HttpApiEndpoint.post("confirmPasswordReset", "/auth/password-reset/confirm", {
      payload: PasswordResetConfirm,
      success: HttpApiSchema.NoContent,
      error: [InvalidToken, RateLimited]
    })
      .annotate(OpenApi.Summary, "Set a new password with a reset link")
      .annotate(
        OpenApi.Description,
        "Sets the password with the token of the mailed link, ends every session of the user, and marks the " +
          "address verified. A token works once, for 1 hour by default, and only while it is the newest sent; " +
          "anything else is `400 invalid_token`."
      )
  )
  .annotate(OpenApi.Title, "Users and sessions")
  .annotate(
    OpenApi.Description,
    "Registration, login and logout, and the current user. Sessions (`etd_sess_…`) are for people and the dashboard; backends use API keys."
  )
{}

export const AcceptInvitationPayload = Schema.Struct({
  token: InvitationToken,
  name: Schema.optionalKey(trimmedString(Schema.String.check(Schema.isMaxLength(200)))),
  password: Schema.optionalKey(Password)
})

const myInvitationParams = {
  invitationId: Schema.String.annotate({ description: "The invitation's id (`inv_…`)." })
}

/**
 * Accepting an invitation (SPEC §5). With the link's token, which proves the mailbox: a new person
 * registers while accepting; an existing account must also send its session, so that accepting into
 * an account proves both the mailbox and the account. Signed in with the invited address verified,
 * a person may also accept from their own list.
 */
export class InvitationAcceptanceApi extends HttpApiGroup.make("invitationAcceptance")
  .add(
    HttpApiEndpoint.post("lookup", "/invitations/lookup", {
      payload: InvitationTokenPayload,
      success: InvitationLookup,
      error: [InvalidToken, RateLimited]
    })
      .annotate(OpenApi.Summary, "Look up an invitation by its link")
      .annotate(
        OpenApi.Description,
        "What the invitation page shows: the tenant, the role, who invited, the address and its expiry, and " +
          "whether an account has that address. The token goes in the body, never in a URL. An unknown, " +
          "expired, revoked, replaced or used token is `400 invalid_token`."
      )
  )
  .add(
    HttpApiEndpoint.post("accept", "/invitations/accept", {
      payload: AcceptInvitationPayload,
      success: InvitationAcceptance,
      error: [InvalidToken, MissingCredentials, InvalidSession, Forbidden, Conflict, InvalidState, RateLimited]
    })
      .annotate(OpenApi.Summary, "Accept an invitation by its link")
      .annotate(
        OpenApi.Description,
        "Joins the tenant with the invited role; the link works once. When no account has the invited " +
          "address, one is created with `password` (at least 12 characters) and `name`, its address counts " +
          "as verified (the link proved the mailbox), and the answer carries a session token. When an account " +
          "has it, the request must carry that account's session (`Authorization: Bearer etd_sess_…`; " +
          "`401 missing_credentials` without one, `403 forbidden` for another account's). `409 invalid_state` " +
          "when whoever invited may no longer grant the role, `409 conflict` for a member already. Rate limited " +
          "like registration."
      )
  )
  .add(
    HttpApiEndpoint.get("listMine", "/me/invitations", {
      query: PageParams,
      success: Page(Invitation),
      error: [EmailUnverified]
    })
      .annotate(OpenApi.Summary, "List the current user's invitations")
      .annotate(
        OpenApi.Description,
        "The invitations the session's user can still accept, addressed to their e-mail, newest first. The " +
          "address must be verified (`403 email_unverified`): an account that only claims an address sees nothing " +
          "sent to it."
      )
      .middleware(SessionAuth)
  )
  .add(
    HttpApiEndpoint.post("acceptMine", "/me/invitations/:invitationId/accept", {
      params: myInvitationParams,
      success: InvitationAcceptance,
      error: [EmailUnverified, NotFound, InvalidState, Conflict]
    })
      .annotate(OpenApi.Summary, "Accept one of the current user's invitations")
      .annotate(
        OpenApi.Description,
        "Joins the tenant with the invited role. Another address's invitation is `404 not_found`; one no " +
          "longer pending, or whose sender may no longer grant the role, `409 invalid_state`."
      )
      .middleware(SessionAuth)
  )
  .add(
    HttpApiEndpoint.post("declineMine", "/me/invitations/:invitationId/decline", {
      params: myInvitationParams,
      success: Invitation,
      error: [EmailUnverified, NotFound, InvalidState]
    })
      .annotate(OpenApi.Summary, "Decline one of the current user's invitations")
      .annotate(OpenApi.Description, "Turns the invitation down; its link stops working.")
      .middleware(SessionAuth)
  )
  .annotate(OpenApi.Title, "Accepting invitations")
  .annotate(
    OpenApi.Description,
    "How an invited person joins a tenant: from the e-mail's link (the dashboard's `#/invitation/<token>` " +
      "page), registering there if new, or signed in from their own list."
  )
{}
