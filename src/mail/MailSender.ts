/**
 * The MailSender: sends the claimed mail jobs of the MailQueue. A job's payload is opened, rendered
 * in its locale and handed to the transport outside any transaction; the outcome is then written
 * while this worker still holds the job's lease. A refused attempt is retried with exponential
 * backoff (`MAIL_RETRY_BASE_DELAY` … `MAIL_RETRY_MAX_DELAY`), until `MAIL_MAX_ATTEMPTS`; a mail
 * sent or given up has its sealed payload erased. A crash between sending and recording sends the
 * mail again once the lease runs out: delivery is at least once, as SMTP's own is. A note's mail to
 * its taker is composed when it is sent (NoteMailSource) and carries a Message-ID made of the
 * document and the mail's kind, the same on every attempt, so a mail sent twice is recognizably one.
 */
import { Duration, Effect, Layer, Metric, Option } from "effect"
import { AppConfig } from "../Config.js"
import type { TakerNotificationKind } from "../domain/Document.js"
import { now } from "../domain/Time.js"
import { delayAfter, exponentialBackoff } from "../queue/Backoff.js"
import { type JobEnd, LeaseLost } from "../queue/LeasedQueue.js"
import { makeWorker, runWorker } from "../queue/Worker.js"
import { mailMessages } from "../telemetry/Metrics.js"
import { type NoteMailOutcome, NoteMailSource, type NoteMailWithheld } from "./NoteMail.js"
import { renderNoteMail } from "./NoteTemplates.js"
import { type ClaimedMail, decodeOutgoingMail, MailQueue, type TakerNoteMessage } from "./Outbox.js"
import { MailSealing } from "./Sealing.js"
import { render } from "./Templates.js"
import { MailTransport, type MailTransportError } from "./Transport.js"

/** The note a mail is about, carried from its attempt to where its outcome is recorded. */
export interface NoteRef {
  readonly documentId: string
  readonly kind: TakerNotificationKind
}

/** What one attempt came to. */
export type MailAttempt =
  & (
    | { readonly _tag: "Sent" }
    | { readonly _tag: "Refused"; readonly error: string; readonly permanent: boolean }
    | { readonly _tag: "Unreadable"; readonly error: string }
    | { readonly _tag: "Withheld"; readonly reason: NoteMailWithheld }
  )
  & { readonly note?: NoteRef | undefined }

export interface MailFacts {
  readonly at: Date
  readonly retryDelay: Option.Option<Duration.Duration>
}

export type MailDecision =
  | { readonly _tag: "Sent"; readonly at: Date }
  | { readonly _tag: "Retrying"; readonly runAt: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly at: Date; readonly error: string }
  | { readonly _tag: "Withheld"; readonly at: Date; readonly reason: NoteMailWithheld }

/** The Message-ID of a note's mail: one per document and kind, whatever the attempt. */
export const noteMessageId = (note: NoteRef, fromAddress: string) =>
  `<${note.documentId}.${note.kind}@${fromAddress.split("@").pop() || "localhost"}>`

/** Pure: a refusal is retried while attempts and the schedule last, unless the server refused for good. */
export const decideMail = (attempt: MailAttempt, job: ClaimedMail, facts: MailFacts, maxAttempts: number) => {
  switch (attempt._tag) {
    case "Sent":
      return { _tag: "Sent", at: facts.at } satisfies MailDecision
    case "Unreadable":
      return { _tag: "Failed", at: facts.at, error: attempt.error } satisfies MailDecision
    case "Withheld":
      return { _tag: "Withheld", at: facts.at, reason: attempt.reason } satisfies MailDecision
    case "Refused":
      if (attempt.permanent || job.attempts >= maxAttempts || Option.isNone(facts.retryDelay)) {
        return {
          _tag: "Failed",
          at: facts.at,
          error: `${attempt.error} (gave up after ${job.attempts} attempt${job.attempts === 1 ? "" : "s"})`
        } satisfies MailDecision
      }
      return {
        _tag: "Retrying",
        runAt: new Date(facts.at.getTime() + Duration.toMillis(facts.retryDelay.value)),
        error: attempt.error
      } satisfies MailDecision
  }
}

const firstLink = (message: Record<string, unknown>) => typeof message["link"] === "string" ? message["link"] : null

/** How the document shows a note's mail after `decision`, the job's `attempts` included. */
const noteOutcome = (decision: MailDecision, attempts: number, at: Date): NoteMailOutcome => {
  switch (decision._tag) {
    case "Sent":
      return { status: "sent", attempts, sentAt: decision.at, lastError: null, at }
    case "Retrying":
      return { status: "pending", attempts, sentAt: null, lastError: decision.error, at }
    case "Failed":
      return { status: "failed", attempts, sentAt: null, lastError: decision.error, at }
    case "Withheld":
      return { status: decision.reason, attempts, sentAt: null, lastError: null, at }
  }
}

/** The job's end for `decision`, and what the mail's row keeps of it. */
const endOf = (decision: MailDecision): { readonly end: JobEnd; readonly fields: Record<string, unknown> } => {
  switch (decision._tag) {
    case "Sent":
      return { end: { final: "sent" }, fields: { payload: null, sentAt: decision.at, lastError: null } }
    case "Retrying":
      return { end: { runAt: decision.runAt }, fields: { lastError: decision.error } }
    case "Failed":
      return { end: { final: "failed" }, fields: { payload: null, lastError: decision.error } }
    case "Withheld":
      return { end: { final: "withheld" }, fields: { payload: null, lastError: `not sent: ${decision.reason}` } }
  }
}

