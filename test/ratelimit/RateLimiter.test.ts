/**
 * The rate limiter's two stores (SPEC §11): buckets in Redis shared by every instance, in memory
 * otherwise, with the same rules; and a Redis that is down, stopped mid-run or frozen, which must
 * never fail or hold up a decision (issue 16 item 14).
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Logger, Metric, Redacted, Result } from "effect"
import { HttpServerRequest } from "effect/http"
import net from "node:net"
import { type Limit, RateLimiter, type RateLimiterShape, rateLimitFallbacks } from "../../src/ratelimit/RateLimiter.js"
import { redisKey } from "../../src/ratelimit/RedisBuckets.js"
import { inspectRedis, redisProxy, redisSuite, testKeyPrefix, testRedisUrl } from "../support/Redis.js"

const TIMEOUT = Duration.millis(100)
/** The longest a decision may take with Redis out: the timeout, and room for a loaded machine. */
const DECISION_BOUND_MS = 100 + 400

/** Capacity `capacity`, refilling so slowly that nothing comes back during a test. */
const slow = (capacity: number) => ({ capacity, refillPerSecond: 0.001 })

const limiterOf = (layer: Layer.Layer<RateLimiter>) => Effect.map(Layer.build(layer), Context.get(RateLimiter))

const redisLimiter = (url: string, keyPrefix: string) =>
  limiterOf(RateLimiter.redis({ url: Redacted.make(url), keyPrefix, timeout: TIMEOUT }))

const outsideRequest = HttpServerRequest.fromWeb(new Request("http://localhost/"))

/** One decision: whether it was allowed, and how long it took. */
const take = (limiter: RateLimiterShape, limits: ReadonlyArray<Limit>) =>
  Effect.gen(function*() {
    const started = Date.now()
    const outcome = yield* Effect.result(
      Effect.provideService(limiter.consume(limits), HttpServerRequest.HttpServerRequest, outsideRequest)
    )
    return { allowed: Result.isSuccess(outcome), ms: Date.now() - started }
  })

const allowedOf = (limiter: RateLimiterShape, limits: ReadonlyArray<Limit>, times: number) =>
  Effect.gen(function*() {
    const outcomes: Array<boolean> = []
    for (let i = 0; i < times; i++) outcomes.push((yield* take(limiter, limits)).allowed)
    return outcomes
  })

const fallbacks = Effect.map(Metric.value(rateLimitFallbacks), (state) => Number(state.count))

/** Runs `effect` with its log lines collected. */
const withLogs = <A, E, R>(effect: (logs: Array<{ level: string; message: string }>) => Effect.Effect<A, E, R>) => {
  const logs: Array<{ level: string; message: string }> = []
  const capture = Logger.make(({ logLevel, message }) => {
    logs.push({ level: logLevel, message: (Array.isArray(message) ? message : [message]).map(String).join(" ") })
  })
  return effect(logs).pipe(Effect.provide(Logger.layer([capture])))
}
const warnings = (logs: ReadonlyArray<{ level: string; message: string }>) =>
  logs.filter((line) => line.level === "Warn")
const recoveries = (logs: ReadonlyArray<{ level: string; message: string }>) =>
  logs.filter((line) => line.message.includes("answers again"))

