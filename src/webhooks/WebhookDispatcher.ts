/**
 * The WebhookDispatcher (SPEC §9): sends queued deliveries, durably and at least once.
 *
 * Deliveries are created with their event (webhooks/FanOut.ts). Workers claim a due one with
 * `FOR UPDATE SKIP LOCKED` and a lease, POST it outside any transaction, and record the attempt and
 * the outcome in one transaction, only if they still hold the lease. A crash leaves the delivery
 * leased; once the lease runs out another worker (of any instance) sends it again. Receivers
 * deduplicate on `webhook-id`, which is the event id and never changes between attempts.
 *
 * Sending uses node's http/https with the SSRF guard's `lookup`, so every resolved address is
 * checked and the socket connects to the checked one; IP-literal hosts, for which node skips
 * `lookup`, are checked by `checkUrl` before each attempt. Redirects are not followed (node's
 * client never does), a 3xx is a failure like any other non-2xx.
 */
import { PgClient } from "@effect/sql-pg"
import {
  Cause,
  Context,
  Data,
  Duration,
  Effect,
  Layer,
  Metric,
  Option,
  Pull,
  Queue,
  Random,
  Result,
  Schedule,
  Stream
} from "effect"
import { SqlClient } from "effect/sql"
import * as http from "node:http"
import * as https from "node:https"
import { performance } from "node:perf_hooks"
import { AppConfig } from "../Config.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { continueTrace } from "../telemetry/TraceContext.js"
import { randomUUID } from "node:crypto"
import { superviseWorkers, workLoop } from "../system/Workers.js"
import { DELIVERIES_CHANNEL } from "./FanOut.js"
import { webhookHeaders } from "./Signing.js"
import { checkUrl, guardedLookup, type Resolver, SSRF_ERROR_CODE } from "./SsrfGuard.js"

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
      : Effect.succeed([delay, delay] as [Duration.Duration, Duration.Duration])
  })
).pipe(
  Schedule.modifyDelay(({ duration }) =>
    Effect.map(Random.next, (random) => Duration.times(duration, 0.9 * (1 - random) + 1.1 * random))
  )
)

/**
 * The delay before the next attempt after `attempts` failed ones of this run; None once the schedule
 * is spent (or for fewer than one attempt). Steps a fresh copy of the schedule `attempts` times and
 * takes the delay of the last step.
 */
export const nextDelay = (attempts: number): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.gen(function*() {
    if (attempts < 1) return Option.none()
    const step = yield* Schedule.toStep(deliverySchedule)
    let delay = Option.none<Duration.Duration>()
    for (let i = 0; i < attempts; i++) {
      delay = yield* step(0, undefined).pipe(
        Effect.map(([, duration]) => Option.some(duration)),
        Pull.catchDone(() => Effect.succeed(Option.none<Duration.Duration>()))
      )
      if (Option.isNone(delay)) return delay
    }
    return delay
  })

/** An endpoint whose deliveries all failed for this long is disabled. */
export const FAILING_DISABLE_AFTER = Duration.days(5)

/** How much of a response body is kept with the attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024

/** Resolves webhook hosts; tests inject a hostile DNS here. Unset: the system resolver. */
export const WebhookResolver = Context.Reference<{ readonly resolve: Resolver | undefined }>("etd/WebhookResolver", {
  defaultValue: () => ({ resolve: undefined })
})

export const webhookOutcomes = Metric.counter("etd_webhook_deliveries_total", {
  description: "Webhook delivery attempts by outcome (succeeded, retrying, failed, disabled)"
})
export const webhookLatency = Metric.histogram("etd_webhook_delivery_duration_ms", {
  boundaries: Metric.exponentialBoundaries({ start: 5, factor: 2, count: 13 }),
  description: "Time from the start of a webhook attempt to its answer or error"
})

export type SendResult =
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string; readonly latencyMs: number }
  | { readonly _tag: "NoAnswer"; readonly error: string; readonly latencyMs: number }

// Postgres text cannot hold NUL; a binary response is kept as what survives.
const excerpt = (chunks: ReadonlyArray<Buffer>) => Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString("utf8").replace(/\0/g, "")

const errorText = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "code" in error && error.code === SSRF_ERROR_CODE) {
    // Tenants read this text: naming the internal address would make the guard a DNS oracle.
    return "refused by the SSRF guard: the target resolves to an address that is not allowed (private, loopback or reserved)"
  }
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : undefined
  const message = error instanceof Error ? error.message : String(error)
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message
}

