/**
 * Credentials as the API shows them (SPEC §8), shared by the credentials module's contract, its
 * repository and its services. The key material never appears here: only metadata.
 */
import { Data, Schema } from "effect"
import type { TenantId } from "./Ids.js"
import { DateTime } from "./Time.js"

export const CredentialKind = Schema.Literal("a1_certificate")

export const CredentialStatus = Schema.Literals(["active", "expired", "replaced"])
export type CredentialStatus = typeof CredentialStatus.Type

export class Credential extends Schema.Class<Credential>("Credential")({
  id: Schema.String,
  object: Schema.tag("credential"),
  kind: CredentialKind,
  subject: Schema.String.annotate({ description: "Subject DN, RFC 4514 (most specific first)." }),
  issuer: Schema.String,
  serial_number: Schema.String.annotate({ description: "Lower-case hex." }),
  tax_id: Schema.String.annotate({ description: "The CNPJ the certificate was issued to, digits only." }),
  not_before: DateTime,
  not_after: DateTime,
  fingerprint_sha256: Schema.String.annotate({ description: "Lower-case hex SHA-256 of the certificate's DER." }),
  verified_chain: Schema.Boolean.annotate({
    description: "Whether the certificate chained, when uploaded, to an ICP-Brasil root (or a root the operator " +
      "configured): its path through the CAs the file carries was valid, and it names the tenant's CNPJ/CPF in the " +
      "ICP-Brasil otherName fields or the CN. Only such a credential verifies the tenant's tax id and signs live " +
      "documents for the national system, which accepts only ICP-Brasil certificates (the `X509Certificate` of the " +
      "DPS signature); `false`: stored for test documents only."
  }),
  status: CredentialStatus.annotate({
    description: "`active`: the one in use; `replaced`: a newer upload took over; `expired`: past `not_after`."
  }),
  created_at: DateTime
}, { description: "A tenant's A1 certificate: its metadata only, never the content or the password." }) {}

/**
 * Another upload for the same tenant committed its active credential first (one active credential
 * per tenant): retrying the upload makes it replace that one.
 */
export class ActiveCredentialTaken extends Data.TaggedError("ActiveCredentialTaken")<{ readonly tenantId: TenantId }> {}
