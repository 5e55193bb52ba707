/**
 * The outbox: how any module sends mail. `send` queues a durable job on the shared leased queue
 * (`mail_jobs`) in the caller's transaction when one is open, so a business write and its mail
 * commit together or not at all; the MailSender worker renders and sends it afterwards, with
 * retries. The payload is sealed (MailSealing) bound to the job's id: the link's one-time token is
 * never readable at rest, and the sealed payload is erased once the mail is sent or given up.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig } from "../Config.js"
import { makeId } from "../domain/Ids.js"
import type { Role } from "../domain/Principal.js"
import { normalizeEmail } from "../domain/User.js"
import { type LeasedQueue, LeaseFields, makeLeasedQueue } from "../queue/LeasedQueue.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import { MailSealing } from "./Sealing.js"

export type MailLocale = "pt-BR" | "en"

export type MailMessage =
  | {
    readonly template: "email_verification"
    readonly name: string | null
    readonly link: string
    readonly expiresAt: Date
  }
  | {
    readonly template: "password_reset"
    readonly name: string | null
    readonly link: string
    readonly expiresAt: Date
  }
  | {
    readonly template: "invitation"
    readonly tenantName: string
    readonly role: Role
    readonly inviterName: string | null
    readonly link: string
    readonly expiresAt: Date
  }
  | { readonly template: "tax_id_verified_elsewhere"; readonly tenantName: string; readonly taxId: string }

export interface OutgoingMail {
  readonly to: string
  readonly locale: MailLocale
  readonly message: MailMessage
}

/** The sealed payload, as JSON: dates travel as ISO strings. */
export const OutgoingMailJson = Schema.fromJsonString(Schema.Struct({
  to: Schema.String,
  locale: Schema.Literals(["pt-BR", "en"]),
  message: Schema.Record(Schema.String, Schema.Unknown)
}))

/** Reads a sealed payload back: the dates of `expiresAt` are revived. */
export const decodeOutgoingMail = (json: string): Effect.Effect<OutgoingMail, Schema.SchemaError> =>
  Effect.map(Schema.decodeUnknownEffect(OutgoingMailJson)(json), (mail) => ({
    to: mail.to,
    locale: mail.locale,
    message: (typeof mail.message["expiresAt"] === "string"
      ? { ...mail.message, expiresAt: new Date(mail.message["expiresAt"]) }
      : mail.message) as unknown as MailMessage
  }))

export const ClaimedMail = Schema.Struct({
  ...LeaseFields,
  id: Schema.String,
  template: Schema.String,
  payload: Schema.NullOr(Schema.String),
  traceparent: Schema.NullOr(Schema.String)
})
export type ClaimedMail = typeof ClaimedMail.Type

interface NewMail {
  readonly id: string
  readonly recipientKey: string
  readonly template: string
  readonly payload: string
  readonly traceparent: string | null
}

/** Mail jobs on the shared leased queue, grouped for fairness by recipient (a hash of the address). */
export class MailQueue extends Context.Service<MailQueue, LeasedQueue<ClaimedMail, NewMail>>()("etd/MailQueue") {
  static readonly layer = Layer.effect(
    this,
    Effect.gen(function*() {
      const { mail } = yield* AppConfig
      return yield* makeLeasedQueue<ClaimedMail, NewMail>({
        name: "mail",
        table: "mail_jobs",
        stateColumn: "state",
        dueColumn: "run_at",
        job: ClaimedMail,
        channel: "etd_mail_jobs",
        row: (job, at) => ({ ...job, state: "pending", runAt: at, createdAt: at, updatedAt: at }),
        // A mailbox whose server hangs holds at most half the senders.
        fairness: { tenant: { column: "recipient_key", cap: Math.max(1, Math.ceil(mail.concurrency / 2)) } }
      })
    })
  )
}

export class Outbox extends Context.Service<Outbox, {
  /** Queues the mail, in the caller's transaction when one is open. */
  readonly send: (mail: OutgoingMail) => Effect.Effect<void>
}>()("etd/Outbox") {
  static readonly layerNoDeps = Layer.effect(
    this,
    Effect.gen(function*() {
      const queue = yield* MailQueue
      const sealing = yield* MailSealing
      return Outbox.of({
        send: Effect.fn("Outbox.send")(function*(mail: OutgoingMail) {
          const id = yield* makeId("mail")
          yield* Effect.annotateCurrentSpan({ "mail.id": id, "mail.template": mail.message.template })
          yield* queue.enqueue([{
            id,
            recipientKey: bytesToHex(sha256(new TextEncoder().encode(normalizeEmail(mail.to)))),
            template: mail.message.template,
            payload: sealing.seal(JSON.stringify(mail), id),
            traceparent: yield* currentTraceparent
          }])
        })
      })
    })
  )
  static readonly layer = this.layerNoDeps.pipe(Layer.provideMerge(MailQueue.layer))
}
