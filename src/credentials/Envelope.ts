/**
 * Envelope encryption for credentials at rest.
 *
 * Each secret gets its own random 256-bit data key; the data key encrypts the secret and a master
 * key (from configuration, identified by a key id) encrypts the data key. Rotating the master key
 * therefore only re-encrypts 60-byte wrapped keys (`rewrap`), never the secrets themselves.
 *
 * Both layers are AES-256-GCM with a fresh 96-bit IV and a 128-bit tag, and both bind the caller's
 * `aad` (e.g. tenant id + credential id), so a stored envelope copied onto another row does not open.
 *
 * Byte layouts:
 *   wrappedKey = IV (12) || AES-GCM(masterKey, dataKey) (32) || tag (16)
 *   ciphertext = IV (12) || AES-GCM(dataKey, plaintext) (n)  || tag (16)
 *
 * Serialized form (`serializeEnvelope`), one ASCII line fit for a text column:
 *   v1:<keyId>:<base64url wrappedKey>:<base64url ciphertext>
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

// ---------------------------------------------------------------------------------------------
// Master keys
// ---------------------------------------------------------------------------------------------

export interface MasterKey {
  readonly id: string
  /** 32 bytes. */
  readonly key: Uint8Array
}

export interface MasterKeyRing {
  /** Seals new envelopes. */
  readonly current: MasterKey
  /** Still accepted by `open`, so envelopes sealed before a rotation stay readable until rewrapped. */
  readonly previous: ReadonlyArray<MasterKey>
}

export class MasterKeyError extends Schema.TaggedError<MasterKeyError>()("MasterKeyError", {
  message: Schema.String
}) {}

export const EnvelopeErrorReason = Schema.Literals(["unknown_key_id", "decryption_failed", "malformed"])
export type EnvelopeErrorReason = typeof EnvelopeErrorReason.Type

export class EnvelopeError extends Schema.TaggedError<EnvelopeError>()("EnvelopeError", {
  reason: EnvelopeErrorReason,
  message: Schema.String
}) {}

const KEY_BYTES = 32
const IV_BYTES = 12
const TAG_BYTES = 16
const WRAPPED_KEY_BYTES = IV_BYTES + KEY_BYTES + TAG_BYTES

// Key ids travel in the env var and in the serialized envelope, both ':'-separated.
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/
// Buffer.from(.., "base64") silently skips junk, so check the alphabet first (standard or url-safe).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const BASE64URL = /^[A-Za-z0-9_-]*$/

// Keeps key bytes out of JSON.stringify, util.inspect and therefore out of logs.
const masterKey = (id: string, key: Uint8Array): MasterKey => {
  const redacted = () => ({ id, key: "<redacted>" })
  return Object.defineProperties(
    { id, key },
    {
      toJSON: { value: redacted, enumerable: false },
      [Symbol.for("nodejs.util.inspect.custom")]: { value: redacted, enumerable: false }
    }
  )
}

const decodeKeyMaterial = (encoded: string): Buffer | null => {
  if (BASE64.test(encoded)) return Buffer.from(encoded, "base64")
  if (BASE64URL.test(encoded)) return Buffer.from(encoded, "base64url")
  return null
}

/**
 * Parses `CREDENTIALS_MASTER_KEY`: `<kid>:<base64 of 32 bytes>[,<kid>:<base64>...]`, current key
 * first. Error messages name entries by position and id, never by content.
 */
export const parseMasterKeys = (value: string): Effect.Effect<MasterKeyRing, MasterKeyError> =>
  Effect.suspend(() => {
    const fail = (message: string) => Effect.fail(new MasterKeyError({ message }))
    const entries = value.split(",").map((e) => e.trim())
    if (value.trim() === "" || entries.every((e) => e === "")) {
      return fail("CREDENTIALS_MASTER_KEY is empty")
    }
    const keys: Array<MasterKey> = []
    for (const [i, entry] of entries.entries()) {
      const position = `CREDENTIALS_MASTER_KEY entry ${i + 1}`
      const colon = entry.indexOf(":")
      if (colon < 0) return fail(`${position} is not of the form <kid>:<base64>`)
      const id = entry.slice(0, colon).trim()
      if (!KEY_ID.test(id)) return fail(`${position}: key id must match ${KEY_ID.source}`)
      if (keys.some((k) => k.id === id)) return fail(`${position}: duplicate key id "${id}"`)
      const key = decodeKeyMaterial(entry.slice(colon + 1).trim())
      if (key === null) return fail(`${position} (id "${id}"): key is not base64`)
      if (key.length !== KEY_BYTES) {
        return fail(`${position} (id "${id}"): key is ${key.length} bytes, expected ${KEY_BYTES}`)
      }
      keys.push(masterKey(id, new Uint8Array(key)))
      key.fill(0)
    }
    const [current, ...previous] = keys
    return current === undefined ? fail("CREDENTIALS_MASTER_KEY is empty") : Effect.succeed({ current, previous })
  })

/**
 * A fresh `<kid>:<base64>` entry, e.g. for a development data dir. The id is chosen by the caller's
 * code, not by a user, so an invalid one is a defect.
 */
export const generateMasterKey = (id: string): string => {
  if (!KEY_ID.test(id)) throw new Error(`Master key id must match ${KEY_ID.source}`)
  return `${id}:${randomBytes(KEY_BYTES).toString("base64")}`
}

// ---------------------------------------------------------------------------------------------
// Envelopes
// ---------------------------------------------------------------------------------------------

export interface SealedEnvelope {
  readonly version: 1
  /** Id of the master key that wrapped the data key. */
  readonly keyId: string
  readonly wrappedKey: Uint8Array
  readonly ciphertext: Uint8Array
}

