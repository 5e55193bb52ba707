/**
 * What the authority said to a request answered in its own call (a correction letter, a number
 * voiding), as those requests keep it: `registered` with its protocol, or `refused` with the
 * authority's code (a request never sent, for want of a usable certificate, is refused here too:
 * nothing holds its place). No answer at all is the caller's `503`, the request left pending.
 */
import { Effect, Option } from "effect"
import type { AuthorityRejected, RequestNotSent, TransientAuthorityError } from "../authority/TaxAuthority.js"
import type { Transaction } from "../db/Repository.js"
import type { AuthorityAnswer } from "../domain/AuthorityAnswer.js"
import { CredentialRequired, ServiceUnavailable } from "../domain/Errors.js"
import { now } from "../domain/Time.js"

/** The call's outcome as an answer to keep; no answer fails with `503` naming what is pending. */
export const answerOf = (
  call: Effect.Effect<
    { readonly protocol: string | null; readonly registeredAt: Date },
    AuthorityRejected | RequestNotSent | TransientAuthorityError
  >,
  pending: string
): Effect.Effect<AuthorityAnswer, ServiceUnavailable> => {
  const unreachable = new ServiceUnavailable({
    message: `The tax authority did not answer; the ${pending} is pending: send the same request again after the ` +
      "number of seconds in Retry-After.",
    retry_after: 30
  })
  return call.pipe(
    Effect.map((registered): AuthorityAnswer => ({ status: "registered", ...registered })),
    Effect.catchTags({
      AuthorityRejected: (refused) =>
        Effect.succeed<AuthorityAnswer>({ status: "refused", error: { code: refused.code, message: refused.message } }),
      RequestNotSent: (error) =>
        Effect.succeed<AuthorityAnswer>({ status: "refused", error: { code: error.code, message: error.message } }),
      AuthorityUnavailable: () => Effect.fail(unreachable),
      AuthorityTimeout: () => Effect.fail(unreachable)
    })
  )
}

/** A request refused for want of a usable certificate is the caller's `422 credential_required`. */
export const failIfNoCredential = (answer: AuthorityAnswer): Effect.Effect<void, CredentialRequired> =>
  answer.status === "refused" && answer.error.code.startsWith("credential_")
    ? Effect.fail(new CredentialRequired({ message: answer.error.message }))
    : Effect.void

/**
 * Keeps the answer to a `pending` request in one transaction: `settle` writes it (None when another
 * request answered the same one first: that answer stands, `pending` as read), and a registered one
 * records its event with it. Then a refusal for want of a usable certificate is the caller's `422`.
 */
export const keepAnswer = <T extends { readonly status: string }, E, R>(options: {
  readonly answer: AuthorityAnswer
  readonly pending: T
  readonly settle: (at: Date) => Effect.Effect<Option.Option<T>, E, R>
  readonly recordRegistered: (registered: T) => Effect.Effect<unknown, E, R>
  readonly inTransaction: Transaction["Service"]["run"]
}) =>
  Effect.gen(function*() {
    const kept = yield* Effect.gen(function*() {
      const written = yield* options.settle(yield* now)
      if (Option.isNone(written)) return options.pending
      if (written.value.status === "registered") yield* options.recordRegistered(written.value)
      return written.value
    }).pipe(options.inTransaction)
    yield* failIfNoCredential(options.answer)
    return kept
  })
