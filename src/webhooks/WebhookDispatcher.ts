/**
 * The WebhookDispatcher (SPEC §9): sends one claimed delivery of the DeliveryQueue and records the
 * attempt and its outcome. The queue (src/queue/) does the claiming, leasing, fencing and waking;
 * what an outcome means for the delivery and its endpoint is DeliveryDecision's.
 *
 * The POST happens outside any transaction; the attempt is recorded on its own (every attempt that
 * was sent is kept), then the outcome (in one transaction when it is several writes), only while
 * this worker still holds the delivery's lease. A crash leaves the delivery leased; once the lease runs out another worker (of
 * any instance) sends it again. Receivers deduplicate on `webhook-id`, which is the event id and
 * never changes between attempts. IP-literal hosts, for which node skips `lookup`, are checked by
 * `checkUrl` before each attempt.
 */
import { Array as Arr, Cause, Context, Duration, Effect, Layer, Metric, Option, Random, Result, Schedule } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { AppConfig } from "../Config.js"
import type { RecordedEvent } from "../domain/Events.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { EventLog } from "../events/EventLog.js"
import { delayAfter } from "../queue/Backoff.js"
import { LeaseLost } from "../queue/LeasedQueue.js"
import { makeWorker, runWorker } from "../queue/Worker.js"
import { webhookDeliveries, webhookDuration } from "../telemetry/Metrics.js"
import { currentTraceparent } from "../telemetry/TraceContext.js"
import {
  countsAsFailing,
  decideDelivery,
  type DeliveryAttempt,
  type DeliveryDecision,
  type DeliveryFacts,
  DeliveryOutcome,
  isSingleWrite,
  metricOutcome
} from "./DeliveryDecision.js"
import { type ClaimedDelivery, DeliveryQueue, endWaitingDeliveries } from "./DeliveryQueue.js"
import { send, type SendResult } from "./Sender.js"
import { webhookHeaders } from "./Signing.js"
import { checkUrl, guardedLookup, type Resolver } from "./SsrfGuard.js"
import { type AttemptRow, WebhookRepo } from "./WebhookRepo.js"

const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [
  Duration.seconds(5),
  Duration.minutes(5),
  Duration.minutes(30),
  Duration.hours(2),
  Duration.hours(5),
  Duration.hours(10),
  Duration.hours(10)
]

/**
 * SPEC §9: the first attempt at once, then retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
 * 10 h, each delay jittered by ±10 % so a receiver that comes back is not hit by every retry at once.
 * Each step outputs the (unjittered) delay; the schedule is done after the seventh.
 */
export const deliverySchedule: Schedule.Schedule<Duration.Duration> = Schedule.fromStepWithMetadata(
  Effect.succeed((meta: Schedule.InputMetadata<unknown>) => {
    const delay = RETRY_DELAYS[meta.attempt - 1]
    return delay === undefined
      ? Cause.done(RETRY_DELAYS[RETRY_DELAYS.length - 1]!)
      : Effect.succeed<[Duration.Duration, Duration.Duration]>([delay, delay])
  })
).pipe(
  Schedule.modifyDelay(({ duration }) =>
    Effect.map(Random.next, (random) => Duration.times(duration, 0.9 * (1 - random) + 1.1 * random))
  )
)

/** The delay before the next attempt after `attempts` failed ones of this run; None once the schedule is spent. */
export const nextDelay = (attempts: number) => delayAfter(deliverySchedule, attempts)

/** Resolves webhook hosts; tests inject a hostile DNS here. Unset: the system resolver. */
export const WebhookResolver = Context.Reference<{ readonly resolve: Resolver | undefined }>("etd/WebhookResolver", {
  defaultValue: () => ({ resolve: undefined })
})

interface SentEvent {
  readonly id: string
  readonly type: string
  readonly createdAt: Date
  readonly environment: Environment
  readonly tenantId: string
  readonly data: unknown
}

/** What a delivery sends, as JSON; `data` is the stored `{object}`. */
export const webhookPayload = (event: SentEvent) => ({
  id: event.id,
  type: event.type,
  created_at: event.createdAt.toISOString(),
  environment: event.environment,
  tenant_id: event.tenantId,
  data: event.data
})

/** The exact body sent. */
export const webhookBody = (event: SentEvent) => JSON.stringify(webhookPayload(event))

/** An attempt as the dispatcher made it: with its row when that is still to be kept. */
type SentAttempt = DeliveryAttempt & { readonly unkept?: AttemptRow }