// Separate contexts for the two layers, so one layer's output can never pass for the other's.
// The key id is only in the wrap context: it is what the master key answers for.
const wrapAad = (keyId: string, aad: string): Buffer => Buffer.from(`etd-envelope/v1/wrap\0${keyId}\0${aad}`, "utf8")
const dataAad = (aad: string): Buffer => Buffer.from(`etd-envelope/v1/data\0${aad}`, "utf8")

const gcmEncrypt = (key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array => {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(aad)
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return new Uint8Array(Buffer.concat([iv, body, cipher.getAuthTag()]))
}

/** null when the tag does not verify (wrong key, wrong aad, tampered bytes). */
const gcmDecrypt = (key: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Buffer | null => {
  if (sealed.length < IV_BYTES + TAG_BYTES) return null
  const iv = sealed.subarray(0, IV_BYTES)
  const tag = sealed.subarray(sealed.length - TAG_BYTES)
  // authTagLength pins the tag size: Node would otherwise accept a truncated tag.
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
  decipher.setAAD(aad)
  decipher.setAuthTag(tag)
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()])
  } catch {
    return null
  }
}

const wrap = (master: MasterKey, dataKey: Uint8Array, aad: string): Uint8Array =>
  gcmEncrypt(master.key, dataKey, wrapAad(master.id, aad))

const envelopeError = (reason: EnvelopeErrorReason, message: string): EnvelopeError =>
  new EnvelopeError({ reason, message })

const findKey = (ring: MasterKeyRing, keyId: string): MasterKey | undefined =>
  [ring.current, ...ring.previous].find((k) => k.id === keyId)

const unwrap = (ring: MasterKeyRing, envelope: SealedEnvelope, aad: string): Effect.Effect<Buffer, EnvelopeError> =>
  Effect.suspend(() => {
    const master = findKey(ring, envelope.keyId)
    if (master === undefined) {
      return Effect.fail(
        envelopeError("unknown_key_id", `No configured master key has id "${envelope.keyId}"`)
      )
    }
    const dataKey = envelope.wrappedKey.length === WRAPPED_KEY_BYTES
      ? gcmDecrypt(master.key, envelope.wrappedKey, wrapAad(master.id, aad))
      : null
    return dataKey === null
      ? Effect.fail(
        envelopeError("decryption_failed", "The data key could not be unwrapped (tampered or wrong context)")
      )
      : Effect.succeed(dataKey)
  })

/** Encrypts under a fresh data key, wrapped by the ring's current master key. */
export const seal = (ring: MasterKeyRing, plaintext: Uint8Array, aad: string): SealedEnvelope => {
  const dataKey = randomBytes(KEY_BYTES)
  try {
    return {
      version: 1,
      keyId: ring.current.id,
      wrappedKey: wrap(ring.current, dataKey, aad),
      ciphertext: gcmEncrypt(dataKey, plaintext, dataAad(aad))
    }
  } finally {
    dataKey.fill(0)
  }
}

/** Decrypts with whichever configured master key (current or previous) the envelope names. */
export const open = (
  ring: MasterKeyRing,
  envelope: SealedEnvelope,
  aad: string
): Effect.Effect<Uint8Array, EnvelopeError> =>
  Effect.flatMap(unwrap(ring, envelope, aad), (dataKey) => {
    const plaintext = gcmDecrypt(dataKey, envelope.ciphertext, dataAad(aad))
    dataKey.fill(0)
    return plaintext === null
      ? Effect.fail(
        envelopeError("decryption_failed", "The ciphertext could not be decrypted (tampered or wrong context)")
      )
      : Effect.succeed(new Uint8Array(plaintext))
  })

/**
 * Re-wraps the data key under the current master key, leaving the ciphertext untouched; returns
 * the envelope itself when it already is under the current key. The old wrapped key is
 * authenticated on the way, so a tampered envelope fails here rather than being laundered.
 */
export const rewrap = (
  ring: MasterKeyRing,
  envelope: SealedEnvelope,
  aad: string
): Effect.Effect<SealedEnvelope, EnvelopeError> =>
  envelope.keyId === ring.current.id
    ? Effect.succeed(envelope)
    : Effect.map(unwrap(ring, envelope, aad), (dataKey) => {
      try {
        return { ...envelope, keyId: ring.current.id, wrappedKey: wrap(ring.current, dataKey, aad) }
      } finally {
        dataKey.fill(0)
      }
    })

// ---------------------------------------------------------------------------------------------
// Serialization
// ---------------------------------------------------------------------------------------------

const b64url = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url")

/** `v1:<keyId>:<base64url wrappedKey>:<base64url ciphertext>`. */
export const serializeEnvelope = (envelope: SealedEnvelope): string =>
  `v${envelope.version}:${envelope.keyId}:${b64url(envelope.wrappedKey)}:${b64url(envelope.ciphertext)}`

export const parseEnvelope = (serialized: string): Effect.Effect<SealedEnvelope, EnvelopeError> =>
  Effect.suspend(() => {
    const malformed = Effect.fail(envelopeError("malformed", "Not a serialized v1 credential envelope"))
    const parts = serialized.split(":")
    if (parts.length !== 4) return malformed
    const [version, keyId, wrappedKey, ciphertext] = parts
    if (version !== "v1" || !KEY_ID.test(keyId) || !BASE64URL.test(wrappedKey) || !BASE64URL.test(ciphertext)) {
      return malformed
    }
    const wk = Buffer.from(wrappedKey, "base64url")
    const ct = Buffer.from(ciphertext, "base64url")
    if (wk.length !== WRAPPED_KEY_BYTES || ct.length < IV_BYTES + TAG_BYTES) return malformed
    return Effect.succeed({ version: 1, keyId, wrappedKey: new Uint8Array(wk), ciphertext: new Uint8Array(ct) })
  })
