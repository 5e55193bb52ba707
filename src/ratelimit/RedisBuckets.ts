/**
 * Token buckets in Redis, shared by every instance. One Lua script refills and takes atomically on
 * the server's clock (instances whose clocks disagree still agree on the buckets), and every key
 * expires once it would be full or forgotten anyway, so Redis holds only buckets in use.
 */
import { sha1 } from "@noble/hashes/legacy.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Data, Duration, Effect } from "effect"
import type { Redis } from "ioredis"
import type { BucketStore, Draw } from "./Buckets.js"

/** Redis did not answer: refused, disconnected, timed out or an error reply. */
export class RedisUnavailable extends Data.TaggedError("RedisUnavailable")<{ readonly cause: unknown }> {}

// KEYS: the buckets; ARGV: each bucket's capacity, refill per second and cost (0 or 1), in turn.
// The same rules as `makeMemoryBuckets`: all or none, a level refilled from the time it was left.
const DRAW_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local levels = {}
local allowed = 1
for i, key in ipairs(KEYS) do
  local capacity = tonumber(ARGV[3 * i - 2])
  local rate = tonumber(ARGV[3 * i - 1])
  local stored = redis.call('HMGET', key, 'tokens', 'at')
  local level = capacity
  if stored[1] then
    level = math.min(capacity, tonumber(stored[1]) + math.max(0, now - tonumber(stored[2])) * rate / 1000)
  end
  levels[i] = level
  if level < 1 then allowed = 0 end
end
local reply = { allowed }
for i, key in ipairs(KEYS) do
  local cost = tonumber(ARGV[3 * i])
  if allowed == 1 and cost > 0 then
    local capacity = tonumber(ARGV[3 * i - 2])
    local rate = tonumber(ARGV[3 * i - 1])
    levels[i] = levels[i] - cost
    redis.call('HSET', key, 'tokens', levels[i], 'at', now)
    redis.call('PEXPIRE', key, math.ceil((capacity - levels[i]) * 1000 / rate) + 1000)
  end
  reply[i + 1] = tostring(levels[i])
end
return reply
`
const DRAW_SHA = bytesToHex(sha1(utf8ToBytes(DRAW_SCRIPT)))

/**
 * The Redis key of a bucket or mark: its kind (the part before the first `:`) stays readable, the
 * rest (an email, an address) is hashed, so Redis holds no personal data and keys have a fixed length.
 */
export const redisKey = (prefix: string, key: string) => {
  const colon = key.indexOf(":")
  const kind = colon < 0 ? "" : key.slice(0, colon + 1)
  return `${prefix}${kind}${bytesToHex(sha256(utf8ToBytes(key))).slice(0, 32)}`
}

const attempt = <A>(run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => new RedisUnavailable({ cause }) })

const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith("NOSCRIPT")

export const makeRedisBuckets = (redis: Redis, prefix: string): BucketStore<RedisUnavailable> => {
  const draw = (draws: ReadonlyArray<Draw>) =>
    attempt(async () => {
      const keys = draws.map((d) => redisKey(prefix, d.key))
      const args = draws.flatMap((d) => [d.policy.capacity, d.policy.refillPerSecond, d.cost ?? 1])
      // The script is sent whole only when Redis does not have it yet (after a restart or failover).
      const reply = await redis.evalsha(DRAW_SHA, keys.length, ...keys, ...args).catch((error: unknown) => {
        if (isNoScript(error)) return redis.eval(DRAW_SCRIPT, keys.length, ...keys, ...args)
        throw error
      })
      // The script's reply: [allowed, level…], levels as strings (Redis would truncate Lua numbers).
      const [allowed, ...levels] = reply as [number, ...Array<string>]
      return { allowed: allowed === 1, levels: levels.map(Number) }
    })

  return {
    draw,
    reset: (key) => attempt(() => redis.del(redisKey(prefix, key))),
    remember: (key, ttl) => attempt(() => redis.set(redisKey(prefix, key), "1", "PX", Duration.toMillis(ttl))),
    remembers: (key) => attempt(async () => (await redis.exists(redisKey(prefix, key))) === 1)
  }
}