export const makeMailSender = Effect.gen(function*() {
  const { mail: config } = yield* AppConfig
  const queue = yield* MailQueue
  const sealing = yield* MailSealing
  const transport = yield* MailTransport
  const notes = yield* NoteMailSource
  const schedule = exponentialBackoff({ baseDelay: config.retryBaseDelay, maxDelay: config.retryMaxDelay })

  const attempt = (job: ClaimedMail): Effect.Effect<Option.Option<MailAttempt>> =>
    Effect.gen(function*() {
      if (job.payload === null) return Option.some<MailAttempt>({ _tag: "Unreadable", error: "payload missing" })
      const opened = yield* sealing.open(job.payload, job.id).pipe(
        Effect.flatMap((json) => Effect.mapError(decodeOutgoingMail(json), (error) => ({ message: error.message }))),
        Effect.result
      )
      if (opened._tag === "Failure") {
        return Option.some<MailAttempt>({ _tag: "Unreadable", error: `payload unreadable: ${opened.failure.message}` })
      }
      const mail = opened.success
      const message = mail.message
      if (message.template === "taker_note") return Option.some(yield* sendNote(mail.to, message))
      return Option.some(
        yield* outcomeOf(transport.deliver({
          ...render(mail.locale, message),
          to: mail.to,
          template: message.template,
          link: firstLink(message as unknown as Record<string, unknown>)
        }))
      )
    })

  const outcomeOf = (delivery: Effect.Effect<void, MailTransportError>) =>
    delivery.pipe(
      Effect.as<MailAttempt>({ _tag: "Sent" }),
      Effect.catchTag("MailTransportError", (error) =>
        Effect.succeed<MailAttempt>({ _tag: "Refused", error: error.message, permanent: error.permanent }))
    )

  /** A note to its taker: composed now, from the note's files as the API serves them. */
  const sendNote = (to: string, message: TakerNoteMessage) =>
    Effect.gen(function*() {
      const note: NoteRef = { documentId: message.documentId, kind: message.kind }
      const composed = yield* notes.compose(note.documentId, note.kind, to).pipe(Effect.result)
      if (composed._tag === "Failure") {
        return { _tag: "Refused", error: composed.failure.message, permanent: false, note } satisfies MailAttempt
      }
      if (Option.isNone(composed.success)) {
        return { _tag: "Unreadable", error: "the document no longer exists", note } satisfies MailAttempt
      }
      const mail = composed.success.value
      if (mail._tag === "Withhold") return { _tag: "Withheld", reason: mail.reason, note } satisfies MailAttempt
      const { attachments, note: facts, replyTo, senderName } = mail.content
      const outcome = yield* outcomeOf(transport.deliver({
        ...renderNoteMail(facts),
        to,
        template: message.template,
        link: null,
        fromName: senderName,
        replyTo,
        messageId: noteMessageId(note, config.fromAddress),
        attachments
      }))
      return { ...outcome, note }
    })

  return yield* makeWorker({
    queue,
    span: (job: ClaimedMail) => ({
      name: "MailSender.send",
      kind: "producer",
      attributes: { "mail.id": job.id, "mail.template": job.template, "mail.attempt": job.attempts }
    }),
    leaseLost: "lost the lease on a mail job; its new owner sends it",
    prefetch: () => Effect.void,
    attempt,
    facts: (job, attempt): Effect.Effect<MailFacts> =>
      Effect.gen(function*() {
        const at = yield* now
        const retryDelay = attempt._tag === "Refused" ? yield* delayAfter(schedule, job.attempts) : Option.none()
        return { at, retryDelay }
      }),
    decide: (attempt, job, facts) => ({ decision: decideMail(attempt, job, facts, config.maxAttempts), attempt }),
    apply: ({ attempt, decision }, job) =>
      Effect.gen(function*() {
        const { end, fields } = endOf(decision)
        if (attempt.note === undefined) {
          return yield* "final" in end ? queue.complete(job, end.final, fields) : queue.retryAt(job, end.runAt, fields)
        }
        // The note's mail and the document's account of it change together, or neither does.
        const at = yield* now
        const held = yield* notes.recording(
          attempt.note.documentId,
          attempt.note.kind,
          noteOutcome(decision, job.attempts, at),
          queue.ending(job, end, at, fields)
        )
        if (!held) return yield* new LeaseLost()
      }),
    singleWrite: () => true,
    settled: ({ decision }, attempt) =>
      Effect.andThen(
        decision._tag === "Failed"
          ? Effect.logWarning("mail given up").pipe(Effect.annotateLogs({
            "mail.error": decision.error,
            ...(attempt.note === undefined ? {} : { "document.id": attempt.note.documentId })
          }))
          : Effect.void,
        Metric.update(
          Metric.withAttributes(mailMessages, {
            outcome: decision._tag === "Sent"
              ? "sent"
              : decision._tag === "Retrying"
              ? "retrying"
              : decision._tag === "Withheld"
              ? "withheld"
              : "failed",
            kind: attempt.note === undefined ? "account" : "note"
          }),
          1
        )
      )
  })
})

/** The sender: `MAIL_CONCURRENCY` mails in flight on this instance, woken by NOTIFY or the poll. */
export const MailSenderLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const { mail } = yield* AppConfig
    yield* runWorker(yield* makeMailSender, mail)
  })
)
