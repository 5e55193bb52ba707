/**
 * Prefixed, time-ordered, URL-safe ids (SPEC §2): `<prefix>_<26 chars>`, a 48-bit millisecond
 * timestamp and 80 random bits in Crockford base32, lower case. Sorting ids sorts by creation
 * time, which is what cursor pagination relies on.
 */
import { Clock, Effect, Schema } from "effect"

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"

export const idPrefixes = {
  user: "usr",
  tenant: "ten",
  apiKey: "key",
  document: "doc",
  credential: "crd",
  webhookEndpoint: "whe",
  event: "evt",
  delivery: "dlv",
  session: "ses"
} as const

export type IdKind = keyof typeof idPrefixes

export const encodeId = (prefix: string, millis: number, random: Uint8Array): string => {
  let time = ""
  let t = millis
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  // 80 random bits are 16 base32 characters: take them 5 bits at a time.
  let bits = 0
  let value = 0
  let rand = ""
  for (const byte of random.subarray(0, 10)) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      rand += CROCKFORD[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  return `${prefix}_${time}${rand}`
}

/**
 * A new id of the given kind, timed by the Effect clock so tests can control it. The Web Crypto
 * global rather than `node:crypto`: this file is part of the contract the published client bundles.
 */
export const makeId = (kind: IdKind) =>
  Effect.map(
    Clock.currentTimeMillis,
    (now) => encodeId(idPrefixes[kind], now, globalThis.crypto.getRandomValues(new Uint8Array(10)))
  )

const idPattern = (kind: IdKind) => new RegExp(`^${idPrefixes[kind]}_[0-9a-hjkmnp-tv-z]{26}$`, "u")

/**
 * Schema of an id of one kind. A malformed id in a path is `400 invalid_request` (SPEC §2), except
 * `{tenantId}`: authentication checks it first, so it is the `404` of any tenant the caller cannot see.
 */
export const IdOf = (kind: IdKind) =>
  Schema.String.check(Schema.isPattern(idPattern(kind))).annotate({
    description: `An id with the \`${idPrefixes[kind]}_\` prefix.`
  })

/** The `{tenantId}` path parameter every tenant-scoped endpoint declares. */
export const TenantId = IdOf("tenant")
