import * as Schema from "effect/Schema"

export const Pkcs12ErrorReason = Schema.Literals([
  "wrong_password",
  "malformed",
  "no_certificate",
  "no_private_key",
  "too_costly"
])
export type Pkcs12ErrorReason = typeof Pkcs12ErrorReason.Type

export class Pkcs12Error extends Schema.TaggedError<Pkcs12Error>()("Pkcs12Error", {
  reason: Pkcs12ErrorReason,
  message: Schema.String
}) {}

// The messages are fixed strings on purpose: forge's own errors are not passed through, so nothing
// derived from the password or the decrypted content can reach a response or a log.
const messages: Record<Pkcs12ErrorReason, string> = {
  wrong_password: "The PKCS#12 password is incorrect",
  malformed: "The file is not a readable PKCS#12 (.pfx/.p12) bundle",
  no_certificate: "The PKCS#12 bundle has no certificate matching its private key",
  no_private_key: "The PKCS#12 bundle has no RSA private key",
  too_costly:
    "Opening the PKCS#12 file would take too much work (too many key-derivation iterations, or too long); export it again with the default settings"
}

export const pkcs12Error = (reason: Pkcs12ErrorReason): Pkcs12Error =>
  new Pkcs12Error({ reason, message: messages[reason] })
