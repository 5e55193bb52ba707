/**
 * The error contract of SPEC §2. Every error is a tagged class that carries its stable `code`
 * and its HTTP status, so handlers fail with values and never build responses by hand, and the
 * typed client decodes each body back into the same class.
 */
import { Effect, Schema, SchemaAST } from "effect"

/**
 * The HTTP status an error is answered with: the `httpApiStatus` its class declares, or 500 when it
 * declares none, as the API does. A status stored or sent outside the API (a replayed idempotent
 * answer, a response before routing) is read here, so it cannot drift from the contract.
 */
export const statusOf = (error: object): number => {
  const errorClass: unknown = error.constructor
  const status: unknown = Schema.isSchema(errorClass) ? SchemaAST.resolve(errorClass.ast)?.httpApiStatus : undefined
  return typeof status === "number" ? status : 500
}

// Always present on the wire; the constructor fills in the default text.
const message = (fallback: string) => Schema.String.pipe(Schema.withConstructorDefault(Effect.succeed(fallback)))

/** The wait of a 429 or 503 in whole seconds, as in its `Retry-After` header. */
const retryAfter = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
  description: "Seconds to wait before retrying; the same value as the `Retry-After` header."
})

export const ValidationIssue = Schema.Struct({
  path: Schema.Array(Schema.Union([Schema.String, Schema.Number])),
  message: Schema.String
}).annotate({
  identifier: "ValidationIssue",
  description: "One validation failure: the path of the field (names and array indexes) and what is wrong with it."
})

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  code: Schema.tag("invalid_request"),
  message: message("The request is not valid."),
  issues: Schema.optionalKey(Schema.Array(ValidationIssue))
}, {
  httpApiStatus: 400,
  description: "400 `invalid_request`: the body, path, query or a header failed validation; `issues` names each field."
}) {}

/**
 * A `400 invalid_request` for one field a service found wrong after the contract's own checks, in
 * the shape the contract's validation gives: the message names the path, `issues` carries it.
 */
export const invalidField = (path: ReadonlyArray<string | number>, problem: string) =>
  new InvalidRequest({
    message: `The request is not valid. ${path.join(".")}: ${problem}`,
    issues: [{ path, message: problem }]
  })

export class ApiKeyInUrl extends Schema.TaggedError<ApiKeyInUrl>()("ApiKeyInUrl", {
  code: Schema.tag("api_key_in_url"),
  message: message(
    "An API key appeared in the URL. Send it only in the Authorization header; the key is now treated as exposed, rotate it."
  )
}, {
  httpApiStatus: 400,
  description:
    "400 `api_key_in_url`: an API key appeared in the query string or the path. The key is treated as exposed: rotate it."
}) {}

export class MissingCredentials extends Schema.TaggedError<MissingCredentials>()("MissingCredentials", {
  code: Schema.tag("missing_credentials"),
  message: message("Send `Authorization: Bearer <token>`.")
}, {
  httpApiStatus: 401,
  description: "401 `missing_credentials`: no `Authorization: Bearer …` header, or a malformed one."
}) {}

export class InvalidApiKey extends Schema.TaggedError<InvalidApiKey>()("InvalidApiKey", {
  code: Schema.tag("invalid_api_key"),
  message: message("The API key is not valid.")
}, { httpApiStatus: 401, description: "401 `invalid_api_key`: no key with this token exists." }) {}

export class ApiKeyRevoked extends Schema.TaggedError<ApiKeyRevoked>()("ApiKeyRevoked", {
  code: Schema.tag("api_key_revoked"),
  message: message("The API key was revoked.")
}, { httpApiStatus: 401, description: "401 `api_key_revoked`: the key was revoked." }) {}

export class ApiKeyExpired extends Schema.TaggedError<ApiKeyExpired>()("ApiKeyExpired", {
  code: Schema.tag("api_key_expired"),
  message: message("The API key was rotated and its grace period has ended.")
}, { httpApiStatus: 401, description: "401 `api_key_expired`: the key was rotated and its grace period has ended." }) {}

export class InvalidSession extends Schema.TaggedError<InvalidSession>()("InvalidSession", {
  code: Schema.tag("invalid_session"),
  message: message("The session is unknown, expired or logged out. Log in again.")
}, {
  httpApiStatus: 401,
  description: "401 `invalid_session`: the session token is unknown, expired or logged out."
}) {}

export class InvalidCredentials extends Schema.TaggedError<InvalidCredentials>()("InvalidCredentials", {
  code: Schema.tag("invalid_credentials"),
  message: message("The email or password is not correct.")
}, {
  httpApiStatus: 401,
  description: "401 `invalid_credentials`: login failed; the same answer for an unknown e-mail and a wrong password."
}) {}

export class InvalidSignature extends Schema.TaggedError<InvalidSignature>()("InvalidSignature", {
  code: Schema.tag("invalid_signature"),
  message: message("The webhook signature or timestamp could not be verified.")
}, {
  httpApiStatus: 401,
  description: "401 `invalid_signature`: the payment provider's webhook signature or timestamp did not verify."
}) {}

