import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Conflict, InvalidCredentials, RateLimited } from "../domain/Errors.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { SessionAuth } from "../domain/Authentication.js"
import { NewTenant, Tenant, TenantMembership } from "../domain/Tenant.js"
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
  name: Schema.optionalKey(Schema.Trim.check(Schema.isMaxLength(200))),
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
  expires_at: Schema.Date,
  user: PublicUser
}) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/auth/register", {
      payload: RegisterPayload,
      success: Registration.pipe(HttpApiSchema.status(201)),
      error: [Conflict, RateLimited]
    })
      .annotate(OpenApi.Description, "Creates a user; with `tenant`, also a tenant with the user as owner.")
  )
  .add(
    HttpApiEndpoint.post("login", "/auth/login", {
      payload: LoginPayload,
      success: LoginResult,
      error: [InvalidCredentials, RateLimited]
    })
  )
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout", {
      success: HttpApiSchema.NoContent
    })
      .middleware(SessionAuth)
  )
  .add(HttpApiEndpoint.get("me", "/me", { success: PublicUser }).middleware(SessionAuth))
  .add(
    HttpApiEndpoint.get("myTenants", "/me/tenants", {
      query: PageParams,
      success: Page(TenantMembership)
    })
      .middleware(SessionAuth)
  )
  .annotate(OpenApi.Title, "Users and sessions")
{}