/** One POST with node's client; interruption (the timeout) destroys the request. */
export const send = (options: {
  readonly url: URL
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  readonly lookup: ReturnType<typeof guardedLookup>
  readonly agents: { readonly http: http.Agent; readonly https: https.Agent }
}) =>
  Effect.callback<SendResult>((resume) => {
    // Wall-clock latency of real network I/O, independent of the Effect clock (TestClock in tests).
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const secure = options.url.protocol === "https:"
    const request = (secure ? https : http).request(options.url, {
      method: "POST",
      agent: secure ? options.agents.https : options.agents.http,
      lookup: options.lookup,
      headers: { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) }
    })
    let settled = false
    const done = (result: SendResult) => {
      if (settled) return
      settled = true
      resume(Effect.succeed(result))
    }
    request.on("error", (error) => done({ _tag: "NoAnswer", error: errorText(error), latencyMs: elapsed() }))
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      let kept = 0
      const finish = () => done({ _tag: "Answered", status: response.statusCode ?? 0, body: excerpt(chunks), latencyMs: elapsed() })
      response.on("data", (chunk: Buffer) => {
        if (kept < RESPONSE_EXCERPT_BYTES) {
          chunks.push(chunk)
          kept += chunk.length
        }
        // Beyond the excerpt the body is of no use: stop reading rather than wait for a large one.
        if (kept >= RESPONSE_EXCERPT_BYTES) {
          finish()
          response.destroy()
        }
      })
      response.on("end", finish)
      response.on("error", finish)
      response.on("aborted", finish)
    })
    request.end(options.body)
    return Effect.sync(() => {
      settled = true
      request.destroy()
    })
  })

class LeaseLost extends Data.TaggedError("LeaseLost") {}

export interface ClaimedDelivery {
  readonly id: string
  readonly endpointId: string
  readonly eventId: string
  readonly attempts: number
  readonly runAttempts: number
  readonly traceparent: string | null
  /** This claim's lease token; results are written only while it still holds the delivery. */
  readonly lockedBy: string
}

interface DeliveryContext {
  readonly url: string
  readonly enabled: boolean
  readonly deletedAt: Date | null
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: Date | null
  readonly eventType: string
  readonly eventData: unknown
  readonly eventCreatedAt: Date
  readonly tenantId: string
  readonly environment: Environment
}

