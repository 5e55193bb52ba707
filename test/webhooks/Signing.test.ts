import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import {
  generateWebhookSecret,
  sign,
  signatureHeader,
  verify,
  webhookHeaders,
  WebhookVerificationError
} from "../../src/webhooks/Signing.js"

const payload = JSON.stringify({
  id: "evt_123",
  type: "document.authorized",
  data: { object: { id: "doc_1", total: "1 234,50 €", note: "ñandú 🧾" } }
})
const msgId = "evt_123"
const T = 1_700_000_000 // unix seconds used with TestClock

const atTime = (seconds: number) => TestClock.setTime(seconds * 1000)

const reasonOf = <A>(effect: Effect.Effect<A, WebhookVerificationError>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(WebhookVerificationError)
    return error.reason
  })

describe("generateWebhookSecret", () => {
  it("is whsec_ + base64 of 32 random bytes, accepted by standardwebhooks", () => {
    const secrets = new Set(Array.from({ length: 20 }, generateWebhookSecret))
    expect(secrets.size).toBe(20)
    for (const secret of secrets) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32)
      expect(() => new Webhook(secret)).not.toThrow()
    }
  })
})

describe("sign", () => {
  it("matches the published Standard Webhooks test vector", () => {
    expect(
      sign({
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        msgId: "msg_p5jXN8AQM9LWM0D4loKWxJek",
        timestamp: 1614265330,
        payload: "{\"test\": 2432232314}"
      })
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
  })

  it("produces exactly what the standardwebhooks library produces", () => {
    for (const body of [payload, "", "plain text", "{\"a\":\"\\u00e9\"}"]) {
      const secret = generateWebhookSecret()
      const date = new Date(T * 1000 + 999) // milliseconds must be truncated, not rounded
      expect(sign({ secret, msgId, timestamp: date, payload: body })).toBe(
        new Webhook(secret).sign(msgId, date, body)
      )
      expect(sign({ secret, msgId, timestamp: T, payload: body })).toBe(
        sign({ secret, msgId, timestamp: date, payload: body })
      )
    }
  })

  it("treats a malformed secret as a programming error", () => {
    expect(() => sign({ secret: "whsec_", msgId, timestamp: T, payload })).toThrow()
    expect(() => sign({ secret: "whsec_not base64!", msgId, timestamp: T, payload })).toThrow()
    expect(() => signatureHeader([], { msgId, timestamp: T, payload })).toThrow()
  })
})

describe("deliveries verified by the independent standardwebhooks library", () => {
  it("accepts our headers and payload", () => {
    const secret = generateWebhookSecret()
    const headers = webhookHeaders([secret], { msgId, timestamp: new Date(), payload })
    expect(new Webhook(secret).verify(payload, headers)).toEqual(JSON.parse(payload))
  })

  it("accepts a rotation header with the old secret alone and with the new secret alone", () => {
    const oldSecret = generateWebhookSecret()
    const newSecret = generateWebhookSecret()
    const headers = webhookHeaders([oldSecret, newSecret], { msgId, timestamp: new Date(), payload })
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2)

    expect(new Webhook(oldSecret).verify(payload, headers)).toEqual(JSON.parse(payload))
    expect(new Webhook(newSecret).verify(payload, headers)).toEqual(JSON.parse(payload))
    expect(() => new Webhook(generateWebhookSecret()).verify(payload, headers)).toThrow()
  })

  it("rejects our signature over a different payload", () => {
    const secret = generateWebhookSecret()
    const headers = webhookHeaders([secret], { msgId, timestamp: new Date(), payload })
    expect(() => new Webhook(secret).verify(payload.replace("doc_1", "doc_2"), headers)).toThrow()
  })
})

