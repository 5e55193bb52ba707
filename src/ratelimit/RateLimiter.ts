/**
 * Token buckets kept in this instance's memory: per API key (SPEC §11) and per email and client
 * address for login and registration. Time comes from the Effect clock so tests can drive it.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { RateLimited } from "../domain/Errors.js"

export interface BucketPolicy {
  readonly capacity: number
  readonly refillPerSecond: number
}

interface Bucket {
  tokens: number
  updatedAt: number
  readonly policy: BucketPolicy
}

const MAX_BUCKETS = 100_000

export class RateLimiter extends Context.Service<RateLimiter>()("etd/RateLimiter", {
  make: Effect.sync(() => {
    const buckets = new Map<string, Bucket>()

    const refill = (bucket: Bucket, policy: BucketPolicy, now: number) => {
      bucket.tokens = Math.min(policy.capacity, bucket.tokens + ((now - bucket.updatedAt) / 1000) * policy.refillPerSecond)
      bucket.updatedAt = now
    }

    // A full bucket carries no information; dropping it keeps memory bounded under key churn.
    // Each bucket refills by its own policy, so pruning never hands a login bucket a key's budget.
    const prune = (now: number) => {
      for (const [key, bucket] of buckets) {
        refill(bucket, bucket.policy, now)
        if (bucket.tokens >= bucket.policy.capacity) buckets.delete(key)
      }
    }

    /** Takes one token or fails with `RateLimited`; sets the `RateLimit-*` headers either way. */
    const consume = (key: string, policy: BucketPolicy) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        let bucket = buckets.get(key)
        if (bucket === undefined) {
          if (buckets.size >= MAX_BUCKETS) prune(now)
          bucket = { tokens: policy.capacity, updatedAt: now, policy }
          buckets.set(key, bucket)
        }
        refill(bucket, policy, now)
        const allowed = bucket.tokens >= 1
        if (allowed) bucket.tokens -= 1
        const remaining = Math.floor(bucket.tokens)
        const resetSeconds = Math.ceil((policy.capacity - bucket.tokens) / policy.refillPerSecond)
        const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / policy.refillPerSecond))
        const headers: Record<string, string> = {
          "ratelimit-limit": String(policy.capacity),
          "ratelimit-remaining": String(remaining),
          "ratelimit-reset": String(resetSeconds)
        }
        if (!allowed) headers["retry-after"] = String(retryAfter)
        return HttpEffect.appendPreResponseHandler((_, response) =>
          Effect.succeed(HttpServerResponse.setHeaders(response, headers))
        ).pipe(
          Effect.andThen(allowed ? Effect.void : Effect.fail(new RateLimited({ retry_after: retryAfter })))
        )
      })

    return { consume } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