type Outcome = "succeeded" | "retrying" | "failed" | "disabled"


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
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const { resolve } = yield* WebhookResolver
  const me = config.worker.instanceId
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

  /** Takes the next due delivery, if any, and counts the attempt. */
  const claim = Effect.gen(function*() {
    const at = yield* now
    const leaseUntil = new Date(at.getTime() + Duration.toMillis(config.webhooks.lease))
    // Each claim gets its own token: workers of one instance must not pass for each other's lease.
    const lockToken = `${me}:${randomUUID()}`
    const rows = yield* sql<ClaimedDelivery>`
      UPDATE webhook_deliveries
      SET locked_by = ${lockToken}, locked_until = ${leaseUntil}, attempts = attempts + 1, run_attempts = run_attempts + 1,
          updated_at = ${at}
      WHERE id = (
        SELECT id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= ${at} AND (locked_until IS NULL OR locked_until <= ${at})
        ORDER BY next_attempt_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING id, endpoint_id, event_id, attempts, run_attempts, traceparent, locked_by`
    return Option.fromNullishOr(rows[0])
  }).pipe(Effect.withSpan("WebhookDispatcher.claim"))

  const loadContext = (delivery: ClaimedDelivery) =>
    Effect.map(
      sql<DeliveryContext>`
        SELECT e.url, e.enabled, e.deleted_at, e.secret, e.previous_secret, e.previous_secret_expires_at,
               ev.type AS event_type, ev.data AS event_data, ev.created_at AS event_created_at,
               ev.tenant_id, ev.environment
        FROM webhook_endpoints e, events ev
        WHERE e.id = ${delivery.endpointId} AND ev.id = ${delivery.eventId}`,
      (rows) => Option.fromNullishOr(rows[0])
    )

  /** Writes only while this worker holds the lease; otherwise the whole transaction rolls back. */
  const settle = (delivery: ClaimedDelivery, fields: {
    readonly status: "pending" | "succeeded" | "failed"
    readonly nextAttemptAt: Date | null
    readonly lastStatusCode: number | null
    readonly lastError: string | null
    readonly at: Date
  }) =>
    Effect.flatMap(
      sql`
        UPDATE webhook_deliveries
        SET status = ${fields.status}, next_attempt_at = ${fields.nextAttemptAt}, locked_by = NULL, locked_until = NULL,
            last_attempt_at = ${fields.at}, last_status_code = ${fields.lastStatusCode}, last_error = ${fields.lastError},
            updated_at = ${fields.at}
        WHERE id = ${delivery.id} AND locked_by = ${delivery.lockedBy} AND status = 'pending'
        RETURNING id`,
      (rows) => (rows.length === 1 ? Effect.void : Effect.fail(new LeaseLost()))
    )

  const disableEndpoint = (endpointId: string, reason: "gone" | "failing", at: Date) =>
    Effect.andThen(
      sql`
        UPDATE webhook_endpoints SET enabled = false, disabled_reason = ${reason}, updated_at = ${at}
        WHERE id = ${endpointId} AND enabled`,
      sql`
        UPDATE webhook_deliveries
        SET status = 'failed', next_attempt_at = NULL, last_error = 'endpoint disabled', updated_at = ${at}
        WHERE endpoint_id = ${endpointId} AND status = 'pending' AND (locked_until IS NULL OR locked_until <= ${at})`
    )

  /**
   * Every attempt that was sent is recorded (SPEC §9), on its own; the outcome is then written in
   * one transaction, only if this claim still holds the delivery.
   */
  const recordAttempt = (delivery: ClaimedDelivery, startedAt: Date, result: SendResult) =>
    sql`
      INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, status_code, latency_ms, response_body, error)
      VALUES (${delivery.id}, ${delivery.attempts}, ${startedAt}, ${result._tag === "Answered" ? result.status : null},
              ${result.latencyMs}, ${result._tag === "Answered" ? result.body : null},
              ${result._tag === "NoAnswer" ? result.error : null})`

  const record = (delivery: ClaimedDelivery, result: SendResult) =>
    Effect.gen(function*() {
      const at = yield* now
      const statusCode = result._tag === "Answered" ? result.status : null
      const error = result._tag === "NoAnswer" ? result.error : null
      const lastError = error ?? (statusCode !== null && (statusCode < 200 || statusCode > 299) ? `HTTP ${statusCode}` : null)

      if (statusCode !== null && statusCode >= 200 && statusCode <= 299) {
        yield* settle(delivery, { status: "succeeded", nextAttemptAt: null, lastStatusCode: statusCode, lastError: null, at })
        yield* sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${delivery.endpointId} AND failing_since IS NOT NULL`
        return "succeeded" satisfies Outcome as Outcome
      }
      if (statusCode === 410) {
        yield* settle(delivery, { status: "failed", nextAttemptAt: null, lastStatusCode: statusCode, lastError, at })
        yield* disableEndpoint(delivery.endpointId, "gone", at)
        return "disabled"
      }
      const [endpoint] = yield* sql<{ failingSince: Date }>`
        UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${at})
        WHERE id = ${delivery.endpointId} RETURNING failing_since`
      const failingFor = endpoint === undefined ? 0 : at.getTime() - endpoint.failingSince.getTime()
      if (failingFor >= Duration.toMillis(FAILING_DISABLE_AFTER)) {
        yield* settle(delivery, { status: "failed", nextAttemptAt: null, lastStatusCode: statusCode, lastError, at })
        yield* disableEndpoint(delivery.endpointId, "failing", at)
        return "disabled"
      }
      const delay = yield* nextDelay(delivery.runAttempts)
      if (Option.isNone(delay)) {
        yield* settle(delivery, { status: "failed", nextAttemptAt: null, lastStatusCode: statusCode, lastError, at })
        return "failed"
      }
      const nextAttemptAt = new Date(at.getTime() + Duration.toMillis(delay.value))
      yield* settle(delivery, { status: "pending", nextAttemptAt, lastStatusCode: statusCode, lastError, at })
      return "retrying"
    }).pipe(sql.withTransaction)

  /** The endpoint went away (disabled or deleted) while the delivery waited: it is not sent. */
  const abandon = (delivery: ClaimedDelivery, reason: string) =>
    Effect.flatMap(now, (at) =>
      settle(delivery, { status: "failed", nextAttemptAt: null, lastStatusCode: null, lastError: reason, at })).pipe(
        sql.withTransaction
      )

  const attempt = (delivery: ClaimedDelivery, context: DeliveryContext) =>
    Effect.gen(function*() {
      const startedAt = yield* now
      const target = checkUrl(context.url, policy)
      let result: SendResult
      if (Result.isFailure(target)) {
        result = { _tag: "NoAnswer", error: `refused by the SSRF guard: ${target.failure.message}`, latencyMs: 0 }
      } else {
        const body = webhookBody({
          id: delivery.eventId,
          type: context.eventType,
          createdAt: context.eventCreatedAt,
          environment: context.environment,
          tenantId: context.tenantId,
          data: context.eventData
        })
        const secrets = context.previousSecret !== null && context.previousSecretExpiresAt !== null &&
            context.previousSecretExpiresAt > startedAt
          ? [context.secret, context.previousSecret]
          : [context.secret]
        const headers = {
          ...webhookHeaders(secrets, { msgId: delivery.eventId, timestamp: startedAt, payload: body }),
          "content-type": "application/json",
          "user-agent": "etd-webhooks/1.0"
        }
        result = yield* send({ url: target.success, body, headers, lookup, agents }).pipe(
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
            attributes: { "server.address": target.success.hostname, "http.request.method": "POST" }
          })
        )
      }
      yield* Effect.annotateCurrentSpan(
        result._tag === "Answered" ? { "http.response.status_code": result.status } : { "error.type": "no_answer" }
      )
      yield* Metric.update(webhookLatency, result.latencyMs)
      yield* recordAttempt(delivery, startedAt, result)
      return yield* record(delivery, result)
    })

  const process = (delivery: ClaimedDelivery) =>
    Effect.gen(function*() {
      yield* Effect.annotateCurrentSpan({
        "webhook.delivery.id": delivery.id,
        "webhook.endpoint.id": delivery.endpointId,
        "webhook.event.id": delivery.eventId,
        "webhook.attempt": delivery.attempts
      })
      const context = yield* loadContext(delivery)
      if (Option.isNone(context)) return yield* abandon(delivery, "endpoint or event missing")
      if (context.value.deletedAt !== null) return yield* abandon(delivery, "endpoint deleted")
      if (!context.value.enabled) return yield* abandon(delivery, "endpoint disabled")
      yield* Effect.annotateCurrentSpan({ "tenant.id": context.value.tenantId, "webhook.event.type": context.value.eventType })
      const outcome = yield* attempt(delivery, context.value)
      yield* Metric.update(Metric.withAttributes(webhookOutcomes, { outcome }), 1)
    }).pipe(
      Effect.catchTag("LeaseLost", () =>
        Effect.logWarning("lost the lease on a webhook delivery; its new owner sends it").pipe(
          Effect.annotateLogs({ delivery_id: delivery.id })
        )),
      Effect.withSpan("WebhookDispatcher.deliver", { kind: "producer" }),
      continueTrace(delivery.traceparent)
    )

  /** One worker: claim and send until told to stop; wait for a signal or the poll when idle. */
  const runWorker = (signal: { readonly wait: Effect.Effect<unknown>; readonly nudge: Effect.Effect<unknown> }) =>
    workLoop({
      label: "webhook delivery",
      claim,
      process,
      idle: Effect.raceFirst(signal.wait, Effect.sleep(config.webhooks.pollInterval)),
      // One notification may stand for many deliveries: pass it on to an idle worker.
      onClaim: signal.nudge
    })

  return { claim, process, runWorker } as const
})

/**
 * The dispatcher as a scoped layer: `WEBHOOKS_CONCURRENCY` supervised workers, woken by NOTIFY
 * (sent when a delivery is queued, at commit, to every instance) or by the poll. Shutdown is
 * graceful: workers stop claiming and finish the attempt in hand within the grace period.
 */
export const WebhookDispatcherLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const dispatcher = yield* makeWebhookDispatcher
    const signal = yield* Queue.sliding<void>(1)
    const pg = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isSome(pg)) {
      yield* Effect.forkScoped(
        pg.value.listen(DELIVERIES_CHANNEL).pipe(
          Effect.flatMap((notifications) =>
            Stream.runForEach(Stream.fromQueue(notifications), () => Queue.offer(signal, undefined))
          ),
          Effect.scoped,
          // Without notifications the poll still finds every delivery, just later.
          Effect.catchCause((cause) => Effect.logWarning("webhook notifications unavailable; polling only", cause))
        )
      )
    }
    yield* superviseWorkers({
      name: "webhooks",
      count: config.webhooks.concurrency,
      grace: config.worker.shutdownGrace,
      worker: dispatcher.runWorker({ wait: Queue.take(signal), nudge: Queue.offer(signal, undefined) })
    })
  })
)
