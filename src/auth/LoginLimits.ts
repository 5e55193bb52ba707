/**
 * Login and registration limits (SPEC §3, §11). Per client address every attempt counts. Per
 * email only failed logins count and a success forgives them, so a flood of wrong passwords spends
 * the guesser's budget rather than the owner's; and an address the owner has logged in from before
 * is not held back by that email's failures at all.
 */
import { Duration, Effect, Predicate } from "effect"
import { AppConfig } from "../Config.js"
import { normalizeEmail } from "../domain/User.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"

/** How long a successful login vouches for its address (per email). */
const KNOWN_ADDRESS_TTL = Duration.days(30)

export const makeLoginLimits = Effect.gen(function*() {
  const limiter = yield* RateLimiter
  const { loginRateLimit } = yield* AppConfig
  const perEmail = { capacity: loginRateLimit.perMinute, refillPerSecond: loginRateLimit.perMinute / 60 }
  // One address may serve several people (an office behind NAT), so it gets a larger budget.
  const perAddress = { capacity: loginRateLimit.perMinute * 3, refillPerSecond: (loginRateLimit.perMinute * 3) / 60 }

  /** Registration: attempts per address and per email. */
  const register = (email: string, address: string) =>
    limiter.consume([
      { key: `register-address:${address}`, policy: perAddress },
      { key: `register-email:${normalizeEmail(email)}`, policy: perEmail }
    ])

  /** Runs `attempt` (the password check) within the limits, and counts its failure or forgives on success. */
  const login = <A, E, R>(email: string, address: string, attempt: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      const normalized = normalizeEmail(email)
      const failures = `login-failures:${normalized}`
      const knownAddress = `login-known:${normalized} ${address}`
      const known = yield* limiter.remembers(knownAddress)
      yield* limiter.consume([
        { key: `login-address:${address}`, policy: perAddress },
        // The email's failures only gate the attempt (cost 0): a correct password spends nothing.
        ...(known ? [] : [{ key: failures, policy: perEmail, cost: 0 as const }])
      ])
      return yield* attempt.pipe(
        Effect.tap(() => Effect.andThen(limiter.reset(failures), limiter.remember(knownAddress, KNOWN_ADDRESS_TTL))),
        Effect.tapError((error) =>
          Predicate.isTagged(error, "InvalidCredentials") ? limiter.record(failures, perEmail) : Effect.void
        )
      )
    })

  return { register, login } as const
})
