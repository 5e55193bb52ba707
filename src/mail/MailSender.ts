/**
 * The MailSender: sends the claimed mail jobs of the MailQueue. A job's payload is opened, rendered
 * in its locale and handed to the transport outside any transaction; the outcome is then written
 * while this worker still holds the job's lease. A refused attempt is retried with exponential
 * backoff (`MAIL_RETRY_BASE_DELAY` … `MAIL_RETRY_MAX_DELAY`), until `MAIL_MAX_ATTEMPTS`; a mail
 * sent or given up has its sealed payload erased. A crash between sending and recording sends the
 * mail again once the lease runs out: delivery is at least once, as SMTP's own is.
 */
import { Duration, Effect, Layer, Metric, Option } from "effect"
import { AppConfig } from "../Config.js"
import { now } from "../domain/Time.js"
import { delayAfter, exponentialBackoff } from "../queue/Backoff.js"
import { makeWorker, runWorker } from "../queue/Worker.js"
import { mailMessages } from "../telemetry/Metrics.js"
import { type ClaimedMail, decodeOutgoingMail, MailQueue } from "./Outbox.js"
import { MailSealing } from "./Sealing.js"
import { render } from "./Templates.js"
import { MailTransport } from "./Transport.js"

/** What one attempt came to. */
export type MailAttempt =
  | { readonly _tag: "Sent" }
  | { readonly _tag: "Refused"; readonly error: string; readonly permanent: boolean }
  | { readonly _tag: "Unreadable"; readonly error: string }

export interface MailFacts {
  readonly at: Date
  readonly retryDelay: Option.Option<Duration.Duration>
}

export type MailDecision =
  | { readonly _tag: "Sent"; readonly at: Date }
  | { readonly _tag: "Retrying"; readonly runAt: Date; readonly error: string }
  | { readonly _tag: "Failed"; readonly at: Date; readonly error: string }

/** Pure: a refusal is retried while attempts and the schedule last, unless the server refused for good. */
export const decideMail = (attempt: MailAttempt, job: ClaimedMail, facts: MailFacts, maxAttempts: number) => {
  switch (attempt._tag) {
    case "Sent":
      return { _tag: "Sent", at: facts.at } satisfies MailDecision
    case "Unreadable":
      return { _tag: "Failed", at: facts.at, error: attempt.error } satisfies MailDecision
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

export const makeMailSender = Effect.gen(function*() {
  const { mail: config } = yield* AppConfig
  const queue = yield* MailQueue
  const sealing = yield* MailSealing
  const transport = yield* MailTransport
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
      const rendered = render(mail.locale, mail.message)
      const outcome = yield* transport.deliver({
        ...rendered,
        to: mail.to,
        template: mail.message.template,
        link: firstLink(mail.message as unknown as Record<string, unknown>)
      }).pipe(
        Effect.as<MailAttempt>({ _tag: "Sent" }),
        Effect.catchTag("MailTransportError", (error) =>
          Effect.succeed<MailAttempt>({ _tag: "Refused", error: error.message, permanent: error.permanent }))
      )
      return Option.some(outcome)
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
    decide: (attempt, job, facts) => decideMail(attempt, job, facts, config.maxAttempts),
    apply: (decision: MailDecision, job) => {
      switch (decision._tag) {
        case "Sent":
          return queue.complete(job, "sent", { payload: null, sentAt: decision.at, lastError: null })
        case "Retrying":
          return queue.retryAt(job, decision.runAt, { lastError: decision.error })
        case "Failed":
          return queue.complete(job, "failed", { payload: null, lastError: decision.error })
      }
    },
    singleWrite: () => true,
    settled: (decision) =>
      Effect.andThen(
        decision._tag === "Failed"
          ? Effect.logWarning("mail given up").pipe(Effect.annotateLogs({ "mail.error": decision.error }))
          : Effect.void,
        Metric.update(
          Metric.withAttributes(mailMessages, {
            outcome: decision._tag === "Sent" ? "sent" : decision._tag === "Retrying" ? "retrying" : "failed"
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
