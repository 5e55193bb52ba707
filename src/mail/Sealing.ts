/**
 * What the outbox needs to keep a queued mail unreadable at rest: its payload (the address and the
 * link with its one-time token) is sealed, bound to the job's id, and opened only to send it. The
 * credentials module implements it with the master key ring (src/credentials/MailSealingLive.ts),
 * so this module never imports credentials.
 */
import { Context, type Effect, Schema } from "effect"

export class MailUnreadable extends Schema.TaggedError<MailUnreadable>()("MailUnreadable", {
  message: Schema.String
}) {}

export class MailSealing extends Context.Service<MailSealing, {
  /** Seals `plaintext` so that it opens only with the same `context` (the job's id). */
  readonly seal: (plaintext: string, context: string) => string
  readonly open: (sealed: string, context: string) => Effect.Effect<string, MailUnreadable>
}>()("etd/MailSealing") {}
