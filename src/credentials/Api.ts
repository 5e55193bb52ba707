/**
 * Credentials (SPEC §8): tenants upload their A1 certificate (PKCS#12) and read back its metadata.
 * The certificate's key material and the password never leave the service through this contract.
 */
import { Schema, SchemaTransformation } from "effect"
import { Multipart } from "effect/http"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { KeyOrSessionAuth, SessionAuth } from "../domain/Authentication.js"
import { Credential } from "../domain/Credential.js"
import {
  CertificateExpired,
  CertificateNotYetValid,
  CertificatePasswordIncorrect,
  CertificateTaxIdMismatch,
  Conflict,
  EmailUnverified,
  Forbidden,
  InvalidCertificate,
  NotFound
} from "../domain/Errors.js"
import { IdOf, TenantIdParam } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { managerRoles, memberRoles, RequiredRoles, RequiredScope } from "../domain/Principal.js"

/**
 * The largest accepted PKCS#12 file. Real A1 bundles are 3–10 KiB (key + certificate + chain);
 * the limit keeps the synchronous parser's work small.
 */
export const MAX_PKCS12_BYTES = 64 * 1024

/**
 * The multipart parser's own per-part limit: it stops reading (413) as soon as a part grows past
 * it, so an oversized file is never spooled to disk in full. It counts the part's headers too, so it
 * sits a little above `MAX_PKCS12_BYTES`; the exact 64 KiB limit is checked by the service.
 */
const MULTIPART_PART_LIMIT = MAX_PKCS12_BYTES + 8 * 1024

// Fixed messages: Schema's default ones quote the actual value, which here is a secret.
const Password = Schema.RedactedFromValue(
  Schema.String.annotate({ message: "password must be a text value" }).check(
    Schema.isMaxLength(1024, { message: "password must have at most 1024 characters" })
  )
)

export const UploadCredentialJson = Schema.Struct({
  pkcs12: Schema.String.annotate({ message: "pkcs12 must be a base64 string" }).check(
    Schema.isMinLength(1, { message: "pkcs12 must not be empty" }),
    Schema.isPattern(/^[A-Za-z0-9+/=_\s-]+$/u, { message: "pkcs12 must be the base64 of the .pfx file" })
  ).annotate({ description: "The PKCS#12 (.pfx/.p12) file, base64 (standard or URL-safe)." }),
  password: Password
}).annotate({
  identifier: "UploadCredentialJson",
  description: "An A1 certificate upload as JSON: the PKCS#12 file in base64 and its password."
})

// `Multipart.SingleFileSchema` with one fixed message for every way the `file` field can be wrong
// (missing aside); the OpenAPI document shows it as a binary string.
const fileMessage = "file must be exactly one uploaded .pfx/.p12 file"
const SingleFile = Schema.Array(Multipart.PersistedFileSchema.annotate({ message: fileMessage }))
  .annotate({ message: fileMessage })
  .check(Schema.isBetweenLength(1, 1, { message: fileMessage }))
  .pipe(
    Schema.decodeTo(
      Multipart.PersistedFileSchema,
      SchemaTransformation.transform({ decode: ([file]) => file, encode: (file) => [file] })
    )
  )
  .annotate({ description: "The PKCS#12 (.pfx/.p12) file." })

/**
 * The multipart form. Its parser limit applies to this encoding only (v4 keeps the encodings of a
 * payload apart), so the JSON body is not documented as multipart too.
 */
export const UploadCredentialMultipart = Schema.Struct({
  file: SingleFile,
  password: Password
}).pipe(HttpApiSchema.asMultipart({ maxFileSize: MULTIPART_PART_LIMIT }))

/**
 * Either encoding: the server picks the member by the request's content type, and the OpenAPI
 * document lists both. A multipart upload is cut off by the parser a little past 64 KiB (see
 * `MULTIPART_PART_LIMIT`); the exact 64 KiB file limit is checked by the service before the file
 * is parsed, for both encodings.
 */
