import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, InvalidCredentials, RateLimited } from "../domain/Errors.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { Role } from "../domain/Principal.js"
import { SessionAuth } from "../keys/Authentication.js"
import { Email, NewTenant, PublicUser, Tenant } from "../tenants/Api.js"

// Fixed messages: the default ones quote the actual value, and a password must never be echoed.
const passwordString = Schema.String.annotations({ message: () => "password must be a string" })

export const Password = passwordString.pipe(
  Schema.minLength(12, { message: () => "password must have at least 12 characters" }),
  Schema.maxLength(1024, { message: () => "password must have at most 1024 characters" }),
  Schema.Redacted,
  Schema.annotations({ description: "At least 12 characters." })
)

export const RegisterPayload = Schema.Struct({
  email: Email,
  password: Password,
  name: Schema.optional(Schema.Trim.pipe(Schema.maxLength(200))),
  tenant: Schema.optional(NewTenant)
})

export class Registration extends Schema.Class<Registration>("Registration")({
  user: PublicUser,
  tenant: Schema.optional(Tenant)
}) {}

export const LoginPayload = Schema.Struct({
  email: Email,
  password: passwordString.pipe(
    Schema.maxLength(1024, { message: () => "password must have at most 1024 characters" }),
    Schema.Redacted
  )
})

export class LoginResult extends Schema.Class<LoginResult>("LoginResult")({
  token: Schema.String.annotations({ description: "Bearer session token (`etd_sess_…`). Shown once." }),
  expires_at: Schema.Date,
  user: PublicUser
}) {}

export class TenantMembership extends Schema.Class<TenantMembership>("TenantMembership")({
  tenant: Tenant,
  role: Role
}) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("register", "/v1/auth/register")
      .setPayload(RegisterPayload)
      .addSuccess(Registration, { status: 201 })
      .addError(Conflict)
      .addError(RateLimited)
      .annotate(OpenApi.Description, "Creates a user; with `tenant`, also a tenant with the user as owner.")
  )
  .add(
    HttpApiEndpoint.post("login", "/v1/auth/login")
      .setPayload(LoginPayload)
      .addSuccess(LoginResult)
      .addError(InvalidCredentials)
      .addError(RateLimited)
  )
  .add(
    HttpApiEndpoint.post("logout", "/v1/auth/logout")
      .addSuccess(HttpApiSchema.NoContent)
      .middleware(SessionAuth)
  )
  .add(HttpApiEndpoint.get("me", "/v1/me").addSuccess(PublicUser).middleware(SessionAuth))
  .add(
    HttpApiEndpoint.get("myTenants", "/v1/me/tenants")
      .setUrlParams(PageParams)
      .addSuccess(Page(TenantMembership))
      .middleware(SessionAuth)
  )
  .annotate(OpenApi.Title, "Users and sessions")
{}
