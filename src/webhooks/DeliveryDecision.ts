/**
 * What a webhook delivery's attempt means for the delivery and its endpoint (SPEC §9), as data: the
 * attempt (a `DeliveryOutcome`) goes in, what to write (a `DeliveryDecision`) comes out, and the
 * WebhookDispatcher writes it. Pure, so every rule here is tested without a database or a receiver.
 */
import { Data, Duration, Option } from "effect"

/** An endpoint whose deliveries all failed for this long is disabled. */
export const FAILING_DISABLE_AFTER = Duration.days(5)

/** What one attempt came to. */
export type DeliveryOutcome = Data.TaggedEnum<{
  /** The receiver answered with `status`. */
  Answered: { readonly status: number }
  /** No answer: refused by the SSRF guard, a network error, or the timeout. */
  NoAnswer: { readonly error: string }
  /** Not sent: the endpoint or the event is gone, or the endpoint was disabled while the delivery waited. */
  Abandoned: { readonly reason: string }
}>
export const DeliveryOutcome = Data.taggedEnum<DeliveryOutcome>()

/** The outcome, and whether the endpoint was failing when the attempt started (a success then clears that). */
export interface DeliveryAttempt {
  readonly outcome: DeliveryOutcome
  readonly endpointFailing: boolean
}

/** What to write for an attempt; `at` is when it is recorded. */
export type DeliveryDecision = Data.TaggedEnum<{
  /** The delivery succeeded; the endpoint's failing clock is cleared when it ran. */
  Succeeded: { readonly at: Date; readonly statusCode: number; readonly clearFailing: boolean }
  /** The delivery is due again at `runAt`. */
  Retrying: { readonly at: Date; readonly runAt: Date; readonly statusCode: number | null; readonly lastError: string }
  /** The delivery failed for good; with `disable`, its endpoint is disabled (and its waiting deliveries end). */
  Failed: {
    readonly at: Date
    readonly statusCode: number | null
    readonly lastError: string
    readonly disable: "gone" | "failing" | null
  }
  /** The delivery ends unsent, with `reason` as its last error. */
  Abandoned: { readonly at: Date; readonly reason: string }
}>
export const DeliveryDecision = Data.taggedEnum<DeliveryDecision>()

/** What the decision needs besides the attempt. */
export interface DeliveryFacts {
  readonly at: Date
  /**
   * Since when the endpoint has been failing, this attempt's failure counted (its clock started if
   * it was not running); none for an attempt that does not count against the endpoint.
   */
  readonly failingSince: Option.Option<Date>
  /** The delivery schedule's delay before the next attempt; none once it is spent (or not asked for). */
  readonly retryDelay: Option.Option<Duration.Duration>
}

const isSuccess = (status: number) => status >= 200 && status <= 299

/**
 * Whether the attempt counts against its endpoint's failing clock: anything sent that did not
 * succeed, except a 410 (the endpoint is gone: disabled at once, whatever its clock).
 */
export const countsAsFailing = (outcome: DeliveryOutcome) =>
  outcome._tag === "NoAnswer" || (outcome._tag === "Answered" && !isSuccess(outcome.status) && outcome.status !== 410)

/**
 * Whether writing the decision is one statement, so it needs no transaction: a success at an
 * endpoint that was not failing (the commonest outcome), or a delivery ended unsent.
 */
export const isSingleWrite = ({ endpointFailing, outcome }: DeliveryAttempt) =>
  outcome._tag === "Abandoned" || (outcome._tag === "Answered" && isSuccess(outcome.status) && !endpointFailing)

export const decideDelivery = (
  { endpointFailing, outcome }: DeliveryAttempt,
  facts: DeliveryFacts
): DeliveryDecision => {
  const { at } = facts
  if (outcome._tag === "Abandoned") return DeliveryDecision.Abandoned({ at, reason: outcome.reason })
  if (outcome._tag === "Answered" && isSuccess(outcome.status)) {
    return DeliveryDecision.Succeeded({ at, statusCode: outcome.status, clearFailing: endpointFailing })
  }
  const statusCode = outcome._tag === "Answered" ? outcome.status : null
  const lastError = outcome._tag === "NoAnswer" ? outcome.error : `HTTP ${outcome.status}`
  if (statusCode === 410) return DeliveryDecision.Failed({ at, statusCode, lastError, disable: "gone" })
  const failingFor = Option.match(facts.failingSince, {
    onNone: () => 0,
    onSome: (since) => at.getTime() - since.getTime()
  })
  if (failingFor >= Duration.toMillis(FAILING_DISABLE_AFTER)) {
    return DeliveryDecision.Failed({ at, statusCode, lastError, disable: "failing" })
  }
  return Option.match(facts.retryDelay, {
    onNone: () => DeliveryDecision.Failed({ at, statusCode, lastError, disable: null }),
    onSome: (delay) =>
      DeliveryDecision.Retrying({ at, runAt: new Date(at.getTime() + Duration.toMillis(delay)), statusCode, lastError })
  })
}

/** The delivery metric's `outcome` for a decision; none for a delivery ended unsent (nothing was delivered or tried). */
export const metricOutcome = (
  decision: DeliveryDecision
): "succeeded" | "retrying" | "failed" | "disabled" | undefined => {
  switch (decision._tag) {
    case "Succeeded":
      return "succeeded"
    case "Retrying":
      return "retrying"
    case "Failed":
      return decision.disable === null ? "failed" : "disabled"
    case "Abandoned":
      return undefined
  }
}