export const UploadCredential = [UploadCredentialJson, UploadCredentialMultipart] as const
export type UploadCredential = typeof UploadCredentialJson.Type | typeof UploadCredentialMultipart.Type

const CredentialId = IdOf("credential")

export class CredentialsApi extends HttpApiGroup.make("credentials")
  .add(
    HttpApiEndpoint.post("upload", "/tenants/:tenantId/credentials", {
      params: { tenantId: TenantIdParam },
      payload: UploadCredential,
      success: Credential.pipe(HttpApiSchema.status(201)),
      error: [
        InvalidCertificate,
        CertificatePasswordIncorrect,
        CertificateExpired,
        CertificateNotYetValid,
        CertificateTaxIdMismatch,
        Conflict,
        Forbidden,
        EmailUnverified
      ]
    })
      .annotate(OpenApi.Summary, "Upload an A1 certificate")
      .middleware(SessionAuth)
      .annotate(RequiredRoles, managerRoles)
      .annotate(
        OpenApi.Description,
        "Uploads the tenant's A1 certificate: `multipart/form-data` with the fields `file` and `password`, or JSON " +
          "`{pkcs12: <base64>, password}`. The file is at most 64 KiB. The certificate must be valid now and issued to " +
          "the tenant's CNPJ. It becomes the active credential; the previous one is marked `replaced`. When it chains " +
          "to an ICP-Brasil root through the CAs the file carries (export it with its certification path) and names " +
          "the tenant's CNPJ/CPF in its ICP-Brasil otherName fields (2.16.76.1.3.3, 2.16.76.1.3.1) or its CN, it is " +
          "stored with `verified_chain: true` and proves the tenant's tax id (`verified: true`); `409 conflict` when " +
          "another tenant has proven it first. Any other certificate (self-signed, a test CA) is stored with " +
          "`verified_chain: false` for test documents: it proves nothing and cannot sign live documents for the " +
          "national system. The private key is stored encrypted; the password is used once to open the file and is " +
          "not stored. Uploads are limited per tenant, per user and over the whole service (`429 rate_limited`), and " +
          "a tenant or user has one file being opened at a time (`429`); when every thread that opens files is busy " +
          "and its short queue is full, or the wait for one runs out, the answer is `503 service_unavailable`. Both " +
          "carry `Retry-After`. The uploader's e-mail address must be verified (`403 email_unverified` until then)."
      ),
    HttpApiEndpoint.get("list", "/tenants/:tenantId/credentials", {
      params: { tenantId: TenantIdParam },
      query: PageParams,
      success: Page(Credential)
    })
      .annotate(OpenApi.Summary, "List credentials")
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "credentials:read")
      .annotate(RequiredRoles, memberRoles)
      .annotate(
        OpenApi.Description,
        "The tenant's credentials, newest first: metadata only, never the content. For an API key with `credentials:read` or any member's session."
      ),
    HttpApiEndpoint.get("get", "/tenants/:tenantId/credentials/:credId", {
      params: { tenantId: TenantIdParam, credId: CredentialId },
      success: Credential,
      error: NotFound
    })
      .annotate(OpenApi.Summary, "Get a credential")
      .annotate(
        OpenApi.Description,
        "One credential's metadata (subject, issuer, tax id, validity, fingerprint, status); never its content. For an API key with `credentials:read` or any member's session."
      )
      .middleware(KeyOrSessionAuth)
      .annotate(RequiredScope, "credentials:read")
      .annotate(RequiredRoles, memberRoles)
  )
  .annotate(OpenApi.Title, "Credentials")
  .annotate(
    OpenApi.Description,
    "The tenant's A1 digital certificate (PKCS#12), which signs what goes to the national system. Uploaded from a session (`owner` or `admin`); its metadata read with a key or any member's session; the key material never leaves the service."
  )
{}
