/**
 * What each attempt of a webhook delivery writes, decided without a database or a receiver: every
 * branch of `decideDelivery`, the 5-day failing clock's edge, which attempts count against the
 * endpoint, which are one write, and how each decision is counted. WebhookDispatcher.unit.test.ts
 * checks that the dispatcher writes these decisions; Dispatcher.test.ts runs it on both databases.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Option } from "effect"
import {
  countsAsFailing,
  decideDelivery,
  DeliveryDecision,
  type DeliveryFacts,
  DeliveryOutcome,
  FAILING_DISABLE_AFTER,
  isSingleWrite,
  metricOutcome
} from "../../src/webhooks/DeliveryDecision.js"

const AT = new Date("2026-11-10T12:00:00Z")

const facts = (overrides: Partial<DeliveryFacts> = {}): DeliveryFacts => ({
  at: AT,
  failingSince: Option.some(AT),
  retryDelay: Option.some(Duration.minutes(5)),
  ...overrides
})

const answered = (status: number) => DeliveryOutcome.Answered({ status })
const noAnswer = DeliveryOutcome.NoAnswer({ error: "connect ECONNREFUSED 127.0.0.1:9" })
const abandoned = DeliveryOutcome.Abandoned({ reason: "endpoint deleted" })
const failingFor = (duration: Duration.Duration) => Option.some(new Date(AT.getTime() - Duration.toMillis(duration)))

describe("decideDelivery", () => {
  it("a delivery whose endpoint or event went away ends unsent, with the reason", () => {
    expect(decideDelivery({ outcome: abandoned, endpointFailing: true }, facts()))
      .toEqual(DeliveryDecision.Abandoned({ at: AT, reason: "endpoint deleted" }))
  })

  it("a 2xx succeeds, and clears the failing clock only where it ran", () => {
    for (const status of [200, 204, 299]) {
      expect(
        decideDelivery({ outcome: answered(status), endpointFailing: true }, facts({ failingSince: Option.none() }))
      )
        .toEqual(DeliveryDecision.Succeeded({ at: AT, statusCode: status, clearFailing: true }))
    }
    expect(decideDelivery({ outcome: answered(200), endpointFailing: false }, facts({ failingSince: Option.none() })))
      .toEqual(DeliveryDecision.Succeeded({ at: AT, statusCode: 200, clearFailing: false }))
  })

  it("a 410 fails the delivery and disables the endpoint as gone, however short its failing clock", () => {
    expect(decideDelivery({ outcome: answered(410), endpointFailing: false }, facts({ failingSince: Option.none() })))
      .toEqual(DeliveryDecision.Failed({ at: AT, statusCode: 410, lastError: "HTTP 410", disable: "gone" }))
  })

  it("any other answer, or none, is retried after the schedule's delay, the answer kept as the last one", () => {
    const runAt = new Date(AT.getTime() + 300_000)
    expect(decideDelivery({ outcome: answered(500), endpointFailing: false }, facts()))
      .toEqual(DeliveryDecision.Retrying({ at: AT, runAt, statusCode: 500, lastError: "HTTP 500" }))
    expect(decideDelivery({ outcome: answered(301), endpointFailing: true }, facts()))
      .toEqual(DeliveryDecision.Retrying({ at: AT, runAt, statusCode: 301, lastError: "HTTP 301" }))
    expect(decideDelivery({ outcome: noAnswer, endpointFailing: true }, facts()))
      .toEqual(
        DeliveryDecision.Retrying({ at: AT, runAt, statusCode: null, lastError: "connect ECONNREFUSED 127.0.0.1:9" })
      )
  })

  it("once the schedule is spent the delivery fails, the endpoint stays enabled", () => {
    expect(decideDelivery({ outcome: answered(503), endpointFailing: true }, facts({ retryDelay: Option.none() })))
      .toEqual(DeliveryDecision.Failed({ at: AT, statusCode: 503, lastError: "HTTP 503", disable: null }))
    expect(decideDelivery({ outcome: noAnswer, endpointFailing: true }, facts({ retryDelay: Option.none() })))
      .toEqual(
        DeliveryDecision.Failed({
          at: AT,
          statusCode: null,
          lastError: "connect ECONNREFUSED 127.0.0.1:9",
          disable: null
        })
      )
  })

  it("an endpoint failing for 5 days is disabled, even with retries left; a millisecond short, the delivery is retried", () => {
    expect(
      decideDelivery(
        { outcome: answered(500), endpointFailing: true },
        facts({ failingSince: failingFor(FAILING_DISABLE_AFTER) })
      )
    )
      .toEqual(DeliveryDecision.Failed({ at: AT, statusCode: 500, lastError: "HTTP 500", disable: "failing" }))
    expect(
      decideDelivery(
        { outcome: noAnswer, endpointFailing: true },
        facts({ failingSince: failingFor(Duration.days(9)) })
      )
    )
      .toMatchObject({ _tag: "Failed", disable: "failing" })
    const justShort = failingFor(Duration.subtract(FAILING_DISABLE_AFTER, Duration.millis(1)))
    expect(decideDelivery({ outcome: answered(500), endpointFailing: true }, facts({ failingSince: justShort }))._tag)
      .toBe("Retrying")
  })

  it("an endpoint the failing clock cannot be read for (it went away meanwhile) counts as not failing", () => {
    expect(
      decideDelivery({ outcome: answered(500), endpointFailing: true }, facts({ failingSince: Option.none() }))._tag
    )
      .toBe("Retrying")
  })
})

describe("countsAsFailing", () => {
  it("only what was sent and neither succeeded nor was a 410", () => {
    expect([199, 200, 299, 300, 404, 410, 500].map((status) => countsAsFailing(answered(status))))
      .toEqual([true, false, false, true, true, false, true])
    expect(countsAsFailing(noAnswer)).toBe(true)
    expect(countsAsFailing(abandoned)).toBe(false)
  })
})

describe("isSingleWrite", () => {
  it("a success at an endpoint that was not failing, or a delivery ended unsent; anything else is several writes", () => {
    expect(isSingleWrite({ outcome: answered(204), endpointFailing: false })).toBe(true)
    expect(isSingleWrite({ outcome: abandoned, endpointFailing: true })).toBe(true)
    expect(isSingleWrite({ outcome: answered(204), endpointFailing: true })).toBe(false)
    expect(isSingleWrite({ outcome: answered(410), endpointFailing: false })).toBe(false)
    expect(isSingleWrite({ outcome: answered(500), endpointFailing: false })).toBe(false)
    expect(isSingleWrite({ outcome: noAnswer, endpointFailing: false })).toBe(false)
  })
})

describe("metricOutcome", () => {
  it("counts what was sent by how it ended, a disabled endpoint apart; a delivery ended unsent is not counted", () => {
    expect(metricOutcome(DeliveryDecision.Succeeded({ at: AT, statusCode: 200, clearFailing: false }))).toBe(
      "succeeded"
    )
    expect(metricOutcome(DeliveryDecision.Retrying({ at: AT, runAt: AT, statusCode: 500, lastError: "HTTP 500" })))
      .toBe("retrying")
    expect(metricOutcome(DeliveryDecision.Failed({ at: AT, statusCode: 500, lastError: "HTTP 500", disable: null })))
      .toBe("failed")
    expect(metricOutcome(DeliveryDecision.Failed({ at: AT, statusCode: 410, lastError: "HTTP 410", disable: "gone" })))
      .toBe("disabled")
    expect(
      metricOutcome(DeliveryDecision.Failed({ at: AT, statusCode: 500, lastError: "HTTP 500", disable: "failing" }))
    ).toBe("disabled")
    expect(metricOutcome(DeliveryDecision.Abandoned({ at: AT, reason: "endpoint deleted" }))).toBeUndefined()
  })
})
