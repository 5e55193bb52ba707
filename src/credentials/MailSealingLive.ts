/**
 * The mail outbox's sealing (src/mail/Sealing.ts) under the credentials master key ring: the same
 * envelopes as stored certificates, so a rotated key reads older mail until it is sent.
 */
import { Effect, Layer } from "effect"
import { MailSealing, MailUnreadable } from "../mail/Sealing.js"
import { MasterKeys } from "./CredentialVault.js"
import { open, parseEnvelope, seal, serializeEnvelope } from "./Envelope.js"

const aad = (context: string) => `mail:${context}`

export const MailSealingLive = Layer.effect(
  MailSealing,
  Effect.map(MasterKeys, (ring) =>
    MailSealing.of({
      seal: (plaintext, context) => serializeEnvelope(seal(ring, new TextEncoder().encode(plaintext), aad(context))),
      open: (sealed, context) =>
        parseEnvelope(sealed).pipe(
          Effect.flatMap((envelope) => open(ring, envelope, aad(context))),
          Effect.map((bytes) => new TextDecoder().decode(bytes)),
          Effect.mapError((error) => new MailUnreadable({ message: error.message }))
        )
    }))
)