export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", {
  code: Schema.tag("quota_exceeded"),
  message: message("The tenant's monthly quota of live documents is used up.")
}, {
  httpApiStatus: 402,
  description: "402 `quota_exceeded`: a live document would exceed the tenant's monthly quota."
}) {}

export class TenantSuspended extends Schema.TaggedError<TenantSuspended>()("TenantSuspended", {
  code: Schema.tag("tenant_suspended"),
  message: message("Live issuing is suspended for this tenant's billing status.")
}, {
  httpApiStatus: 402,
  description: "402 `tenant_suspended`: live issuing while the tenant's billing status forbids it."
}) {}

export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  code: Schema.tag("insufficient_scope"),
  message: message("The API key lacks the scope this endpoint requires."),
  required_scope: Schema.String
}, {
  httpApiStatus: 403,
  description:
    "403 `insufficient_scope`: the API key is valid but lacks the operation's scope, named in `required_scope`."
}) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  code: Schema.tag("forbidden"),
  message: message("Your role in this tenant does not allow this operation.")
}, {
  httpApiStatus: 403,
  description: "403 `forbidden`: the session's user lacks the tenant role the operation needs."
}) {}

/**
 * SPEC §4, keys stay on backends: an API key arrived with a browser's request marks. Like a key in
 * a URL, the key is then treated as exposed (the tenant is alerted).
 */
export class EmailUnverified extends Schema.TaggedError<EmailUnverified>()("EmailUnverified", {
  code: Schema.tag("email_unverified"),
  message: message("Confirm your e-mail address first: follow the link we sent you, or ask for a new one.")
}, {
  httpApiStatus: 403,
  description:
    "403 `email_unverified`: the user has not yet confirmed their e-mail address, which this operation requires."
}) {}

export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", {
  code: Schema.tag("invalid_token"),
  message: message(
    "The link is not valid: it was already used, it expired, or a newer one was sent. Ask for a new one."
  )
}, {
  httpApiStatus: 400,
  description:
    "400 `invalid_token`: a one-time link's token (e-mail verification, invitation, password reset) is unknown, used or expired."
}) {}

export class ApiKeyInBrowser extends Schema.TaggedError<ApiKeyInBrowser>()("ApiKeyInBrowser", {
  code: Schema.tag("api_key_in_browser"),
  message: message(
    "API keys are for backends: this request came from a browser. Call the API from your server; the key is now treated as exposed, rotate it."
  )
}, {
  httpApiStatus: 403,
  description:
    "403 `api_key_in_browser`: an API key arrived with a browser's request marks (`Origin`, `Sec-Fetch-Site`, `Sec-Fetch-Dest`). Keys stay on servers; the key is treated as exposed."
}) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  code: Schema.tag("not_found"),
  message: message("No such resource.")
}, {
  httpApiStatus: 404,
  description:
    "404 `not_found`: no such resource for this credential: absent, malformed id, another tenant's or another environment's."
}) {}

/**
 * The path is one of the API's, but not for this method. Answered before routing, with an `Allow`
 * header naming the methods the path takes; a path the API does not have stays `404 not_found`.
 */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  code: Schema.tag("method_not_allowed"),
  message: message("This path does not take this method; the Allow header lists the methods it takes.")
}, { httpApiStatus: 405 }) {}

export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", {
  code: Schema.tag("idempotency_conflict"),
  message: message("A request with this Idempotency-Key is still in flight.")
}, {
  httpApiStatus: 409,
  description: "409 `idempotency_conflict`: a request with the same `Idempotency-Key` is still in flight."
}) {}

export class InvalidState extends Schema.TaggedError<InvalidState>()("InvalidState", {
  code: Schema.tag("invalid_state"),
  message: message("The operation does not apply in the resource's current state.")
}, {
  httpApiStatus: 409,
  description: "409 `invalid_state`: the operation does not apply in the resource's current state."
}) {}

/** A uniqueness clash; `issues` names the field whose value is taken when the request has one. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  code: Schema.tag("conflict"),
  message: message("The resource already exists."),
  issues: Schema.optionalKey(Schema.Array(ValidationIssue))
}, {
  httpApiStatus: 409,
  description:
    "409 `conflict`: a uniqueness clash, such as an e-mail already registered or a `reference` already used; `issues` names the field whose value is taken."
}) {}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  code: Schema.tag("payload_too_large"),
  message: message("The request body is larger than 1 MiB.")
}, { httpApiStatus: 413, description: "413 `payload_too_large`: the request body is over 1 MiB." }) {}

export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {
  code: Schema.tag("idempotency_key_reused"),
  message: message("This Idempotency-Key was used with a different request body.")
}, {
  httpApiStatus: 422,
  description: "422 `idempotency_key_reused`: the `Idempotency-Key` was used before with a different request body."
}) {}

/**
 * Live issuing without a claim on the tax id (SPEC §5, §7): another tenant has proven the tax id
 * with its certificate, so this tenant cannot hold one for it and issues test documents only.
 */
