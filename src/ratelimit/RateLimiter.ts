/**
 * Rate limits (SPEC §11) as token buckets: per API key and per tenant, per user and per tenant's
 * members for sessions, per login email and client address, and certificate uploads per tenant, per
 * user and over the whole service. With `REDIS_URL` the buckets live in
 * Redis and hold across instances (`RateLimiter.redis`); without it in this instance's memory
 * (`RateLimiter.memory`). A Redis that is down or slow never fails or holds up a request: each
 * decision falls back to this instance's memory until Redis answers again.
 */
import { Cause, Clock, Context, Duration, Effect, Layer, Metric, Redacted } from "effect"
import { HttpEffect, type HttpServerRequest, HttpServerResponse } from "effect/http"
import type { Redis } from "ioredis"
import { RateLimited } from "../domain/Errors.js"
import { rateLimitFallbacks } from "../telemetry/Metrics.js"
import {
  type BucketPolicy,
  type BucketStore,
  type Draw,
  type DrawResult,
  makeMemoryBuckets,
  type MemoryBuckets
} from "./Buckets.js"
import { makeRedisBuckets, type RedisUnavailable } from "./RedisBuckets.js"
export { rateLimitFallbacks }

export type { BucketPolicy } from "./Buckets.js"

/** A bucket a request must pass. `cost: 0` only checks that the bucket still holds a token. */
export type Limit = Draw

export interface RateLimiterShape {
  /**
   * Takes a token from every bucket, or from none and fails with `RateLimited`. Either way the
   * response carries the `RateLimit-*` headers of the bucket that binds (and `Retry-After` on a 429).
   */
  readonly consume: (
    limits: ReadonlyArray<Limit>
  ) => Effect.Effect<void, RateLimited, HttpServerRequest.HttpServerRequest>
  /** Counts one event (a failed login) against a bucket; what is counted, not the request, is limited. */
  readonly record: (key: string, policy: BucketPolicy) => Effect.Effect<void>
  /** Refills a bucket at once (a successful login forgives the failures before it). */
  readonly reset: (key: string) => Effect.Effect<void>
  readonly remember: (key: string, ttl: Duration.Duration) => Effect.Effect<void>
  readonly remembers: (key: string) => Effect.Effect<boolean>
}

export interface RedisLimiterOptions {
  readonly url: Redacted.Redacted<string>
  /** Every key starts with it, so several services (or test runs) can share one Redis. */
  readonly keyPrefix: string
  /** The longest a request waits for Redis before deciding from memory. */
  readonly timeout: Duration.Duration
}

/** While Redis is out, one request in this interval tries it again; the others go straight to memory. */
const PROBE_INTERVAL_MS = 1000
const CONNECT_TIMEOUT_MS = 1000

/**
 * The `RateLimit-*` headers of the bucket that binds (and `Retry-After` on a refusal): refused, the
 * empty one with the longest wait; allowed, the one with the fewest tokens left (the first on a tie).
 */
const headersOf = (limits: ReadonlyArray<Limit>, result: DrawResult) => {
  let binding = -1
  let best = 0
  for (let i = 0; i < limits.length; i++) {
    const level = result.levels[i]!
    if (result.allowed) {
      const remaining = Math.max(0, Math.floor(level))
      if (binding < 0 || remaining < best) {
        binding = i
        best = remaining
      }
    } else if (level < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - level) / limits[i]!.policy.refillPerSecond))
      if (binding < 0 || retryAfter > best) {
        binding = i
        best = retryAfter
      }
    }
  }
  const { policy } = limits[binding]!
  const level = result.levels[binding]!
  const retryAfter = Math.max(1, Math.ceil((1 - level) / policy.refillPerSecond))
  const headers: Record<string, string> = {
    "ratelimit-limit": String(policy.capacity),
    "ratelimit-remaining": String(Math.max(0, Math.floor(level))),
    "ratelimit-reset": String(Math.ceil((policy.capacity - level) / policy.refillPerSecond))
  }
  if (!result.allowed) headers["retry-after"] = String(retryAfter)
  return { headers, retryAfter }
}

/** The request's answer to a draw: the binding bucket's headers on its response, and a refusal as `RateLimited`. */
const settle = (context: Context.Context<never>, limits: ReadonlyArray<Limit>, result: DrawResult) => {
  const { headers, retryAfter } = headersOf(limits, result)
  HttpEffect.appendPreResponseHandlerUnsafe(
    context,
    (_, response) => Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )
  return result.allowed ? Effect.void : Effect.fail(new RateLimited({ retry_after: retryAfter }))
}

const makeLimiter = (store: BucketStore<never>): RateLimiterShape => ({
  consume: (limits) =>
    Effect.flatMap(store.draw(limits), (result) => Effect.withFiber((fiber) => settle(fiber.context, limits, result))),
  record: (key, policy) => Effect.asVoid(store.draw([{ key, policy }])),
  reset: store.reset,
  remember: store.remember,
  remembers: store.remembers
})

