/**
 * Limits on what makes the service send mail (SPEC §11): verification links per user, reset links
 * per address and per client, and the confirmations per client (each a guess at a token). Without
 * them anyone could make the service mail a stranger's inbox in a loop.
 */
import { Effect } from "effect"
import { normalizeEmail } from "../domain/User.js"
import { RateLimiter } from "../ratelimit/RateLimiter.js"

/** Three at once, then one every five minutes. */
const perMailbox = { capacity: 3, refillPerSecond: 1 / 300 }
/** An office behind one address may have several people asking. */
const perClient = { capacity: 20, refillPerSecond: 20 / 3600 }
/** Confirmations: a person clicks a link a few times at most; guessing needs far more. */
const confirmations = { capacity: 30, refillPerSecond: 30 / 600 }

export const makeMailLimits = Effect.gen(function*() {
  const limiter = yield* RateLimiter
  return {
    resendVerification: (userId: string) => limiter.consume([{ key: `verify-resend:${userId}`, policy: perMailbox }]),
    requestReset: (email: string, address: string) =>
      limiter.consume([
        { key: `reset-address:${address}`, policy: perClient },
        { key: `reset-email:${normalizeEmail(email)}`, policy: perMailbox }
      ]),
    confirm: (address: string) => limiter.consume([{ key: `link-confirm:${address}`, policy: confirmations }])
  } as const
})