/** A port nothing listens on. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
)

const stores = [
  { name: "memory", make: (_prefix: string) => limiterOf(RateLimiter.memory) },
  { name: "redis", make: (prefix: string) => redisLimiter(testRedisUrl!, prefix) }
].filter((store) => store.name === "memory" || testRedisUrl !== undefined)

for (const store of stores) {
  describe(`rate limiter rules (${store.name})`, () => {
    it.live("a draw takes from every bucket or from none", () =>
      Effect.gen(function*() {
        const limiter = yield* store.make(yield* testKeyPrefixIfRedis(store.name))
        const tenant = { key: "tenant:t1", policy: slow(2) }
        const keyA = { key: "key:a", policy: slow(5) }
        const keyB = { key: "key:b", policy: slow(5) }
        expect(yield* allowedOf(limiter, [keyA, tenant], 1)).toEqual([true])
        expect(yield* allowedOf(limiter, [keyB, tenant], 1)).toEqual([true])
        // The tenant is spent: both keys are refused, and their own buckets keep their tokens.
        expect(yield* allowedOf(limiter, [keyA, tenant], 1)).toEqual([false])
        expect(yield* allowedOf(limiter, [keyA], 5)).toEqual([true, true, true, true, false])
      }))

    it.live("recorded events, a check that takes nothing, reset and remembered marks", () =>
      Effect.gen(function*() {
        const limiter = yield* store.make(yield* testKeyPrefixIfRedis(store.name))
        const failures = { key: "login-failures:someone@example.com", policy: slow(2), cost: 0 as const }
        // A check (cost 0) passes any number of times while the bucket holds a token.
        expect(yield* allowedOf(limiter, [failures], 4)).toEqual([true, true, true, true])
        yield* limiter.record(failures.key, failures.policy)
        yield* limiter.record(failures.key, failures.policy)
        expect(yield* allowedOf(limiter, [failures], 1)).toEqual([false])
        yield* limiter.reset(failures.key)
        expect(yield* allowedOf(limiter, [failures], 1)).toEqual([true])

        expect(yield* limiter.remembers("login-known:someone@example.com 10.0.0.1")).toBe(false)
        yield* limiter.remember("login-known:someone@example.com 10.0.0.1", Duration.millis(300))
        expect(yield* limiter.remembers("login-known:someone@example.com 10.0.0.1")).toBe(true)
        expect(yield* limiter.remembers("login-known:someone@example.com 10.0.0.2")).toBe(false)
        yield* Effect.sleep(Duration.millis(400))
        expect(yield* limiter.remembers("login-known:someone@example.com 10.0.0.1")).toBe(false)
      }))
  })
}

/** A fresh prefix for Redis (deleted afterwards); memory needs none. */
function testKeyPrefixIfRedis(store: string) {
  return store === "redis" ? testKeyPrefix : Effect.succeed("")
}

