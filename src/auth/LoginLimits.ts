/**
 * Login and registration limits (SPEC §3, §11). The address is the client's as `ClientAddress.ts`
 * resolved it behind trusted proxies, counted per IPv4 address or IPv6 /64 (`limitKeyOf`), so one
 * busy client does not spend the budget of everyone behind the same load balancer.
 *
 * Logins pass these buckets:
 * - per address, every attempt, whatever the email: `3 × RATE_LIMIT_LOGIN_PER_MINUTE` a minute (an
 *   office behind NAT is several people);
 * - per email, its failures: `RATE_LIMIT_LOGIN_PER_MINUTE` a minute. A wrong password spends the
 *   guesser's budget, never the owner's: a correct one spends nothing and forgives the failures.
 *   From an address the owner logged in from before (a known address, 30 days), the failures of
 *   other places do not apply; that address's own failures for the email do, with the same budget,
 *   so guessing from a known address is limited too;
 * - per email, every attempt, success or failure: `RATE_LIMIT_LOGIN_ATTEMPTS_PER_HOUR` an hour
 *   (default three times the per-minute figure, 30), which a success does not refill. The failure
 *   buckets refill every few seconds and a success resets them; this cap is what bounds guessing
 *   over hours, from any number of addresses. It is kept twice, once for the email's known
 *   addresses together and once for all other addresses together: were it one bucket, a guesser
 *   anywhere could spend it and lock the owner out of the places they use. So an email sees at
 *   most twice the cap of guesses an hour, and an owner at a known place is held back only by
 *   someone guessing from one of the places they use themselves.
 */
import { Duration, Effect, Predicate } from "effect"
import { AppConfig } from "../Config.js"
import { normalizeEmail } from "../domain/User.js"
import { limitKeyOf } from "../http/ClientAddress.js"
import { type BucketPolicy, RateLimiter } from "../ratelimit/RateLimiter.js"

/** How long a successful login vouches for its address (per email). */
const KNOWN_ADDRESS_TTL = Duration.days(30)

const perMinute = (count: number): BucketPolicy => ({ capacity: count, refillPerSecond: count / 60 })
const perHour = (count: number): BucketPolicy => ({ capacity: count, refillPerSecond: count / 3600 })

export const makeLoginLimits = Effect.gen(function*() {
  const limiter = yield* RateLimiter
  const { loginRateLimit } = yield* AppConfig
  const perEmail = perMinute(loginRateLimit.perMinute)
  const perAddress = perMinute(loginRateLimit.perMinute * 3)
  const attempts = perHour(loginRateLimit.attemptsPerHour ?? loginRateLimit.perMinute * 3)

  /** Registration: attempts per address and per email. */
  const register = (email: string, client: string) =>
    limiter.consume([
      { key: `register-address:${limitKeyOf(client)}`, policy: perAddress },
      { key: `register-email:${normalizeEmail(email)}`, policy: perEmail }
    ])

  /** Runs `attempt` (the password check) within the limits, and counts its failure or forgives on success. */
  const login = <A, E, R>(email: string, client: string, attempt: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const normalized = normalizeEmail(email)
      const address = limitKeyOf(client)
      const emailFailures = `login-failures:${normalized}`
      const addressFailures = `login-failures:${normalized} ${address}`
      const knownAddress = `login-known:${normalized} ${address}`
      const known = yield* limiter.remembers(knownAddress)
      const failures = known ? addressFailures : emailFailures
      yield* limiter.consume([
        { key: `login-address:${address}`, policy: perAddress },
        { key: `login-attempts:${normalized} ${known ? "known" : "other"}`, policy: attempts },
        // Failures only gate the attempt (cost 0): a correct password spends nothing of them.
        { key: failures, policy: perEmail, cost: 0 }
      ])
      return yield* attempt.pipe(
        Effect.tap(() =>
          Effect.all([
            limiter.reset(emailFailures),
            limiter.reset(addressFailures),
            limiter.remember(knownAddress, KNOWN_ADDRESS_TTL)
          ], { discard: true })
        ),
        Effect.tapError((error) =>
          Predicate.isTagged(error, "InvalidCredentials") ? limiter.record(failures, perEmail) : Effect.void
        )
      )
    })

  return { register, login } as const
})