/**
 * Memory alone decides without waiting, so a request's draw is one step: the clock read, the
 * buckets drawn and the answer settled in place (every authenticated request draws).
 */
const makeMemoryLimiter = (store: MemoryBuckets): RateLimiterShape => ({
  ...makeLimiter(store),
  consume: (limits) =>
    Effect.withFiber((fiber) =>
      settle(fiber.context, limits, store.drawAt(limits, fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()))
    )
})

const describe = (error: RedisUnavailable | Cause.TimeoutError, timeout: Duration.Duration) =>
  Cause.isTimeoutError(error)
    ? `no answer within ${Duration.format(timeout)}`
    : error.cause instanceof Error
    ? error.cause.message
    : String(error.cause)

/**
 * Redis first, this instance's memory when Redis fails or takes longer than `timeout`. An outage
 * is logged when it starts and when it ends, not per request; every decision taken from memory is
 * counted in `etd_rate_limit_fallbacks_total`.
 */
const withFallback = (redis: BucketStore<RedisUnavailable>, memory: BucketStore<never>, timeout: Duration.Duration) => {
  let outage: { since: number; probeAt: number } | undefined

  const fromMemory = <A>(viaMemory: Effect.Effect<A>) =>
    Metric.update(rateLimitFallbacks, 1).pipe(Effect.andThen(viaMemory))

  const guarded = <A>(viaRedis: Effect.Effect<A, RedisUnavailable>, viaMemory: Effect.Effect<A>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (outage !== undefined) {
        if (now < outage.probeAt) return yield* fromMemory(viaMemory)
        outage.probeAt = now + PROBE_INTERVAL_MS
      }
      const answer = yield* Effect.result(Effect.timeout(viaRedis, timeout))
      if (answer._tag === "Success") {
        if (outage !== undefined) {
          const lasted = now - outage.since
          outage = undefined
          yield* Effect.logInfo("Redis answers again: rate limits are shared across instances again").pipe(
            Effect.annotateLogs({ outage_ms: lasted })
          )
        }
        return answer.success
      }
      if (outage === undefined) {
        outage = { since: now, probeAt: now + PROBE_INTERVAL_MS }
        yield* Effect.logWarning("Redis does not answer: rate limits are kept in this instance's memory until it does")
          .pipe(
            Effect.annotateLogs({ redis_error: describe(answer.failure, timeout) })
          )
      }
      return yield* fromMemory(viaMemory)
    })

  return {
    draw: (draws) => guarded(redis.draw(draws), memory.draw(draws)),
    reset: (key) => guarded(redis.reset(key), memory.reset(key)),
    remember: (key, ttl) => guarded(redis.remember(key, ttl), memory.remember(key, ttl)),
    remembers: (key) => guarded(redis.remembers(key), memory.remembers(key))
  } satisfies BucketStore<never>
}

const connectRedis = (options: RedisLimiterOptions) =>
  Effect.gen(function*() {
    const timeoutMs = Duration.toMillis(options.timeout)
    // Loaded only when Redis is configured: ioredis costs a single instance ~15 MiB of RSS for nothing.
    const { Redis: RedisClient } = yield* Effect.promise(() => import("ioredis"))
    const client: Redis = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new RedisClient(Redacted.value(options.url), {
          commandTimeout: timeoutMs,
          // Without a connection a command fails at once rather than waiting in a queue for one.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          connectTimeout: CONNECT_TIMEOUT_MS,
          // ioredis reconnects on its own; at most a second apart, so limits are shared again soon after Redis returns.
          retryStrategy: (attempts) => Math.min(attempts * 100, 1000)
        })
      ),
      (client) => Effect.sync(() => client.disconnect())
    )
    // The limiter reports an outage once; ioredis would print every failed reconnect.
    client.on("error", () => {})
    // A short wait for the first connection, so the first requests are not counted as an outage.
    yield* Effect.callback<void>((resume) => {
      const settled = () => resume(Effect.void)
      client.once("ready", settled)
      client.once("error", settled)
      return Effect.sync(() => {
        client.off("ready", settled)
        client.off("error", settled)
      })
    }).pipe(Effect.timeoutOption(Duration.millis(CONNECT_TIMEOUT_MS)))
    return client
  })

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterShape>()("etd/RateLimiter") {
  /** Buckets in this instance's memory: a single instance, development and tests. */
  static readonly memory = Layer.effect(this, Effect.map(makeMemoryBuckets, makeMemoryLimiter))

  /** Buckets in Redis, shared by every instance, with this instance's memory as the fallback. */
  static readonly redis = (options: RedisLimiterOptions) =>
    Layer.effect(
      this,
      Effect.gen(function*() {
        const client = yield* connectRedis(options)
        const memory = yield* makeMemoryBuckets
        return makeLimiter(withFallback(makeRedisBuckets(client, options.keyPrefix), memory, options.timeout))
      })
    )
}