export const makeWebhookDispatcher = Effect.gen(function*() {
  const config = yield* AppConfig
  const repo = yield* WebhookRepo
  const queue = yield* DeliveryQueue
  const events = yield* EventLog
  const { resolve } = yield* WebhookResolver
  const policy = { allowLoopback: config.webhooks.allowPrivateTargets, requireHttps: config.production }
  const lookup = guardedLookup({ allowLoopback: policy.allowLoopback, ...(resolve ? { resolve } : {}) })
  // Keep-alive pools: a busy endpoint is not re-handshaken per delivery. A pooled socket was
  // connected to an address the guard checked when it was opened.
  const agents = yield* Effect.acquireRelease(
    Effect.sync(() => ({
      http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
      https: new https.Agent({ keepAlive: true, maxSockets: 64 })
    })),
    (pools) =>
      Effect.sync(() => {
        pools.http.destroy()
        pools.https.destroy()
      })
  )

  const endWaiting = endWaitingDeliveries(repo, queue)

  /**
   * Writes a decision: the delivery's end or its retry, and what it does to the endpoint; with the
   * attempt when it is not kept yet (`unkept`, a success that is one write: then one statement).
   */
  const apply = (decision: DeliveryDecision, delivery: ClaimedDelivery, unkept: AttemptRow | undefined) => {
    /** Ends the delivery with this attempt's answer, if this claim still holds it. */
    const settle = (status: "succeeded" | "failed", lastStatusCode: number | null, lastError: string | null) => {
      const fields = { status, lastStatusCode, lastError, nextAttemptAt: null, lastAttemptAt: decision.at }
      if (unkept === undefined) return queue.complete(delivery, status, fields)
      return Effect.flatMap(
        repo.keepAttemptEnding(unkept, queue.ending(delivery, { final: status }, decision.at, fields)),
        (ended) => ended ? Effect.void : Effect.fail(new LeaseLost())
      )
    }
    switch (decision._tag) {
      case "Succeeded":
        return Effect.andThen(
          settle("succeeded", decision.statusCode, null),
          decision.clearFailing ? repo.clearFailing(delivery.endpointId) : Effect.void
        )
      case "Abandoned":
        return settle("failed", null, decision.reason)
      case "Retrying":
        return queue.retryAt(delivery, decision.runAt, {
          lastAttemptAt: decision.at,
          lastStatusCode: decision.statusCode,
          lastError: decision.lastError
        })
      case "Failed":
        return Effect.andThen(
          settle("failed", decision.statusCode, decision.lastError),
          // The endpoint's other waiting deliveries end with it (this one is settled above).
          decision.disable === null
            ? Effect.void
            : Effect.andThen(
              repo.disableEndpoint(delivery.endpointId, decision.disable, decision.at),
              endWaiting(delivery.endpointId, "endpoint disabled")
            )
        )
    }
  }

  /** Sends the delivery; the attempt to keep with what it came to. */
  const deliver = (
    delivery: ClaimedDelivery,
    target: { readonly url: string; readonly secrets: ReadonlyArray<string> },
    event: RecordedEvent
  ) =>
    Effect.gen(function*() {
      const startedAt = yield* now
      const url = checkUrl(target.url, policy)
      let result: SendResult
      if (Result.isFailure(url)) {
        result = { _tag: "NoAnswer", error: `refused by the SSRF guard: ${url.failure.message}`, latencyMs: 0 }
      } else {
        const body = webhookBody({
          id: delivery.eventId,
          type: event.type,
          createdAt: event.createdAt,
          environment: event.environment,
          tenantId: event.tenantId,
          data: event.data
        })
        const headers = {
          ...webhookHeaders(target.secrets, { msgId: delivery.eventId, timestamp: startedAt, payload: body }),
          "content-type": "application/json",
          "user-agent": "etd-webhooks/1.0"
        }
        const target_ = url.success
        result = yield* Effect.flatMap(
          currentTraceparent,
          // The receiver may continue our trace (SPEC §13): the header names the sending span.
          (traceparent) =>
            send({
              url: target_,
              body,
              headers: traceparent === null ? headers : { ...headers, traceparent },
              lookup,
              agents
            })
        ).pipe(
          Effect.timeoutOrElse({
            duration: config.webhooks.timeout,
            orElse: () =>
              Effect.succeed<SendResult>({
                _tag: "NoAnswer",
                error: `timed out after ${Duration.format(config.webhooks.timeout)}`,
                latencyMs: Math.round(Duration.toMillis(config.webhooks.timeout))
              })
          }),
          Effect.withSpan("WebhookDispatcher.send", {
            kind: "client",
            // The host only: a URL's path or query may carry the receiver's own credentials.
            attributes: { "server.address": url.success.hostname, "http.request.method": "POST" }
          })
        )
      }
      yield* Effect.annotateCurrentSpan(
        result._tag === "Answered" ? { "http.response.status_code": result.status } : { "error.type": "no_answer" }
      )
      yield* Metric.update(webhookDuration, result.latencyMs / 1000)
      const row: AttemptRow = {
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        startedAt,
        statusCode: result._tag === "Answered" ? result.status : null,
        latencyMs: result.latencyMs,
        responseBody: result._tag === "Answered" ? result.body : null,
        error: result._tag === "NoAnswer" ? result.error : null
      }
      return { result, row }
    })

  /** The endpoints and events of a claim's deliveries, read together (two statements per claim, not per delivery). */
  const prefetch = (deliveries: Arr.NonEmptyReadonlyArray<ClaimedDelivery>) =>
    Effect.gen(function*() {
      const [targets, recorded] = yield* Effect.all([
        repo.deliveryTargets(Arr.dedupe(Arr.map(deliveries, (delivery) => delivery.endpointId))),
        events.findMany(Arr.map(deliveries, (delivery) => delivery.eventId))
      ], { concurrency: 2 })
      return {
        targets: new Map(targets.map((target) => [target.id, target])),
        events: new Map(recorded.map((event) => [event.id, event]))
      }
    })

  const abandoned = (reason: string) =>
    Option.some<SentAttempt>({ outcome: DeliveryOutcome.Abandoned({ reason }), endpointFailing: false })

  /**
   * Sends one claimed delivery, unless its endpoint or event went away while it waited (then it
   * ends unsent).
   */
  const attempt = (
    delivery: ClaimedDelivery,
    { targets, events: recorded }: Effect.Success<ReturnType<typeof prefetch>>
  ): Effect.Effect<Option.Option<SentAttempt>> =>
    Effect.gen(function*() {
      const endpoint = targets.get(delivery.endpointId)
      const event = recorded.get(delivery.eventId)
      if (endpoint === undefined || event === undefined) return abandoned("endpoint or event missing")
      if (endpoint.deletedAt !== null) return abandoned("endpoint deleted")
      if (!endpoint.enabled) return abandoned("endpoint disabled")
      yield* Effect.annotateCurrentSpan({ "webhook.event.type": event.type })
      const at = yield* now
      const secrets = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null &&
          endpoint.previousSecretExpiresAt > at
        ? [endpoint.secret, endpoint.previousSecret]
        : [endpoint.secret]
      const { result, row } = yield* deliver(delivery, { url: endpoint.url, secrets }, event)
      const sent = { outcome: result, endpointFailing: endpoint.failingSince !== null }
      // Every attempt that was sent is kept (SPEC §9), also when its outcome is not written (the
      // lease lost): on its own before a transaction, or in the one statement of a single write.
      if (isSingleWrite(sent)) return Option.some({ ...sent, unkept: row })
      yield* repo.insertAttempt(row)
      return Option.some(sent)
    })

  return yield* makeWorker({
    queue,
    span: (delivery: ClaimedDelivery) => ({
      name: "WebhookDispatcher.deliver",
      kind: "producer",
      attributes: {
        "webhook.delivery.id": delivery.id,
        "webhook.endpoint.id": delivery.endpointId,
        "webhook.event.id": delivery.eventId,
        "webhook.attempt": delivery.attempts,
        "tenant.id": delivery.tenantId
      }
    }),
    leaseLost: "lost the lease on a webhook delivery; its new owner sends it",
    prefetch,
    attempt,
    facts: (delivery, { outcome }): Effect.Effect<DeliveryFacts> =>
      Effect.gen(function*() {
        const at = yield* now
        if (!countsAsFailing(outcome)) return { at, failingSince: Option.none(), retryDelay: Option.none() }
        // Read and started in the write's transaction: another delivery to the endpoint may have
        // started or cleared the clock while this one was being sent.
        const failingSince = yield* repo.markFailing(delivery.endpointId, at)
        return { at, failingSince, retryDelay: yield* nextDelay(delivery.runAttempts) }
      }),
    decide: (attempt, _, facts) => ({ decision: decideDelivery(attempt, facts), unkept: attempt.unkept }),
    apply: ({ decision, unkept }, delivery) => apply(decision, delivery, unkept),
    singleWrite: isSingleWrite,
    settled: ({ decision }) => {
      const outcome = metricOutcome(decision)
      return outcome === undefined
        ? Effect.void
        : Metric.update(Metric.withAttributes(webhookDeliveries, { outcome }), 1)
    }
  })
})

/**
 * The dispatcher: `WEBHOOKS_CONCURRENCY` deliveries in flight on this instance, woken by NOTIFY
 * (sent when a delivery is queued, at commit, to every instance) or by the poll.
 */
export const WebhookDispatcherLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* runWorker(yield* makeWebhookDispatcher, config.webhooks)
  })
)
