import { Schema, SchemaGetter } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { SessionAuth } from "../domain/Authentication.js"
import { EmailUnverified, InvalidState, NotFound } from "../domain/Errors.js"
import { ExposureSource } from "../domain/Events.js"
import { IdOf, TenantIdParam } from "../domain/Ids.js"
import { trimmedString } from "../domain/Normalized.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { Environment, managerRoles, memberRoles, RequiredRoles, Scope } from "../domain/Principal.js"
import { DateTime } from "../domain/Time.js"

export const ApiKeyStatus = Schema.Literals(["active", "expiring", "expired", "revoked"])

export const ApiKeyExposureSummary = Schema.Struct({
  count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
    description: "How many times the key was detected exposed."
  }),
  last_detected_at: DateTime,
  last_source: ExposureSource.annotate({
    description: "Where it was last seen: `url` (sent in a request URL), `log` (in the service's log output) or " +
      "`browser` (sent from a browser)."
  })
}).annotate({
  identifier: "ApiKeyExposureSummary",
  description: "The exposure alerts raised for a key: how many, when and where last seen."
})

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: Schema.String.annotate({ examples: ["key_01m8e314reqq8n7ywyftgbkv47"] }),
  object: Schema.tag("api_key"),
  name: Schema.String,
  environment: Environment,
  scopes: Schema.Array(Scope),
  hint: Schema.String.annotate({ description: "`etd_live_…` plus the last four characters of the token." }),
  status: ApiKeyStatus.annotate({
    description: "`expiring`: rotated and still valid until `expires_at`; `expired`: past it; `revoked`: revoked."
  }),
  created_at: DateTime,
  last_used_at: Schema.NullOr(DateTime).annotate({ description: "Updated at most every 30 seconds." }),
  expires_at: Schema.NullOr(DateTime).annotate({
    description: "When a rotated key stops working (its grace period ends); null for a key never rotated."
  }),
  revoked_at: Schema.NullOr(DateTime).annotate({ description: "When the key was revoked; null while it is not." }),
  replaced_by: Schema.NullOr(Schema.String),
  exposure: Schema.NullOr(ApiKeyExposureSummary).annotate({
    description: "The exposure alerts raised for this key (SPEC §4: its token was seen in a URL, a log line or a " +
      "browser's request), or null when none was. An exposed key should be rotated."
  })
}, { description: "An API key's metadata. The token itself is shown only at creation or rotation." }) {}

export const CreateApiKey = Schema.Struct({
  name: trimmedString(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))),
  environment: Environment,
  scopes: Schema.Array(Scope).check(Schema.isMinLength(1, { message: "scopes must not be empty" }))
})

export class CreatedApiKey extends Schema.Class<CreatedApiKey>("CreatedApiKey")({
  api_key: ApiKey,
  token: Schema.String.annotate({ description: "The secret token. Shown only in this response." })
}, { description: "A new API key and its token, shown only in this response." }) {}

const RotateApiKeyFields = Schema.Struct({
  // `optionalKey`: a JSON field is present or absent, never `undefined` (which would add a second issue).
  grace_days: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 30 })))
})

/**
 * Every field is optional, so a client may rotate with a body-less POST, as it revokes. The
 * framework reads an empty body as `undefined`, which (like a JSON `null`) is decoded as `{}`;
 * the document shows the object. `Any`, not `Unknown`: the JSON codec of `Unknown` refuses
 * `undefined`.
 */
export const RotateApiKey = Schema.Any.check(
  Schema.makeFilter(() => true, {
    toJsonSchema: () => ({
      type: "object",
      properties: {
        grace_days: { type: "integer", minimum: 0, maximum: 30, description: "Default 7 (configurable)." }
      },
      additionalProperties: false
    })
  })
).pipe(
  Schema.decodeTo(RotateApiKeyFields, {
    // The fields schema validates the result, so any body that is not an object fails there.
    decode: SchemaGetter.transform((body: unknown) => (body ?? {}) as typeof RotateApiKeyFields.Encoded),
    encode: SchemaGetter.passthroughSupertype()
  })
)

export class RotatedApiKey extends Schema.Class<RotatedApiKey>("RotatedApiKey")({
  api_key: ApiKey,
  token: Schema.String,
  previous: Schema.Struct({ id: Schema.String, expires_at: DateTime })
}, { description: "The new key of a rotation, its token (shown once), and when the previous key stops working." }) {}

const KeyPath = { tenantId: TenantIdParam, keyId: IdOf("apiKey") }

export class KeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/tenants/:tenantId/api-keys", {
      params: { tenantId: TenantIdParam },
      payload: CreateApiKey,
      success: CreatedApiKey.pipe(HttpApiSchema.status(201)),
      error: EmailUnverified
    })
      .annotate(OpenApi.Summary, "Create an API key")
      .annotate(
        OpenApi.Description,
        "Creates a key for one environment (`live` or `test`) with a non-empty set of scopes. The token (`etd_live_…` / `etd_test_…`) is in this response only: the service keeps its hash, not the token. A `live` key needs the creator's e-mail address verified (`403 email_unverified` until then); `test` keys do not."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/tenants/:tenantId/api-keys", {
      params: { tenantId: TenantIdParam },
      query: PageParams,
      success: Page(ApiKey)
    })
      .annotate(OpenApi.Summary, "List API keys")
      .annotate(
        OpenApi.Description,
        "The tenant's keys, metadata only (the token is never shown again), with the exposure alerts raised for each (`exposure`). Any member may list them."
      )
      .annotate(RequiredRoles, memberRoles)
  )
  .add(
    HttpApiEndpoint.post("rotate", "/tenants/:tenantId/api-keys/:keyId/rotate", {
      params: KeyPath,
      payload: RotateApiKey,
      success: RotatedApiKey.pipe(HttpApiSchema.status(201)),
      error: [NotFound, InvalidState]
    })
      .annotate(OpenApi.Summary, "Rotate an API key")
      .annotate(
        OpenApi.Description,
        "Issues a new token with the same environment and scopes; the old one stays valid for `grace_days` (default 7)."
      )
  )
  .add(
    HttpApiEndpoint.post("revoke", "/tenants/:tenantId/api-keys/:keyId/revoke", {
      params: KeyPath,
      success: ApiKey,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Revoke an API key")
      .annotate(OpenApi.Description, "Revokes the key at once, on every instance. Revoking twice is harmless.")
  )
  .middleware(SessionAuth)
  .annotate(RequiredRoles, managerRoles)
  .annotate(OpenApi.Title, "API keys")
  .annotate(
    OpenApi.Description,
    "A tenant's API keys, managed from a session by an `owner` or `admin`: one environment (`live` or `test`) and a set of scopes each. A token is shown once, at creation or rotation."
  )
{}
