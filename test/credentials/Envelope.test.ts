import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import { inspect } from "node:util"
import {
  generateMasterKey,
  type MasterKeyRing,
  open,
  parseEnvelope,
  parseMasterKeys,
  rewrap,
  seal,
  type SealedEnvelope,
  serializeEnvelope
} from "../../src/credentials/Envelope.js"

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")
const K1 = randomBytes(32)
const K2 = randomBytes(32)
const ENTRY_K1 = `k1:${b64(K1)}`
const ENTRY_K2 = `k2:${b64(K2)}`
const AAD = "tenant:ten_01HZX/credential:cred_01HZY"
const SECRET = new Uint8Array(Buffer.from("PKCS#12 bytes and password go here"))

// Every way key material could show up in a message or a serialized error.
const keyRenderings = (key: Uint8Array): ReadonlyArray<string> => {
  const buf = Buffer.from(key)
  return [buf.toString("base64"), buf.toString("base64url"), buf.toString("hex"), buf.toString("base64").slice(0, 16)]
}

const expectNoKeyMaterial = (rendered: string, ...keys: ReadonlyArray<Uint8Array>) => {
  for (const key of keys) for (const r of keyRenderings(key)) expect(rendered).not.toContain(r)
}

const ring = (value: string) => parseMasterKeys(value)

const flipByte = (bytes: Uint8Array, index: number): Uint8Array => {
  const copy = new Uint8Array(bytes)
  copy[index] = copy[index]! ^ 0x01
  return copy
}

const openFailure = (keys: MasterKeyRing, envelope: SealedEnvelope, aad: string) =>
  Effect.map(Effect.flip(open(keys, envelope, aad)), (e) => {
    expectNoKeyMaterial(`${e.message} ${JSON.stringify(e)}`, K1, K2)
    return e.reason
  })

describe("parseMasterKeys", () => {
  it.effect("takes the first entry as current and the rest as previous", () =>
    Effect.gen(function*() {
      const keys = yield* ring(` ${ENTRY_K2} , ${ENTRY_K1}`)
      expect(keys.current.id).toBe("k2")
      expect(Buffer.from(keys.current.key).equals(K2)).toBe(true)
      expect(keys.previous.map((k) => k.id)).toEqual(["k1"])
      expect(Buffer.from(keys.previous[0]!.key).equals(K1)).toBe(true)

      const single = yield* ring(ENTRY_K1)
      expect(single.previous).toEqual([])
    }))

  it.effect("accepts url-safe base64 and keeps key bytes out of JSON and inspect output", () =>
    Effect.gen(function*() {
      const keys = yield* ring(`k1:${K1.toString("base64url")}`)
      expect(Buffer.from(keys.current.key).equals(K1)).toBe(true)
      expectNoKeyMaterial(`${JSON.stringify(keys)} ${inspect(keys, { depth: 5 })}`, K1)
      expect(JSON.stringify(keys)).toContain("k1")
    }))

  it.effect("refuses malformed configurations without echoing key material", () =>
    Effect.gen(function*() {
      const short = randomBytes(31)
      const long = randomBytes(33)
      const cases: ReadonlyArray<readonly [string, RegExp]> = [
        ["", /empty/],
        ["   ", /empty/],
        [",", /empty/],
        [`${ENTRY_K1},`, /entry 2 is not of the form/],
        [b64(K1), /entry 1 is not of the form/],
        [`:${b64(K1)}`, /key id/],
        [`bad id!:${b64(K1)}`, /key id/],
        [`${ENTRY_K1},k1:${b64(K2)}`, /entry 2: duplicate key id "k1"/],
        [`k1:${b64(short)}`, /31 bytes, expected 32/],
        [`k1:${b64(long)}`, /33 bytes, expected 32/],
        [`k1:${b64(K1)}!!`, /not base64/],
        [`${ENTRY_K1},k2:`, /entry 2 .*0 bytes/]
      ]
      for (const [value, message] of cases) {
        const error = yield* Effect.flip(ring(value))
        expect(error._tag).toBe("MasterKeyError")
        expect(error.message).toMatch(message)
        expectNoKeyMaterial(`${error.message} ${JSON.stringify(error)}`, K1, K2, short, long)
      }
    }))

  it.effect("generateMasterKey produces an entry parseMasterKeys accepts", () =>
    Effect.gen(function*() {
      const entry = generateMasterKey("dev-2026.01")
      expect(entry).toMatch(/^dev-2026\.01:[A-Za-z0-9+/]{43}=$/)
      const keys = yield* ring(entry)
      expect(keys.current.id).toBe("dev-2026.01")
      expect(keys.current.key.length).toBe(32)
      expect(generateMasterKey("a")).not.toBe(generateMasterKey("a"))
      expect(() => generateMasterKey("no:colons")).toThrow()
    }))
})

