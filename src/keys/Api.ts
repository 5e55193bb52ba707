import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ParseResult, Schema } from "effect"
import { InvalidState, NotFound } from "../domain/Errors.js"
import { IdOf } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { Environment, RequiredRoles, type Role, Scope } from "../domain/Principal.js"
import { SessionAuth } from "./Authentication.js"

export const ApiKeyStatus = Schema.Literal("active", "expiring", "expired", "revoked")

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: Schema.String,
  object: Schema.tag("api_key"),
  name: Schema.String,
  environment: Environment,
  scopes: Schema.Array(Scope),
  hint: Schema.String.annotations({ description: "`etd_live_…` plus the last four characters of the token." }),
  status: ApiKeyStatus.annotations({
    description: "`expiring`: rotated and still valid until `expires_at`; `expired`: past it; `revoked`: revoked."
  }),
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date).annotations({ description: "Updated at most every 30 seconds." }),
  expires_at: Schema.NullOr(Schema.Date),
  replaced_by: Schema.NullOr(Schema.String)
}) {}

export const CreateApiKey = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100)),
  environment: Environment,
  scopes: Schema.Array(Scope).pipe(Schema.minItems(1, { message: () => "scopes must not be empty" }))
})

export class CreatedApiKey extends Schema.Class<CreatedApiKey>("CreatedApiKey")({
  api_key: ApiKey,
  token: Schema.String.annotations({ description: "The secret token. Shown only in this response." })
}) {}

const RotateApiKeyFields = Schema.Struct({
  // `exact`: a JSON field is present or absent, never `undefined` (which would add a second issue).
  grace_days: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 30)), { exact: true })
})

/**
 * Every field is optional, so a client may rotate with a body-less POST, as it revokes. The
 * framework reads an empty body as `null`, which is decoded as `{}`; the document shows the object.
 */
export const RotateApiKey = Schema.transformOrFail(Schema.Unknown, Schema.typeSchema(RotateApiKeyFields), {
  strict: true,
  decode: (body, options) => ParseResult.decodeUnknown(RotateApiKeyFields)(body ?? {}, options),
  encode: (body, options) => ParseResult.encode(RotateApiKeyFields)(body, options)
}).annotations({
  jsonSchema: {
    type: "object",
    properties: { grace_days: { type: "integer", minimum: 0, maximum: 30, description: "Default 7 (configurable)." } },
    additionalProperties: false
  }
})

export class RotatedApiKey extends Schema.Class<RotatedApiKey>("RotatedApiKey")({
  api_key: ApiKey,
  token: Schema.String,
  previous: Schema.Struct({ id: Schema.String, expires_at: Schema.Date })
}) {}

const tenantPath = HttpApiSchema.param("tenantId", IdOf("tenant"))
const keyPath = HttpApiSchema.param("keyId", IdOf("apiKey"))
const ownerOrAdmin: ReadonlyArray<Role> = ["owner", "admin"]
// Developers are read-only in the dashboard: they may see the keys, not manage them.
const anyMember: ReadonlyArray<Role> = ["owner", "admin", "developer"]

export class KeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create")`/v1/tenants/${tenantPath}/api-keys`
      .setPayload(CreateApiKey)
      .addSuccess(CreatedApiKey, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/tenants/${tenantPath}/api-keys`
      .setUrlParams(PageParams)
      .addSuccess(Page(ApiKey))
      .annotate(RequiredRoles, anyMember)
  )
  .add(
    HttpApiEndpoint.post("rotate")`/v1/tenants/${tenantPath}/api-keys/${keyPath}/rotate`
      .setPayload(RotateApiKey)
      .addSuccess(RotatedApiKey, { status: 201 })
      .addError(NotFound)
      .addError(InvalidState)
      .annotate(
        OpenApi.Description,
        "Issues a new token with the same environment and scopes; the old one stays valid for `grace_days` (default 7)."
      )
  )
  .add(
    HttpApiEndpoint.post("revoke")`/v1/tenants/${tenantPath}/api-keys/${keyPath}/revoke`
      .addSuccess(ApiKey)
      .addError(NotFound)
      .annotate(OpenApi.Description, "Revokes the key at once, on every instance. Revoking twice is harmless.")
  )
  .middleware(SessionAuth)
  .annotate(RequiredRoles, ownerOrAdmin)
  .annotate(OpenApi.Title, "API keys")
{}
