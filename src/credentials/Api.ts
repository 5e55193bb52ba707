/**
 * Credentials (SPEC §8): tenants upload their A1 certificate (PKCS#12) and read back its metadata.
 * The certificate's key material and the password never leave the service through this contract.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, Multipart, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  CertificateExpired,
  CertificateNotYetValid,
  CertificatePasswordIncorrect,
  CertificateTaxIdMismatch,
  Forbidden,
  InvalidCertificate,
  NotFound
} from "../domain/Errors.js"
import { IdOf } from "../domain/Ids.js"
import { Page, PageParams } from "../domain/Pagination.js"
import { RequiredRoles, RequiredScope, type Role } from "../domain/Principal.js"
import { ApiKeyAuth, SessionAuth } from "../keys/Authentication.js"

/**
 * The largest accepted PKCS#12 file. Real A1 bundles are 3–10 KiB (key + certificate + chain);
 * the limit keeps the synchronous parser's work small.
 */
export const MAX_PKCS12_BYTES = 64 * 1024

export const CredentialStatus = Schema.Literal("active", "expired", "replaced")
export type CredentialStatus = typeof CredentialStatus.Type

export class Credential extends Schema.Class<Credential>("Credential")({
  id: Schema.String,
  object: Schema.tag("credential"),
  kind: Schema.Literal("a1_certificate"),
  subject: Schema.String.annotations({ description: "Subject DN, RFC 4514 (most specific first)." }),
  issuer: Schema.String,
  serial_number: Schema.String.annotations({ description: "Lower-case hex." }),
  tax_id: Schema.String.annotations({ description: "The CNPJ the certificate was issued to, digits only." }),
  not_before: Schema.Date,
  not_after: Schema.Date,
  fingerprint_sha256: Schema.String.annotations({ description: "Lower-case hex SHA-256 of the certificate's DER." }),
  status: CredentialStatus.annotations({
    description: "`active`: the one in use; `replaced`: a newer upload took over; `expired`: past `not_after`."
  }),
  created_at: Schema.Date
}) {}

// Fixed messages: Schema's default ones quote the actual value, which here is a secret.
const Password = Schema.String.annotations({ message: () => "password must be a text value" }).pipe(
  Schema.maxLength(1024, { message: () => "password must have at most 1024 characters" }),
  Schema.Redacted
)

export const UploadCredentialJson = Schema.Struct({
  pkcs12: Schema.String.annotations({ message: () => "pkcs12 must be a base64 string" }).pipe(
    Schema.minLength(1, { message: () => "pkcs12 must not be empty" }),
    Schema.pattern(/^[A-Za-z0-9+/=_\s-]+$/, { message: () => "pkcs12 must be the base64 of the .pfx file" }),
    Schema.annotations({ description: "The PKCS#12 (.pfx/.p12) file, base64 (standard or URL-safe)." })
  ),
  password: Password
}).annotations({ identifier: "UploadCredentialJson" })

export const UploadCredentialMultipart = HttpApiSchema.Multipart(
  Schema.Struct({
    file: Multipart.SingleFileSchema.annotations({
      message: () => "file must be exactly one uploaded .pfx/.p12 file",
      description: "The PKCS#12 (.pfx/.p12) file.",
      // What a client sends; the framework's own schema describes the server's temporary file.
      jsonSchema: { type: "string", format: "binary" }
    }),
    password: Password
  }).annotations({ identifier: "UploadCredentialMultipart" })
)

/**
 * Either encoding: the server picks the member by the request's content type, and the OpenAPI
 * document lists both. Per-endpoint multipart limits would have to annotate the union itself, which
 * the framework copies onto every member (documenting the JSON body as multipart too); so a
 * multipart upload is bounded by the API's 1 MiB body limit while it is read, and the 64 KiB file
 * limit is checked by the service before the file is parsed.
 */
export const UploadCredential = Schema.Union(UploadCredentialJson, UploadCredentialMultipart)

const tenantPath = HttpApiSchema.param("tenantId", IdOf("tenant"))
const credentialPath = HttpApiSchema.param("credId", IdOf("credential"))
const ownerOrAdmin: ReadonlyArray<Role> = ["owner", "admin"]

export class CredentialsApi extends HttpApiGroup.make("credentials")
  .add(
    HttpApiEndpoint.post("upload")`/v1/tenants/${tenantPath}/credentials`
      .setPayload(UploadCredential)
      .addSuccess(Credential, { status: 201 })
      .addError(InvalidCertificate)
      .addError(CertificatePasswordIncorrect)
      .addError(CertificateExpired)
      .addError(CertificateNotYetValid)
      .addError(CertificateTaxIdMismatch)
      .addError(Forbidden)
      .middleware(SessionAuth)
      .annotate(RequiredRoles, ownerOrAdmin)
      .annotate(
        OpenApi.Description,
        "Uploads the tenant's A1 certificate: `multipart/form-data` with the fields `file` and `password`, or JSON " +
          "`{pkcs12: <base64>, password}`. The file is at most 64 KiB. The certificate must be valid now and issued to " +
          "the tenant's CNPJ. It becomes the active credential; the previous one is marked `replaced`. The private key " +
          "is stored encrypted; the password is used once to open the file and is not stored."
      )
  )
  .add(
    HttpApiEndpoint.get("list")`/v1/tenants/${tenantPath}/credentials`
      .setUrlParams(PageParams)
      .addSuccess(Page(Credential))
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "credentials:read")
      .annotate(OpenApi.Description, "The tenant's credentials, newest first: metadata only, never the content.")
  )
  .add(
    HttpApiEndpoint.get("get")`/v1/tenants/${tenantPath}/credentials/${credentialPath}`
      .addSuccess(Credential)
      .addError(NotFound)
      .middleware(ApiKeyAuth)
      .annotate(RequiredScope, "credentials:read")
  )
  .annotate(OpenApi.Title, "Credentials")
{}