describe("seal / open", () => {
  it.effect("round-trips, with the documented layout and fresh randomness each time", () =>
    Effect.gen(function*() {
      const keys = yield* ring(ENTRY_K1)
      const envelope = seal(keys, SECRET, AAD)
      expect(envelope.version).toBe(1)
      expect(envelope.keyId).toBe("k1")
      expect(envelope.wrappedKey.length).toBe(12 + 32 + 16)
      expect(envelope.ciphertext.length).toBe(12 + SECRET.length + 16)
      expect(Buffer.from(envelope.ciphertext).includes(Buffer.from(SECRET))).toBe(false)
      expect(yield* open(keys, envelope, AAD)).toEqual(SECRET)

      const again = seal(keys, SECRET, AAD)
      expect(Buffer.from(again.wrappedKey).equals(Buffer.from(envelope.wrappedKey))).toBe(false)
      expect(Buffer.from(again.ciphertext).equals(Buffer.from(envelope.ciphertext))).toBe(false)

      const empty = seal(keys, new Uint8Array(0), AAD)
      expect(yield* open(keys, empty, AAD)).toEqual(new Uint8Array(0))
      const big = new Uint8Array(randomBytes(100_000))
      expect(yield* open(keys, seal(keys, big, AAD), AAD)).toEqual(big)
    }))

  it.effect("detects a flipped byte anywhere in the ciphertext or the wrapped key", () =>
    Effect.gen(function*() {
      const keys = yield* ring(ENTRY_K1)
      const envelope = seal(keys, SECRET, AAD)
      // IV, body and tag of each layer.
      for (const i of [0, 11, 12, 20, envelope.ciphertext.length - 1]) {
        const tampered = { ...envelope, ciphertext: flipByte(envelope.ciphertext, i) }
        expect(yield* openFailure(keys, tampered, AAD)).toBe("decryption_failed")
      }
      for (const i of [0, 11, 12, 43, 44, 59]) {
        const tampered = { ...envelope, wrappedKey: flipByte(envelope.wrappedKey, i) }
        expect(yield* openFailure(keys, tampered, AAD)).toBe("decryption_failed")
      }
      const truncated = { ...envelope, ciphertext: envelope.ciphertext.subarray(0, envelope.ciphertext.length - 4) }
      expect(yield* openFailure(keys, truncated, AAD)).toBe("decryption_failed")
      const shortKey = { ...envelope, wrappedKey: envelope.wrappedKey.subarray(0, 50) }
      expect(yield* openFailure(keys, shortKey, AAD)).toBe("decryption_failed")
    }))

  it.effect("binds the aad to both layers", () =>
    Effect.gen(function*() {
      const keys = yield* ring(ENTRY_K1)
      const envelope = seal(keys, SECRET, AAD)
      expect(yield* openFailure(keys, envelope, "tenant:ten_other/credential:cred_01HZY")).toBe("decryption_failed")
      expect(yield* openFailure(keys, envelope, "")).toBe("decryption_failed")

      // A wrapped key moved onto another row's ciphertext does not open it either.
      const other = seal(keys, SECRET, AAD)
      const spliced = { ...envelope, wrappedKey: other.wrappedKey }
      expect(yield* openFailure(keys, spliced, AAD)).toBe("decryption_failed")
    }))

  it.effect("fails with unknown_key_id when the ring lacks the envelope's key", () =>
    Effect.gen(function*() {
      const envelope = seal(yield* ring(ENTRY_K1), SECRET, AAD)
      expect(yield* openFailure(yield* ring(ENTRY_K2), envelope, AAD)).toBe("unknown_key_id")
      // Same id, different bytes: the key id is right but the tag cannot verify.
      expect(yield* openFailure(yield* ring(`k1:${b64(K2)}`), envelope, AAD)).toBe("decryption_failed")
    }))
})

