/** Whether a parsed certificate may be stored for a tenant. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { ParsedCertificate } from "./CertificateFields.js"
import { normalizeTaxIdChars } from "./CertificateTaxId.js"

export const CertificateRejectedReason = Schema.Literals([
  "expired",
  "not_yet_valid",
  "tax_id_mismatch",
  "tax_id_missing"
])
export type CertificateRejectedReason = typeof CertificateRejectedReason.Type

export class CertificateRejected extends Schema.TaggedError<CertificateRejected>()("CertificateRejected", {
  reason: CertificateRejectedReason,
  message: Schema.String
}) {}

const rejected = (reason: CertificateRejectedReason, message: string) =>
  Effect.fail(new CertificateRejected({ reason, message }))

/**
 * Accepts at `now` a certificate within its validity period (bounds inclusive, as in RFC 5280)
 * and issued to the tenant's tax id.
 */
export const checkCertificate = <A extends Pick<ParsedCertificate, "notBefore" | "notAfter" | "taxId">>(
  parsed: A,
  options: { readonly now: Date; readonly tenantTaxId: string }
): Effect.Effect<A, CertificateRejected> => {
  const now = options.now.getTime()
  if (now > parsed.notAfter.getTime()) {
    return rejected("expired", `The certificate expired at ${parsed.notAfter.toISOString()}`)
  }
  if (now < parsed.notBefore.getTime()) {
    return rejected("not_yet_valid", `The certificate is not valid before ${parsed.notBefore.toISOString()}`)
  }
  if (parsed.taxId === null) {
    return rejected(
      "tax_id_missing",
      "The certificate does not carry a CNPJ (subjectAltName 2.16.76.1.3.3 or CN suffix)"
    )
  }
  if (normalizeTaxIdChars(parsed.taxId) !== normalizeTaxIdChars(options.tenantTaxId)) {
    return rejected("tax_id_mismatch", "The certificate was issued to a different tax id than the tenant's")
  }
  return Effect.succeed(parsed)
}