export class CredentialRequired extends Schema.TaggedError<CredentialRequired>()("CredentialRequired", {
  code: Schema.tag("credential_required"),
  message: message("Live documents need the tenant's active A1 certificate for its tax id.")
}, {
  httpApiStatus: 422,
  description:
    "422 `credential_required`: the document would go to the real authority, but the tenant has no active A1 certificate for its tax id."
}) {}

/**
 * A document needs a field of the provider's registration (SPEC §5) the tenant has not declared:
 * `issues` names each one (`registration.address.municipality_code`). Nothing was taken.
 */
export class RegistrationIncomplete extends Schema.TaggedError<RegistrationIncomplete>()("RegistrationIncomplete", {
  code: Schema.tag("registration_incomplete"),
  message: message("The tenant's registration lacks fields this document needs."),
  issues: Schema.Array(ValidationIssue)
}, {
  httpApiStatus: 422,
  description:
    "422 `registration_incomplete`: the document needs a field of the provider's registration that the tenant lacks; the message names it."
}) {}

/**
 * Credential uploads (SPEC §8). Each refusal has its own stable code so a dashboard can tell the
 * user what to fix; the messages are fixed texts that never echo the file or the password.
 */
export class InvalidCertificate extends Schema.TaggedError<InvalidCertificate>()("InvalidCertificate", {
  code: Schema.tag("invalid_certificate"),
  message: message("The file is not a usable PKCS#12 (.pfx/.p12) A1 certificate with its private key.")
}, {
  httpApiStatus: 422,
  description: "422 `invalid_certificate`: the file is not a usable A1 certificate; the message says why."
}) {}

export class CertificatePasswordIncorrect extends Schema.TaggedError<CertificatePasswordIncorrect>()(
  "CertificatePasswordIncorrect",
  {
    code: Schema.tag("certificate_password_incorrect"),
    message: message("The password does not open this PKCS#12 file.")
  },
  {
    httpApiStatus: 422,
    description: "422 `certificate_password_incorrect`: the password does not open the PKCS#12 file."
  }
) {}

export class CertificateExpired extends Schema.TaggedError<CertificateExpired>()("CertificateExpired", {
  code: Schema.tag("certificate_expired"),
  message: message("The certificate has expired.")
}, { httpApiStatus: 422, description: "422 `certificate_expired`: the certificate has expired." }) {}

export class CertificateNotYetValid extends Schema.TaggedError<CertificateNotYetValid>()("CertificateNotYetValid", {
  code: Schema.tag("certificate_not_yet_valid"),
  message: message("The certificate is not valid yet.")
}, {
  httpApiStatus: 422,
  description: "422 `certificate_not_yet_valid`: the certificate's validity has not started yet."
}) {}

export class CertificateTaxIdMismatch extends Schema.TaggedError<CertificateTaxIdMismatch>()(
  "CertificateTaxIdMismatch",
  {
    code: Schema.tag("certificate_tax_id_mismatch"),
    message: message("The certificate was not issued to the tenant's CNPJ.")
  },
  {
    httpApiStatus: 422,
    description: "422 `certificate_tax_id_mismatch`: the certificate was issued to another tax id than the tenant's."
  }
) {}

export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  code: Schema.tag("rate_limited"),
  message: message("Too many requests. Retry after the number of seconds in Retry-After."),
  retry_after: retryAfter
}, {
  httpApiStatus: 429,
  description:
    "429 `rate_limited`: a rate limit was hit. Retry after `retry_after` seconds (also the `Retry-After` header)."
}) {}

export class NotReady extends Schema.TaggedError<NotReady>()("NotReady", {
  code: Schema.tag("not_ready"),
  message: Schema.String,
  checks: Schema.Record(Schema.String, Schema.Literals(["ok", "failed"]))
}, {
  httpApiStatus: 503,
  description: "503 `not_ready`: this instance is not ready to serve: a readiness check failed."
}) {}

/** SPEC §2: a dependency (the database) is unreachable or timed out; never a 500. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  code: Schema.tag("service_unavailable"),
  message: message(
    "The service cannot reach its database right now. Retry after the number of seconds in Retry-After."
  ),
  retry_after: retryAfter
}, {
  httpApiStatus: 503,
  description:
    "503 `service_unavailable`: a dependency (the database, or Redis where required) is unreachable or timed out. Retry after `retry_after` seconds; an `Idempotency-Key` claim was released."
}) {}

export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  code: Schema.tag("internal_error"),
  message: message("Something went wrong on our side. Quote the x-request-id header when you contact support.")
}, {
  httpApiStatus: 500,
  description:
    "500 `internal_error`: something unexpected failed. The body carries no internals; quote `x-request-id` to support."
}) {}