describe("rotation", () => {
  it.effect("opens with previous keys, rewraps to the current one, and forgets retired keys", () =>
    Effect.gen(function*() {
      const before = yield* ring(ENTRY_K1)
      const sealed = seal(before, SECRET, AAD)

      const rotating = yield* ring(`${ENTRY_K2},${ENTRY_K1}`)
      expect(yield* open(rotating, sealed, AAD)).toEqual(SECRET)

      const rewrapped = yield* rewrap(rotating, sealed, AAD)
      expect(rewrapped.keyId).toBe("k2")
      expect(rewrapped.ciphertext).toBe(sealed.ciphertext)
      expect(Buffer.from(rewrapped.wrappedKey).equals(Buffer.from(sealed.wrappedKey))).toBe(false)
      expect(yield* open(rotating, rewrapped, AAD)).toEqual(SECRET)

      const after = yield* ring(ENTRY_K2)
      expect(yield* open(after, rewrapped, AAD)).toEqual(SECRET)
      expect(yield* openFailure(after, sealed, AAD)).toBe("unknown_key_id")

      // New envelopes go under the current key.
      expect(seal(rotating, SECRET, AAD).keyId).toBe("k2")
    }))

  it.effect("rewrap is a no-op under the current key and refuses tampered or foreign envelopes", () =>
    Effect.gen(function*() {
      const rotating = yield* ring(`${ENTRY_K2},${ENTRY_K1}`)
      const current = seal(rotating, SECRET, AAD)
      expect(yield* rewrap(rotating, current, AAD)).toBe(current)

      const old = seal(yield* ring(ENTRY_K1), SECRET, AAD)
      const wrongAad = yield* Effect.flip(rewrap(rotating, old, "another row"))
      expect(wrongAad.reason).toBe("decryption_failed")
      const tampered = { ...old, wrappedKey: flipByte(old.wrappedKey, 30) }
      expect((yield* Effect.flip(rewrap(rotating, tampered, AAD))).reason).toBe("decryption_failed")
      const unknown = yield* Effect.flip(rewrap(yield* ring(`k3:${b64(randomBytes(32))}`), old, AAD))
      expect(unknown.reason).toBe("unknown_key_id")
    }))
})

describe("serialization", () => {
  it.effect("round-trips through the documented text form", () =>
    Effect.gen(function*() {
      const keys = yield* ring(ENTRY_K1)
      const envelope = seal(keys, SECRET, AAD)
      const text = serializeEnvelope(envelope)
      expect(text).toMatch(/^v1:k1:[A-Za-z0-9_-]{80}:[A-Za-z0-9_-]+$/)
      const parsed = yield* parseEnvelope(text)
      expect(parsed).toEqual(envelope)
      expect(yield* open(keys, parsed, AAD)).toEqual(SECRET)
    }))

  it.effect("refuses malformed text", () =>
    Effect.gen(function*() {
      const text = serializeEnvelope(seal(yield* ring(ENTRY_K1), SECRET, AAD))
      const [, , wk, ct] = text.split(":")
      const inputs = [
        "",
        "garbage",
        text.replace(/^v1:/, "v2:"),
        `${text}:extra`,
        `v1:k1:${wk}`,
        `v1:bad id:${wk}:${ct}`,
        `v1:k1:${wk}!:${ct}`,
        `v1:k1:${wk!.slice(0, 40)}:${ct}`,
        `v1:k1:${wk}:${ct!.slice(0, 20)}`
      ]
      for (const input of inputs) {
        const error = yield* Effect.flip(parseEnvelope(input))
        expect(error.reason).toBe("malformed")
      }
    }))
})