describe.skipIf(testRedisUrl === undefined)(redisSuite("rate limits in Redis"), () => {
  it.live("two instances on one Redis share one bucket", () =>
    Effect.gen(function*() {
      const prefix = yield* testKeyPrefix
      const first = yield* redisLimiter(testRedisUrl!, prefix)
      const second = yield* redisLimiter(testRedisUrl!, prefix)
      const tenant = [{ key: "tenant:shared", policy: slow(3) }]
      expect(yield* allowedOf(first, tenant, 2)).toEqual([true, true])
      expect(yield* allowedOf(second, tenant, 2)).toEqual([true, false])
      expect(yield* allowedOf(first, tenant, 1)).toEqual([false])
    }))

  it.live("keys expire once their bucket would be full again, and hold no email or address", () =>
    Effect.gen(function*() {
      const prefix = yield* testKeyPrefix
      const limiter = yield* redisLimiter(testRedisUrl!, prefix)
      const redis = yield* inspectRedis
      // Capacity 4 refilling 10/s: one token taken is back in 100 ms.
      yield* allowedOf(limiter, [{ key: "login-address:203.0.113.9", policy: { capacity: 4, refillPerSecond: 10 } }], 1)
      yield* limiter.remember("login-known:someone@example.com 203.0.113.9", Duration.minutes(5))
      const keys = yield* Effect.promise(() => redis.keys(`${prefix}*`))
      expect(keys.sort()).toEqual(
        [
          redisKey(prefix, "login-address:203.0.113.9"),
          redisKey(prefix, "login-known:someone@example.com 203.0.113.9")
        ].sort()
      )
      expect(keys.join(" ")).not.toMatch(/203\.0\.113|example\.com/)
      const bucketTtl = yield* Effect.promise(() => redis.pttl(redisKey(prefix, "login-address:203.0.113.9")))
      expect(bucketTtl).toBeGreaterThan(0)
      expect(bucketTtl).toBeLessThanOrEqual(100 + 1000)
      const markTtl = yield* Effect.promise(() =>
        redis.pttl(redisKey(prefix, "login-known:someone@example.com 203.0.113.9"))
      )
      expect(markTtl).toBeGreaterThan(4 * 60_000)
      yield* Effect.sleep(Duration.millis(1300))
      expect(yield* Effect.promise(() => redis.exists(redisKey(prefix, "login-address:203.0.113.9")))).toBe(0)
    }))

  it.live("Redis at a closed port: decisions come from memory at once, one warning, every fallback counted", () =>
    withLogs((logs) =>
      Effect.gen(function*() {
        const limiter = yield* redisLimiter(`redis://127.0.0.1:${yield* closedPort}`, "etd-test:closed:")
        const before = yield* fallbacks
        const decisions = []
        for (let i = 0; i < 4; i++) decisions.push(yield* take(limiter, [{ key: "key:k", policy: slow(2) }]))
        // The limits still hold, per instance.
        expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false])
        for (const decision of decisions) expect(decision.ms).toBeLessThan(DECISION_BOUND_MS)
        expect(warnings(logs)).toHaveLength(1)
        expect(warnings(logs)[0]!.message).toContain("Redis does not answer")
        expect((yield* fallbacks) - before).toBe(4)
      })
    ))

  it.live(
    "Redis stopped mid-run and started again: served from memory meanwhile, shared again after",
    () =>
      withLogs((logs) =>
        Effect.gen(function*() {
          const prefix = yield* testKeyPrefix
          const proxy = yield* redisProxy
          const limiter = yield* redisLimiter(proxy.url, prefix)
          const redis = yield* inspectRedis
          const bucket = { key: "key:k", policy: slow(10) }
          const tokensInRedis = Effect.promise(() => redis.hget(redisKey(prefix, bucket.key), "tokens"))
          expect(yield* allowedOf(limiter, [bucket], 2)).toEqual([true, true])
          expect(Number(yield* tokensInRedis)).toBeCloseTo(8, 1)

          proxy.set("refuse")
          const before = yield* fallbacks
          // Long enough for several probes of Redis to fail: still one warning for the outage.
          for (let i = 0; i < 8; i++) {
            const decision = yield* take(limiter, [bucket])
            expect(decision.allowed).toBe(true)
            expect(decision.ms).toBeLessThan(DECISION_BOUND_MS)
            yield* Effect.sleep(Duration.millis(350))
          }
          expect((yield* fallbacks) - before).toBe(8)
          expect(warnings(logs)).toHaveLength(1)
          // Redis was not written while it was out.
          expect(Number(yield* tokensInRedis)).toBeCloseTo(8, 1)

          proxy.set("forward")
          // ioredis reconnects on its own (at most a second apart) and the next probe finds it.
          for (let i = 0; i < 40 && recoveries(logs).length === 0; i++) {
            yield* take(limiter, [bucket])
            yield* Effect.sleep(Duration.millis(100))
          }
          expect(recoveries(logs)).toHaveLength(1)
          const level = Number(yield* tokensInRedis)
          expect(yield* allowedOf(limiter, [bucket], 1)).toEqual([true])
          expect(Number(yield* tokensInRedis)).toBeCloseTo(level - 1, 1)
          expect(warnings(logs)).toHaveLength(1)
        })
      ),
    { timeout: 20_000 }
  )

  it.live("a frozen Redis holds no decision longer than the timeout", () =>
    withLogs((logs) =>
      Effect.gen(function*() {
        const prefix = yield* testKeyPrefix
        const proxy = yield* redisProxy
        const limiter = yield* redisLimiter(proxy.url, prefix)
        const bucket = { key: "key:k", policy: slow(10) }
        expect(yield* allowedOf(limiter, [bucket], 1)).toEqual([true])

        proxy.set("freeze")
        const before = yield* fallbacks
        const first = yield* take(limiter, [bucket])
        expect(first.allowed).toBe(true)
        expect(first.ms).toBeGreaterThanOrEqual(90)
        expect(first.ms).toBeLessThan(DECISION_BOUND_MS)
        // Within the probe interval the others do not wait for Redis at all.
        for (let i = 0; i < 5; i++) expect((yield* take(limiter, [bucket])).ms).toBeLessThan(50)
        expect((yield* fallbacks) - before).toBe(6)
        expect(warnings(logs)).toHaveLength(1)
        expect(warnings(logs)[0]!.message).toContain("Redis does not answer")

        proxy.set("forward")
        for (let i = 0; i < 40 && recoveries(logs).length === 0; i++) {
          yield* take(limiter, [bucket])
          yield* Effect.sleep(Duration.millis(100))
        }
        expect(recoveries(logs)).toHaveLength(1)
      })
    ), { timeout: 20_000 })
})
