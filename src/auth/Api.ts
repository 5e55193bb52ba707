import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { SessionAuth } from "../domain/Authentication.js"
import { Conflict, InvalidCredentials, RateLimited } from "../domain/Errors.js"
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

export const RegisterPayload = Schema.Struct({
  email: Email,
  password: Password,
  name: Schema.optionalKey(trimmedString(Schema.String.check(Schema.isMaxLength(200)))),
  tenant: Schema.optionalKey(NewTenant)
})

export class Registration extends Schema.Class<Registration>("Registration")({
  user: PublicUser,
  tenant: Schema.optionalKey(Tenant)
}) {}

export const LoginPayload = Schema.Struct({
  email: Email,
  password: Schema.RedactedFromValue(passwordString.check(passwordMaxLength))
})

export class LoginResult extends Schema.Class<LoginResult>("LoginResult")({
  token: Schema.String.annotate({ description: "Bearer session token (`etd_sess_…`). Shown once." }),
  expires_at: DateTime,
  user: PublicUser
}) {}

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
  .annotate(OpenApi.Title, "Users and sessions")
  .annotate(
    OpenApi.Description,
    "Registration, login and logout, and the current user. Sessions (`etd_sess_…`) are for people and the dashboard; backends use API keys."
  )
{}
