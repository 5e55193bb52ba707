/**
 * Redis for the rate-limit tests: the server of TEST_REDIS_URL (bash .ci/run sets it when Redis
 * answers), a key prefix of each suite's own that is deleted afterwards, and a TCP proxy in front
 * of Redis that a test can cut, freeze and restore to play an outage.
 */
import { Duration, Effect, Option, Redacted } from "effect"
import { Redis } from "ioredis"
import { randomBytes } from "node:crypto"
import net from "node:net"

export const testRedisUrl = process.env["TEST_REDIS_URL"]

/** The suite's name, saying why it is skipped when there is no Redis to run it on. */
export const redisSuite = (name: string) =>
  testRedisUrl === undefined
    ? `${name} (skipped: TEST_REDIS_URL is not set; bash .ci/run sets it when Redis answers at 127.0.0.1:6379)`
    : name

/** A key prefix of the test's own; every key under it is deleted when the scope closes. */
export const testKeyPrefix = Effect.acquireRelease(
  Effect.sync(() => `etd-test:${randomBytes(6).toString("hex")}:`),
  (prefix) =>
    Effect.promise(async () => {
      const redis = new Redis(testRedisUrl!, { lazyConnect: true })
      await redis.connect()
      try {
        const keys = await redis.keys(`${prefix}*`)
        if (keys.length > 0) await redis.del(...keys)
      } finally {
        redis.disconnect()
      }
    })
)

/**
 * The test app's settings for a limiter on Redis at `url`. The timeout is a second rather than the
 * default 100 ms: on a loaded test machine a slow answer would fall back to memory and blur the
 * rule under test (the outage tests cut Redis off, which fails at once).
 */
export const redisSettings = (url: string, keyPrefix: string) => ({
  redis: { url: Option.some(Redacted.make(url)), keyPrefix, timeout: Duration.seconds(1) }
})

/** A raw connection to the test Redis, for looking at what the limiter stored. */
export const inspectRedis = Effect.acquireRelease(
  Effect.promise(async () => {
    const redis = new Redis(testRedisUrl!, { lazyConnect: true })
    await redis.connect()
    return redis
  }),
  (redis) => Effect.sync(() => redis.disconnect())
)

export type ProxyMode =
  /** Bytes flow both ways: Redis is up. */
  | "forward"
  /** Open connections are cut and new ones closed at once: Redis stopped. */
  | "refuse"
  /** Connections stay open but no answer comes back until `forward`: Redis frozen (SIGSTOP, a stalled network). */
  | "freeze"

/** A TCP proxy to the test Redis whose behaviour the test switches. */
export const redisProxy = Effect.acquireRelease(
  Effect.promise(() => {
    const target = new URL(testRedisUrl!)
    const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>()
    let mode: ProxyMode = "forward"
    const server = net.createServer((client) => {
      if (mode === "refuse") return client.destroy()
      const upstream = net.connect(Number(target.port || 6379), target.hostname)
      const pair = { client, upstream }
      pairs.add(pair)
      const close = () => {
        pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      client.on("error", close).on("close", close)
      upstream.on("error", close).on("close", close)
      client.pipe(upstream)
      if (mode === "forward") upstream.pipe(client)
      else upstream.pause()
    })
    return new Promise<{ url: string; set: (next: ProxyMode) => void; close: () => void }>((resolve) => {
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as net.AddressInfo
        resolve({
          url: `redis://127.0.0.1:${port}`,
          set: (next) => {
            if (next === mode) return
            mode = next
            for (const { client, upstream } of pairs) {
              if (next === "refuse") client.destroy()
              else if (next === "freeze") {
                // Redis's answers wait in the socket until the proxy thaws, as they would in a frozen server.
                upstream.unpipe(client)
                upstream.pause()
              } else upstream.pipe(client)
            }
          },
          close: () => {
            for (const { client } of pairs) client.destroy()
            server.close()
          }
        })
      })
    })
  }),
  (proxy) => Effect.sync(() => proxy.close())
)
