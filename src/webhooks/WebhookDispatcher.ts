/**
 * The WebhookDispatcher (SPEC §9): sends one claimed delivery of the DeliveryQueue and records the
 * attempt and its outcome. The queue (src/queue/) does the claiming, leasing, fencing and waking.
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
import { makeTransaction } from "../db/Repository.js"
import type { WebhookEndpointId } from "../domain/Ids.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import type { RecordedEvent } from "../domain/Events.js"
import { EventLog } from "../events/EventLog.js"
import { delayAfter } from "../queue/Backoff.js"
import { runWorkerPool } from "../queue/WorkerPool.js"
import { currentTraceparent, linkedTrace } from "../telemetry/TraceContext.js"
import { type ClaimedDelivery, DeliveryQueue, endWaitingDeliveries } from "./DeliveryQueue.js"
import { send, type SendResult } from "./Sender.js"
import { webhookHeaders } from "./Signing.js"
import { checkUrl, guardedLookup, type Resolver } from "./SsrfGuard.js"
import { WebhookRepo } from "./WebhookRepo.js"
import { webhookDeliveries, webhookDuration } from "../telemetry/Metrics.js"
import { metricsConfig } from "../telemetry/MetricsEndpoint.js"

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

/** An endpoint whose deliveries all failed for this long is disabled. */
export const FAILING_DISABLE_AFTER = Duration.days(5)

/** Resolves webhook hosts; tests inject a hostile DNS here. Unset: the system resolver. */
export const WebhookResolver = Context.Reference<{ readonly resolve: Resolver | undefined }>("etd/WebhookResolver", {
  defaultValue: () => ({ resolve: undefined })
})


type Outcome = "succeeded" | "retrying" | "failed" | "disabled"

const isSuccess = (status: number) => status >= 200 && status <= 299

/** The exact body sent; `data` is the stored `{object}`. */
export const webhookBody = (event: {
  readonly id: string
  readonly type: string
  readonly createdAt: Date
  readonly environment: Environment
  readonly tenantId: string
  readonly data: unknown
}) =>
  JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    environment: event.environment,
    tenant_id: event.tenantId,
    data: event.data
  })

