/**
 * Token buckets and the stores that keep them: this instance's memory here, Redis in
 * RedisBuckets.ts. Both follow the same rules, so a fallback from one to the other changes where
 * the counts live, not what they mean.
 */
import { Clock, Duration, Effect } from "effect"

export interface BucketPolicy {
  readonly capacity: number
  readonly refillPerSecond: number
}

/** One bucket of a draw. `cost: 0` asks that the bucket still hold a token without taking it; absent, it takes one. */
export interface Draw {
  readonly key: string
  readonly policy: BucketPolicy
  readonly cost?: 0 | 1 | undefined
}

export interface DrawResult {
  /** Whether every bucket held a token; if not, none was taken from. */
  readonly allowed: boolean
  /** The tokens left in each bucket after the draw, in the order drawn. */
  readonly levels: ReadonlyArray<number>
}

/** Where buckets live. `E` is how the store can fail (never, for memory). */
export interface BucketStore<E> {
  /** All or none: takes `cost` from every bucket when each holds at least one token. */
  readonly draw: (draws: ReadonlyArray<Draw>) => Effect.Effect<DrawResult, E>
  /** Forgets a bucket: it is full again. */
  readonly reset: (key: string) => Effect.Effect<void, E>
  /** Remembers that `key` happened, for `ttl`. */
  readonly remember: (key: string, ttl: Duration.Duration) => Effect.Effect<void, E>
  readonly remembers: (key: string) => Effect.Effect<boolean, E>
}

/** The level of a bucket last left at `tokens` at `at`, refilled up to `now` (a clock going back adds nothing). */
export const refilled = (tokens: number, at: number, policy: BucketPolicy, now: number) =>
  Math.min(policy.capacity, tokens + (Math.max(0, now - at) / 1000) * policy.refillPerSecond)

interface Bucket {
  tokens: number
  at: number
  policy: BucketPolicy
}

const MAX_ENTRIES = 100_000

/** The memory's buckets, which can also be drawn synchronously at a time the caller read. */
export interface MemoryBuckets extends BucketStore<never> {
  readonly drawAt: (draws: ReadonlyArray<Draw>, now: number) => DrawResult
}

/** Buckets in this instance's memory, on the Effect clock (tests drive it), bounded in size. */
export const makeMemoryBuckets: Effect.Effect<MemoryBuckets> = Effect.sync(() => {
  const buckets = new Map<string, Bucket>()
  const marks = new Map<string, number>()

  const levelOf = (key: string, policy: BucketPolicy, now: number) => {
    const bucket = buckets.get(key)
    return bucket === undefined ? policy.capacity : refilled(bucket.tokens, bucket.at, bucket.policy, now)
  }

  // A full bucket carries no information; dropping it keeps memory bounded under key churn.
  // Each bucket refills by its own policy, so pruning never hands a login bucket a key's budget.
  const prune = (now: number) => {
    for (const [key, bucket] of buckets) {
      if (refilled(bucket.tokens, bucket.at, bucket.policy, now) >= bucket.policy.capacity) buckets.delete(key)
    }
  }

  // Loops rather than array callbacks, and a bucket updated in place: every authenticated request draws.
  const drawAt = (draws: ReadonlyArray<Draw>, now: number): DrawResult => {
    const levels = new Array<number>(draws.length)
    let allowed = true
    for (let i = 0; i < draws.length; i++) {
      const level = levelOf(draws[i]!.key, draws[i]!.policy, now)
      levels[i] = level
      if (level < 1) allowed = false
    }
    if (!allowed) return { allowed, levels }
    for (let i = 0; i < draws.length; i++) {
      const { cost = 1, key, policy } = draws[i]!
      if (cost === 0) continue
      const level = levels[i]! - cost
      levels[i] = level
      const bucket = buckets.get(key)
      if (bucket !== undefined) {
        bucket.tokens = level
        bucket.at = now
        bucket.policy = policy
      } else {
        if (buckets.size >= MAX_ENTRIES) prune(now)
        buckets.set(key, { tokens: level, at: now, policy })
      }
    }
    return { allowed, levels }
  }

  const draw = (draws: ReadonlyArray<Draw>) => Effect.map(Clock.currentTimeMillis, (now) => drawAt(draws, now))

  const reset = (key: string) => Effect.sync(() => void buckets.delete(key))

  const remember = (key: string, ttl: Duration.Duration) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      // Deleted first so a renewed mark moves to the end: a Map iterates in insertion order.
      marks.delete(key)
      if (marks.size >= MAX_ENTRIES) {
        for (const [mark, expiresAt] of marks) if (expiresAt <= now) marks.delete(mark)
        // Still full of live marks: the oldest goes.
        if (marks.size >= MAX_ENTRIES) marks.delete(marks.keys().next().value!)
      }
      marks.set(key, now + Duration.toMillis(ttl))
    })

  const remembers = (key: string) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const expiresAt = marks.get(key)
      if (expiresAt === undefined) return false
      if (expiresAt > now) return true
      marks.delete(key)
      return false
    })

  return { draw, drawAt, reset, remember, remembers }
})