describe("verify", () => {
  const secret = generateWebhookSecret()
  const theirs = (body: string, seconds: number) => ({
    "webhook-id": msgId,
    "webhook-timestamp": String(seconds),
    "webhook-signature": new Webhook(secret).sign(msgId, new Date(seconds * 1000), body)
  })

  it.effect("accepts what standardwebhooks signs", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      yield* verify({ secret, headers: theirs(payload, T), payload })
      yield* verify({ secret, headers: theirs("", T), payload: "" })
    }))

  it.effect("matches header names case-insensitively", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const h = theirs(payload, T)
      yield* verify({
        secret,
        payload,
        headers: {
          "Webhook-Id": h["webhook-id"],
          "WEBHOOK-TIMESTAMP": h["webhook-timestamp"],
          "Webhook-Signature": h["webhook-signature"]
        }
      })
    }))

  it.effect("accepts a rotation header with either secret", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const oldSecret = generateWebhookSecret()
      const newSecret = generateWebhookSecret()
      const headers = webhookHeaders([oldSecret, newSecret], { msgId, timestamp: T, payload })
      yield* verify({ secret: oldSecret, headers, payload })
      yield* verify({ secret: newSecret, headers, payload })
      expect(yield* reasonOf(verify({ secret: generateWebhookSecret(), headers, payload }))).toBe("invalid_signature")
    }))

  it.effect("accepts a valid signature among unknown versions and junk", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const good = sign({ secret, msgId, timestamp: T, payload })
      const headers = {
        ...theirs(payload, T),
        "webhook-signature": `v1a,AAAA v2,${good.slice(3)} junk  ${good}`
      }
      yield* verify({ secret, headers, payload })
    }))

  it.effect("rejects a tampered payload", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const reason = yield* reasonOf(verify({ secret, headers: theirs(payload, T), payload: payload + " " }))
      expect(reason).toBe("invalid_signature")
    }))

  it.effect("rejects a tampered id or timestamp", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const h = theirs(payload, T)
      expect(yield* reasonOf(verify({ secret, payload, headers: { ...h, "webhook-id": "evt_124" } }))).toBe(
        "invalid_signature"
      )
      expect(yield* reasonOf(verify({ secret, payload, headers: { ...h, "webhook-timestamp": String(T + 1) } })))
        .toBe("invalid_signature")
    }))

  it.effect("rejects the wrong secret", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const reason = yield* reasonOf(verify({ secret: generateWebhookSecret(), headers: theirs(payload, T), payload }))
      expect(reason).toBe("invalid_signature")
    }))

  it.effect("rejects a signature that is not v1 or is truncated", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const good = sign({ secret, msgId, timestamp: T, payload })
      for (const signature of [good.replace("v1,", "v2,"), good.slice(0, -2), good.slice(3), "v1,"]) {
        const headers = { ...theirs(payload, T), "webhook-signature": signature }
        expect(yield* reasonOf(verify({ secret, headers, payload }))).toBe("invalid_signature")
      }
    }))

  it.effect("accepts timestamps up to 5 minutes old and rejects older ones", () =>
    Effect.gen(function*() {
      const headers = theirs(payload, T)
      yield* atTime(T + 300)
      yield* verify({ secret, headers, payload })
      yield* TestClock.adjust("1 second")
      expect(yield* reasonOf(verify({ secret, headers, payload }))).toBe("timestamp_too_old")
      yield* atTime(T + 3600)
      expect(yield* reasonOf(verify({ secret, headers, payload }))).toBe("timestamp_too_old")
    }))

  it.effect("accepts timestamps up to 5 minutes ahead and rejects further ones", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      yield* verify({ secret, headers: theirs(payload, T + 300), payload })
      expect(yield* reasonOf(verify({ secret, headers: theirs(payload, T + 301), payload }))).toBe("timestamp_too_new")
    }))

  it.effect("honours a custom tolerance", () =>
    Effect.gen(function*() {
      yield* atTime(T + 31)
      const reason = yield* reasonOf(verify({ secret, headers: theirs(payload, T), payload, toleranceSeconds: 30 }))
      expect(reason).toBe("timestamp_too_old")
    }))

  it.effect("rejects missing headers", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      const full = theirs(payload, T)
      for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
        const { [name]: _dropped, ...rest } = full
        expect(yield* reasonOf(verify({ secret, headers: rest, payload }))).toBe("missing_headers")
        expect(yield* reasonOf(verify({ secret, headers: { ...full, [name]: "" }, payload }))).toBe("missing_headers")
      }
      expect(yield* reasonOf(verify({ secret, headers: {}, payload }))).toBe("missing_headers")
    }))

  it.effect("rejects a garbage timestamp", () =>
    Effect.gen(function*() {
      yield* atTime(T)
      for (const timestamp of ["abc", `${T}abc`, `-${T}`, `${T}.5`, ` ${T}`, "1e9", "9".repeat(30)]) {
        const headers = { ...theirs(payload, T), "webhook-timestamp": timestamp }
        expect(yield* reasonOf(verify({ secret, headers, payload }))).toBe("invalid_timestamp")
      }
    }))
})