export const makeWebhookDispatcher = Effect.gen(function*() {
  const inTransaction = yield* makeTransaction
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
    (pools) => Effect.sync(() => {
      pools.http.destroy()
      pools.https.destroy()
    })
  )

  /** Ends the delivery with this attempt's answer, if this claim still holds it. */
  const settle = (delivery: ClaimedDelivery, at: Date, fields: {
    readonly status: "succeeded" | "failed"
    readonly lastStatusCode: number | null
    readonly lastError: string | null
  }) => queue.complete(delivery, fields.status, { ...fields, nextAttemptAt: null, lastAttemptAt: at })

  const endWaiting = endWaitingDeliveries(repo, queue)

  /** Disables the endpoint and ends its waiting deliveries (this one is settled by the caller). */
  const disable = (endpointId: WebhookEndpointId, reason: "gone" | "failing", at: Date) =>
    Effect.andThen(repo.disableEndpoint(endpointId, reason, at), endWaiting(endpointId, "endpoint disabled"))

  /**
   * `failing`: the endpoint was failing when the attempt started (a success then clears that).
   * A success at an endpoint that was not failing is one statement, so it runs without a
   * transaction: BEGIN and COMMIT would double the round trips of the commonest outcome.
   */
  const record = (delivery: ClaimedDelivery, result: SendResult, failing: boolean) => {
    const outcome = recordOutcome(delivery, result, failing)
    return result._tag === "Answered" && isSuccess(result.status) && !failing ? outcome : inTransaction(outcome)
  }

  const recordOutcome = (delivery: ClaimedDelivery, result: SendResult, failing: boolean) =>
    Effect.gen(function*() {
      const at = yield* now
      const statusCode = result._tag === "Answered" ? result.status : null
      const error = result._tag === "NoAnswer" ? result.error : null
      const lastError = error ?? (statusCode !== null && !isSuccess(statusCode) ? `HTTP ${statusCode}` : null)

      if (statusCode !== null && isSuccess(statusCode)) {
        yield* settle(delivery, at, { status: "succeeded", lastStatusCode: statusCode, lastError: null })
        if (failing) yield* repo.clearFailing(delivery.endpointId)
        const succeeded: Outcome = "succeeded"
        return succeeded
      }
      if (statusCode === 410) {
        yield* settle(delivery, at, { status: "failed", lastStatusCode: statusCode, lastError })
        yield* disable(delivery.endpointId, "gone", at)
        return "disabled"
      }
      const failingSince = yield* repo.markFailing(delivery.endpointId, at)
      const failingFor = Option.match(failingSince, { onNone: () => 0, onSome: (since) => at.getTime() - since.getTime() })
      if (failingFor >= Duration.toMillis(FAILING_DISABLE_AFTER)) {
        yield* settle(delivery, at, { status: "failed", lastStatusCode: statusCode, lastError })
        yield* disable(delivery.endpointId, "failing", at)
        return "disabled"
      }
      const delay = yield* nextDelay(delivery.runAttempts)
      if (Option.isNone(delay)) {
        yield* settle(delivery, at, { status: "failed", lastStatusCode: statusCode, lastError })
        return "failed"
      }
      yield* queue.retryAt(delivery, new Date(at.getTime() + Duration.toMillis(delay.value)), {
        lastAttemptAt: at,
        lastStatusCode: statusCode,
        lastError
      })
      return "retrying"
    })

  /** The endpoint went away (disabled or deleted) while the delivery waited: it is not sent. */
  const abandon = (delivery: ClaimedDelivery, reason: string) =>
    Effect.flatMap(now, (at) => settle(delivery, at, { status: "failed", lastStatusCode: null, lastError: reason }))

  const attempt = (
    delivery: ClaimedDelivery,
    target: { readonly url: string; readonly secrets: ReadonlyArray<string>; readonly failing: boolean },
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
          (traceparent) => send({ url: target_, body, headers: traceparent === null ? headers : { ...headers, traceparent }, lookup, agents })
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
      yield* repo.insertAttempt({
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        startedAt,
        statusCode: result._tag === "Answered" ? result.status : null,
        latencyMs: result.latencyMs,
        responseBody: result._tag === "Answered" ? result.body : null,
        error: result._tag === "NoAnswer" ? result.error : null
      })
      return yield* record(delivery, result, target.failing)
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

  type Prefetched = Effect.Success<ReturnType<typeof prefetch>>

  /**
   * Sends one claimed delivery and records what happened. Its endpoint and event come from the
   * claim's prefetch, or are read for it alone when there was none.
   */
  const process = (delivery: ClaimedDelivery, prefetched?: Prefetched) =>
    Effect.gen(function*() {
      yield* Effect.annotateCurrentSpan({
        "webhook.delivery.id": delivery.id,
        "webhook.endpoint.id": delivery.endpointId,
        "webhook.event.id": delivery.eventId,
        "webhook.attempt": delivery.attempts,
        "tenant.id": delivery.tenantId
      })
      const { targets, events: recorded } = prefetched ?? (yield* prefetch([delivery]))
      const endpoint = targets.get(delivery.endpointId)
      const event = recorded.get(delivery.eventId)
      if (endpoint === undefined || event === undefined) return yield* abandon(delivery, "endpoint or event missing")
      if (endpoint.deletedAt !== null) return yield* abandon(delivery, "endpoint deleted")
      if (!endpoint.enabled) return yield* abandon(delivery, "endpoint disabled")
      yield* Effect.annotateCurrentSpan({ "webhook.event.type": event.type })
      const at = yield* now
      const secrets = endpoint.previousSecret !== null && endpoint.previousSecretExpiresAt !== null &&
          endpoint.previousSecretExpiresAt > at
        ? [endpoint.secret, endpoint.previousSecret]
        : [endpoint.secret]
      const outcome = yield* attempt(delivery, { url: endpoint.url, secrets, failing: endpoint.failingSince !== null }, event)
      yield* Metric.update(Metric.withAttributes(webhookDeliveries, { outcome }), 1)
    }).pipe(
      Effect.catchTag("LeaseLost", () => Effect.logWarning("lost the lease on a webhook delivery; its new owner sends it")),
      linkedTrace("WebhookDispatcher.deliver", { kind: "producer" }, delivery.traceparent)
    )

  return { prefetch, process } as const
})

/**
 * The dispatcher: `WEBHOOKS_CONCURRENCY` deliveries in flight on this instance, woken by NOTIFY
 * (sent when a delivery is queued, at commit, to every instance) or by the poll.
 */
export const WebhookDispatcherLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const dispatcher = yield* makeWebhookDispatcher
    yield* runWorkerPool({
      queue: yield* DeliveryQueue,
      concurrency: config.webhooks.concurrency,
      pollInterval: config.webhooks.pollInterval,
      lease: config.webhooks.lease,
      grace: config.queue.shutdownGrace,
      prefetch: dispatcher.prefetch,
      handle: dispatcher.process,
      metricsInterval: (yield* Effect.orDie(metricsConfig)).sampleInterval
    })
  })
)
