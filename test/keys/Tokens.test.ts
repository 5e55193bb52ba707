import { describe, expect, it } from "@effect/vitest"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { createHash } from "node:crypto"
import {
  apiKeyTokenPattern,
  base32,
  cryptoRandom,
  findTokens,
  findTokensInUrl,
  generateToken,
  hashToken,
  type RandomSource,
  sessionTokenPattern,
  tokenHint,
  type TokenKind
} from "../../src/domain/Tokens.js"

const bytes = (text: string) => new TextEncoder().encode(text)

/** A source that hands out the given bytes and records every request, so the test sees it was used. */
const fixedSource = (fill: (index: number) => number) => {
  const requests: Array<number> = []
  const source: RandomSource = (size) => {
    requests.push(size)
    return Uint8Array.from({ length: size }, (_, i) => fill(i))
  }
  return { source, requests }
}

describe("token format", () => {
  const kinds: ReadonlyArray<TokenKind> = ["live", "test", "sess"]

  for (const kind of kinds) {
    it(`a ${kind} token is etd_${kind}_ plus 32 base32 characters, 41 in all`, () => {
      const token = generateToken(kind)
      expect(token).toMatch(new RegExp(`^etd_${kind}_[a-z2-7]{32}$`))
      expect(token).toHaveLength(41)
    })
  }

  it("API key tokens match the API key pattern and not the session pattern, and vice versa", () => {
    for (const kind of ["live", "test"] as const) {
      const token = generateToken(kind)
      expect(apiKeyTokenPattern.test(token)).toBe(true)
      expect(sessionTokenPattern.test(token)).toBe(false)
    }
    const session = generateToken("sess")
    expect(sessionTokenPattern.test(session)).toBe(true)
    expect(apiKeyTokenPattern.test(session)).toBe(false)
  })

  it("the patterns refuse near misses", () => {
    const body = "a".repeat(32)
    for (
      const bad of [
        `etd_live_${body}a`, // 33 characters
        `etd_live_${body.slice(1)}`, // 31 characters
        `etd_live_${body.slice(1)}1`, // 1 is not in the base32 alphabet
        `etd_live_${body.slice(1)}A`, // upper case
        `etd_prod_${body}`,
        `xtd_live_${body}`,
        ` etd_live_${body}`
      ]
    ) {
      expect(apiKeyTokenPattern.test(bad), bad).toBe(false)
    }
  })

  it("the hint is the environment prefix and the last four characters", () => {
    const token = `etd_live_${"a".repeat(28)}wxyz`
    expect(tokenHint(token)).toBe("etd_live_…wxyz")
    expect(tokenHint(`etd_test_${"b".repeat(28)}2345`)).toBe("etd_test_…2345")
  })
})

describe("entropy source", () => {
  it("generateToken draws exactly 20 bytes from the injected source and encodes them", () => {
    const zeros = fixedSource(() => 0)
    expect(generateToken("live", zeros.source)).toBe(`etd_live_${"a".repeat(32)}`)
    expect(zeros.requests).toEqual([20])

    const ones = fixedSource(() => 0xff)
    expect(generateToken("test", ones.source)).toBe(`etd_test_${"7".repeat(32)}`)

    // 0x00 0x44 0x32 0x14 0xc7 repeated: five bytes are eight base32 digits, "abcdefgh".
    const pattern = [0x00, 0x44, 0x32, 0x14, 0xc7]
    const counting = fixedSource((i) => pattern[i % 5]!)
    expect(generateToken("sess", counting.source)).toBe(`etd_sess_${"abcdefgh".repeat(4)}`)
  })

  it("the default source is node:crypto: 1000 tokens are distinct and use the whole alphabet", () => {
    const tokens = Array.from({ length: 1000 }, () => generateToken("live"))
    expect(new Set(tokens).size).toBe(1000)
    const seen = new Set(tokens.flatMap((token) => [...token.slice("etd_live_".length)]))
    expect([...seen].sort().join("")).toBe("234567abcdefghijklmnopqrstuvwxyz")
  })

  it("cryptoRandom returns fresh bytes of the requested size", () => {
    const a = cryptoRandom(20)
    const b = cryptoRandom(20)
    expect(a).toBeInstanceOf(Uint8Array)
    expect(a).toHaveLength(20)
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false)
  })
})

