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
  session: "ses",
  mail: "eml",
  userToken: "utk",
  invitation: "inv",
  audit: "aud",
  voiding: "vnr"
} as const

export type IdKind = keyof typeof idPrefixes

/*
 * The server's ids, each its own type, so an id of one kind cannot stand where another kind is
 * expected. The brand is compile-time only: at run time an id is its string. The contract (the
 * endpoints' schemas, and so the typed client and the OpenAPI document) keeps plain strings, since
 * integrators send ids they stored as strings. The schemas below decode the server's own rows: they
 * check no pattern, so a row decodes exactly as it did as a plain string.
 */
export const TenantId = Schema.String.pipe(Schema.brand("TenantId"))
export type TenantId = typeof TenantId.Type
export const DocumentId = Schema.String.pipe(Schema.brand("DocumentId"))
export type DocumentId = typeof DocumentId.Type
export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type
export const UserId = Schema.String.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const WebhookEndpointId = Schema.String.pipe(Schema.brand("WebhookEndpointId"))
export type WebhookEndpointId = typeof WebhookEndpointId.Type
export const DeliveryId = Schema.String.pipe(Schema.brand("DeliveryId"))
export type DeliveryId = typeof DeliveryId.Type
export const InvitationId = Schema.String.pipe(Schema.brand("InvitationId"))
export type InvitationId = typeof InvitationId.Type

/** The type of an id of each kind; the kinds without a type of their own are plain strings. */
interface IdTypes {
  readonly user: UserId
  readonly tenant: TenantId
  readonly apiKey: ApiKeyId
  readonly document: DocumentId
  readonly credential: string
  readonly webhookEndpoint: WebhookEndpointId
  readonly event: string
  readonly delivery: DeliveryId
  readonly session: string
  readonly mail: string
  readonly userToken: string
  readonly invitation: InvitationId
  readonly audit: string
  readonly voiding: string
}
export type Id<K extends IdKind> = IdTypes[K]

/**
 * A plain string typed as an id of `kind`, where the place it comes from says it is one: a path
 * parameter the contract's `IdOf(kind)` schema has already validated, a field of a verified request
 * that is only looked up (a malformed id finds no row, the same answer as an unknown one), or an id
 * this file has just made. The brand exists only at compile time, so there is nothing to check or
 * convert at run time: this is the one cast from a string to an id type.
 */
export const asId = <K extends IdKind>(_kind: K, id: string): Id<K> => id as Id<K>

export const encodeId = <K extends IdKind>(kind: K, millis: number, random: Uint8Array): Id<K> => {
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
  return asId(kind, `${idPrefixes[kind]}_${time}${rand}`)
}

/**
 * A new id of the given kind, timed by the Effect clock so tests can control it. The Web Crypto
 * global rather than `node:crypto`: this file is part of the contract the published client bundles.
 */
export const makeId = <K extends IdKind>(kind: K): Effect.Effect<Id<K>> =>
  Effect.map(
    Clock.currentTimeMillis,
    (now) => encodeId(kind, now, globalThis.crypto.getRandomValues(new Uint8Array(10)))
  )

const idPattern = (kind: IdKind) => new RegExp(`^${idPrefixes[kind]}_[0-9a-hjkmnp-tv-z]{26}$`, "u")

/**
 * The contract's schema of an id of one kind: a plain string with the kind's pattern. A malformed id
 * in a path is `400 invalid_request` (SPEC §2), except `{tenantId}`: authentication checks it first,
 * so it is the `404` of any tenant the caller cannot see.
 */
export const IdOf = (kind: IdKind) =>
  Schema.String.check(Schema.isPattern(idPattern(kind))).annotate({
    description: `An id with the \`${idPrefixes[kind]}_\` prefix.`
  })

/** The `{tenantId}` path parameter every tenant-scoped endpoint declares (a plain string: see `TenantId`). */
export const TenantIdParam = IdOf("tenant")
