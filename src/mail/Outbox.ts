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
import { SqlClient, type Statement } from "effect/sql"
import { AppConfig } from "../Config.js"
import type { StatementParts } from "../db/Repository.js"
import type { TakerNotificationKind } from "../domain/Document.js"
import { makeId } from "../domain/Ids.js"
import type { Role } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
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
  | TakerNoteMessage

/**
 * A note to its taker: only which document and which of its mails. The sender reads the note's
 * files and its tenant's settings when it sends (NoteMailSource), so the queue holds no megabytes
 * and a retry attaches the files as the API serves them then.
 */
export interface TakerNoteMessage {
  readonly template: "taker_note"
  readonly documentId: string
  readonly kind: TakerNotificationKind
}

/** The mails whose words are all in the message (Templates.render). */
export type AccountMessage = Exclude<MailMessage, TakerNoteMessage>

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
  /**
   * The mail's job as parts of another repository's statement (the CTE `queued_mail`), written only
   * where the gate it is given holds: the mail commits with the write that causes it, in its round trip.
   */
  readonly queueing: (mail: OutgoingMail) => Effect.Effect<(gate: Statement.Fragment) => StatementParts>
}>()("etd/Outbox") {
  static readonly layerNoDeps = Layer.effect(
    this,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const queue = yield* MailQueue
      const sealing = yield* MailSealing
      const jobOf = (mail: OutgoingMail) =>
        Effect.gen(function*() {
          const id = yield* makeId("mail")
          yield* Effect.annotateCurrentSpan({ "mail.id": id, "mail.template": mail.message.template })
          return {
            id,
            recipientKey: bytesToHex(sha256(new TextEncoder().encode(normalizeEmail(mail.to)))),
            template: mail.message.template,
            payload: sealing.seal(JSON.stringify(mail), id),
            traceparent: yield* currentTraceparent
          }
        })
      return Outbox.of({
        send: Effect.fn("Outbox.send")(function*(mail: OutgoingMail) {
          yield* queue.enqueue([yield* jobOf(mail)])
        }),
        queueing: (mail) =>
          Effect.gen(function*() {
            const queued = queue.enqueueing(yield* jobOf(mail), yield* now)
            return (gate) => ({
              ctes: sql`queued_mail AS (${queued.insertWhen(gate)} RETURNING 1)`,
              // PostgreSQL sends it at commit, so a sender never wakes before the row exists.
              select:
                sql`(SELECT pg_notify(${queued.channel}, 'queued') FROM (SELECT 1 FROM queued_mail LIMIT 1) AS one)`
            })
          })
      })
    })
  )
  static readonly layer = this.layerNoDeps.pipe(Layer.provideMerge(MailQueue.layer))
}
