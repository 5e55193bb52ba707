/**
 * Standard Webhooks signing (https://www.standardwebhooks.com/): what we send is verified by any
 * Standard Webhooks library, and `verify` is the receiving side for our own tests and tools.
 */
import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { randomBytes, timingSafeEqual } from "node:crypto"

const SECRET_PREFIX = "whsec_"
const SIGNATURE_VERSION = "v1"
const SECRET_BYTES = 32
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

export const DEFAULT_TOLERANCE_SECONDS = 300

export const WebhookVerificationReason = Schema.Literals([
  "missing_headers",
  "invalid_timestamp",
  "timestamp_too_old",
  "timestamp_too_new",
  "invalid_signature"
])
export type WebhookVerificationReason = typeof WebhookVerificationReason.Type

export class WebhookVerificationError extends Schema.TaggedError<WebhookVerificationError>()(
  "WebhookVerificationError",
  { reason: WebhookVerificationReason }
) {}

/** `whsec_` + base64 of 32 bytes from the OS CSPRNG. */
export const generateWebhookSecret = (): string => SECRET_PREFIX + randomBytes(SECRET_BYTES).toString("base64")

/**
 * Our secrets are always well formed, so a malformed one is a programming error (a defect),
 * not something a caller can recover from. `Buffer.from(.., "base64")` silently skips junk,
 * hence the explicit alphabet check.
 */
const secretKey = (secret: string): Uint8Array => {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret
  if (!BASE64.test(encoded)) {
    throw new Error("Webhook secret is not base64 (expected whsec_<base64>)")
  }
  const key = Buffer.from(encoded, "base64")
  if (key.length === 0) throw new Error("Webhook secret is empty")
  return key
}

const toUnixSeconds = (timestamp: Date | number): number => {
  const seconds = typeof timestamp === "number" ? timestamp : timestamp.getTime() / 1000
  if (!Number.isFinite(seconds)) throw new Error("Webhook timestamp is not a finite time")
  return Math.floor(seconds)
}

export interface WebhookMessage {
  readonly msgId: string
  /** A Date, or unix time in seconds; sub-second precision is dropped as the spec requires. */
  readonly timestamp: Date | number
  /** The exact body bytes that are sent, as a string. */
  readonly payload: string
}

export interface SignInput extends WebhookMessage {
  readonly secret: string
}

const mac = (key: Uint8Array, message: WebhookMessage): string => {
  const content = `${message.msgId}.${toUnixSeconds(message.timestamp)}.${message.payload}`
  return Buffer.from(hmac(sha256, key, new TextEncoder().encode(content))).toString("base64")
}

/** `v1,<base64 HMAC-SHA256(key, "{msgId}.{timestamp}.{payload}")>` */
export const sign = (input: SignInput): string => `${SIGNATURE_VERSION},${mac(secretKey(input.secret), input)}`

/**
 * The `webhook-signature` header: one signature per secret, space-separated, so receivers holding
 * either the old or the new secret keep verifying during a rotation.
 */
export const signatureHeader = (secrets: ReadonlyArray<string>, message: WebhookMessage): string => {
  if (secrets.length === 0) throw new Error("At least one webhook secret is required to sign")
  return secrets.map((secret) => sign({ ...message, secret })).join(" ")
}

/** All three Standard Webhooks headers for one delivery attempt. */
export const webhookHeaders = (
  secrets: ReadonlyArray<string>,
  message: WebhookMessage
): {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
} => ({
  "webhook-id": message.msgId,
  "webhook-timestamp": String(toUnixSeconds(message.timestamp)),
  "webhook-signature": signatureHeader(secrets, message)
})

export interface VerifyInput {
  readonly secret: string
  /** Header names are matched case-insensitively, as HTTP requires. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly payload: string
  readonly toleranceSeconds?: number
}

const header = (headers: Readonly<Record<string, string | undefined>>, name: string): string | undefined => {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value !== undefined && value !== "") return value
  }
  return undefined
}

// Digits only: parseInt would accept "123abc" and turn a malformed header into a valid one.
const TIMESTAMP = /^\d{1,15}$/

const fail = (reason: WebhookVerificationReason) => Effect.fail(new WebhookVerificationError({ reason }))

/**
 * Checks a delivery against one secret. The current time comes from `Clock`, so tests drive it
 * with `TestClock`.
 */
export const verify = (input: VerifyInput): Effect.Effect<void, WebhookVerificationError> =>
  Effect.gen(function*() {
    const msgId = header(input.headers, "webhook-id")
    const timestampHeader = header(input.headers, "webhook-timestamp")
    const signatures = header(input.headers, "webhook-signature")
    if (msgId === undefined || timestampHeader === undefined || signatures === undefined) {
      return yield* fail("missing_headers")
    }
    if (!TIMESTAMP.test(timestampHeader)) return yield* fail("invalid_timestamp")
    const timestamp = Number(timestampHeader)

    const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    if (now - timestamp > tolerance) return yield* fail("timestamp_too_old")
    if (timestamp - now > tolerance) return yield* fail("timestamp_too_new")

    const expected = Buffer.from(mac(secretKey(input.secret), { msgId, timestamp, payload: input.payload }))
    // Compare the canonical base64 text rather than decoded bytes: Node's base64 decoder is lenient,
    // and a signature should have exactly one accepted spelling.
    let matched = false
    for (const entry of signatures.split(" ")) {
      const comma = entry.indexOf(",")
      if (comma < 0 || entry.slice(0, comma) !== SIGNATURE_VERSION) continue
      const candidate = Buffer.from(entry.slice(comma + 1))
      // Length is public (always 44 chars for SHA-256); only equal-length inputs reach the constant-time compare.
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true
    }
    if (!matched) return yield* fail("invalid_signature")
  })