describe("finding tokens worth a lookup (exposure alerts, SPEC §4)", () => {
  const body = "a".repeat(32)

  it("finds each whole token once, in order, after any non-word character, JSON escape or percent-escape", () => {
    const [live, test, sess] = [generateToken("live"), generateToken("test"), generateToken("sess")]
    expect(findTokens(`${live} "${test}",${sess} ${live}`)).toEqual([live, test, sess])
    expect(findTokens(JSON.stringify({ message: `line\n${live}\t${test}\u0001${sess}` }))).toEqual([live, test, sess])
    expect(findTokens(`?key=${live}&auth=Bearer%20${test}`)).toEqual([live, test])
    expect(findTokens("no token here")).toEqual([])
  })

  it("takes nothing that is not exactly a token: wrong length, case, alphabet or prefix, or glued to a word", () => {
    const misses = [
      `etd_live_${body.slice(1)}`, // 31 characters
      `etd_live_${body}b`, // 33 characters
      `etd_live_${body}B`,
      `etd_live_${body}_x`,
      `etd_live_${body.toUpperCase()}`,
      `ETD_LIVE_${body}`,
      `etd_live_${body.slice(1)}1`, // 1 is not base32
      `etd_prod_${body}`,
      `xetd_live_${body}`,
      `9etd_live_${body}`,
      `my_etd_live_${body}`
    ]
    for (const miss of misses) expect(findTokens(miss), miss).toEqual([])
    expect(findTokens(misses.join(" "))).toEqual([])
  })

  it("in a URL, also the percent-encoded form, whatever escapes surround it", () => {
    const token = generateToken("test")
    const encoded = [...token].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("")
    expect(findTokensInUrl(`/v1/tenants/${encoded}?x=1`)).toEqual([token])
    expect(findTokensInUrl(`/v1/tenants?api_key=${token}&bad=%E0%A4%A`)).toEqual([token])
    expect(findTokensInUrl(`/v1/tenants?a=${token}&b=${encodeURIComponent(token)}`)).toEqual([token])
    expect(findTokensInUrl(`/v1/tenants?q=etd_test_${body}b&r=etd_prod_${body}`)).toEqual([])
    // A malformed escape, or bytes that are not UTF-8, would make the whole URL undecodable as text.
    expect(findTokensInUrl(`/v1/tenants?bad=%E0%A4%A&k=${encoded}`)).toEqual([token])
    expect(findTokensInUrl(`/v1/tenants?bad=%ff%&k=${token.replace(/_/g, "%5F")}`)).toEqual([token])
  })
})

describe("base32 (RFC 4648 §10 test vectors, lower case, no padding)", () => {
  const vectors: ReadonlyArray<readonly [string, string]> = [
    ["", ""],
    ["f", "my"],
    ["fo", "mzxq"],
    ["foo", "mzxw6"],
    ["foob", "mzxw6yq"],
    ["fooba", "mzxw6ytb"],
    ["foobar", "mzxw6ytboi"]
  ]
  for (const [input, output] of vectors) {
    it(`"${input}" -> "${output}"`, () => {
      expect(base32(bytes(input))).toBe(output)
    })
  }

  it("20 bytes always give 32 characters, for any content", () => {
    for (let i = 0; i < 50; i++) {
      const encoded = base32(cryptoRandom(20))
      expect(encoded).toMatch(/^[a-z2-7]{32}$/)
    }
  })

  it("long inputs keep every bit (no overflow of the accumulator)", () => {
    // 0xff… encodes to all '7'; a single flipped bit late in the input must change the output.
    const allOnes = new Uint8Array(40).fill(0xff)
    expect(base32(allOnes)).toBe("7".repeat(64))
    const flipped = Uint8Array.from(allOnes)
    flipped[39] = 0xfe
    expect(base32(flipped)).toBe(`${"7".repeat(63)}6`)
  })
})

describe("hashToken", () => {
  it("is the SHA-256 of the whole token, in lower-case hex", () => {
    for (const token of [generateToken("live"), generateToken("test"), generateToken("sess"), ""]) {
      expect(hashToken(token)).toBe(createHash("sha256").update(token, "utf8").digest("hex"))
    }
    expect(hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("gives the stored hashes: the same hex as the library SHA-256, for known tokens and non-ASCII text", () => {
    // Hashes already stored must still match: known vectors, then the JavaScript implementation.
    expect(hashToken("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(hashToken(`etd_live_${"a".repeat(32)}`)).toBe(
      "8fdae4d81ee6ccf6c06ce716f7ea522c8e123744c493bbb7ebba2c4d40080818"
    )
    for (const text of [generateToken("test"), "ação ✓ 🔑", `etd_sess_${"7".repeat(32)}`]) {
      expect(hashToken(text)).toBe(bytesToHex(sha256(new TextEncoder().encode(text))))
    }
  })

  it("differs for tokens that differ in one character", () => {
    const token = generateToken("live")
    const other = token.slice(0, -1) + (token.endsWith("a") ? "b" : "a")
    expect(hashToken(token)).not.toBe(hashToken(other))
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/)
  })
})
