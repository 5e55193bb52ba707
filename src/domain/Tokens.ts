/**
 * Bearer tokens (SPEC §3): `etd_<live|test|sess>_<32 base32 chars>`, 20 CSPRNG bytes in RFC 4648
 * base32, lower case. Only the SHA-256 of the whole token is stored; the token is shown once.
 */
import { createHash, randomBytes } from "node:crypto"

const RFC4648 = "abcdefghijklmnopqrstuvwxyz234567"

/** RFC 4648 base32 without padding, lower case. 20 bytes encode to exactly 32 characters. */
export const base32 = (bytes: Uint8Array): string => {
  let bits = 0
  let value = 0
  let out = ""
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff
    bits += 8
    while (bits >= 5) {
      out += RFC4648[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += RFC4648[(value << (5 - bits)) & 31]
  return out
}

export type Environment = "live" | "test"
export type TokenKind = Environment | "sess"

/** The random source, swappable only to prove in tests that tokens come from it. */
export type RandomSource = (size: number) => Uint8Array
export const cryptoRandom: RandomSource = (size) => new Uint8Array(randomBytes(size))

export const generateToken = (kind: TokenKind, random: RandomSource = cryptoRandom): string =>
  `etd_${kind}_${base32(random(20))}`

/**
 * One-time link tokens sent by mail (`etd_verify_…`, `etd_reset_…`, `etd_inv_…`): same shape and storage as the
 * others (only the SHA-256 is kept), but no bearer credential, so the exposure monitor ignores them;
 * the log guard still redacts them.
 */
export type LinkTokenKind = "verify" | "reset" | "inv"
export const generateLinkToken = (kind: LinkTokenKind): string => `etd_${kind}_${base32(cryptoRandom(20))}`
export const linkTokenPattern = /^etd_(?:verify|reset)_[a-z2-7]{32}$/
export const invitationTokenPattern = /^etd_inv_[a-z2-7]{32}$/

export const apiKeyTokenPattern = /^etd_(live|test)_[a-z2-7]{32}$/
export const sessionTokenPattern = /^etd_sess_[a-z2-7]{32}$/

/** Anything shaped like one of our secrets, anywhere in a string (used by the log guard and URL check). */
export const embeddedTokenPattern = /etd_(?:live|test|sess)_[a-z2-7]{32}/g
export const embeddedSecretPattern = /etd_(?:live|test|sess|verify|reset|inv)_[a-z2-7]{32}|whsec_[A-Za-z0-9+/=]{20,}/g

/**
 * A whole token standing on its own, worth a lookup: redaction takes anything token-like, but a
 * 33-character run or `xetd_…` is no token of ours. What may precede it: a non-word character, the
 * start, or an escape, since log lines are JSON (`\n`, `\u00a0`) and URLs percent-encoded (`%20`).
 */
const standaloneTokenPattern =
  /(?<=^|[^A-Za-z0-9_]|\\[bfnrt]|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2})etd_(?:live|test|sess)_[a-z2-7]{32}(?![A-Za-z0-9_])/g

/** The distinct well-formed tokens in a text, in order of first appearance. */
export const findTokens = (text: string): ReadonlyArray<string> =>
  text.includes("etd_") ? [...new Set(text.match(standaloneTokenPattern))] : []

/**
 * A URL with each `%XX` escape read as the byte it names (as a Latin-1 character). Tokens are ASCII,
 * so one encoded in a URL reads as itself here, whatever the escapes around it: a malformed escape
 * or bytes that are not UTF-8, which make `decodeURIComponent` give up on the whole URL, hide nothing.
 */
export const percentDecoded = (url: string): string =>
  url.includes("%")
    ? url.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : url

/** The well-formed tokens in a URL as sent and percent-decoded: an encoded token is a token all the same. */
export const findTokensInUrl = (url: string): ReadonlyArray<string> => {
  const decoded = percentDecoded(url)
  return findTokens(decoded === url ? url : `${url} ${decoded}`)
}

/**
 * The stored form of a token: SHA-256 of its UTF-8 bytes in lower-case hex. Node's native hash,
 * since every authenticated request hashes its token (a JavaScript SHA-256 costs several times more).
 */
export const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

/** What we may show after creation: the environment prefix and the last four characters. */
export const tokenHint = (token: string): string => `${token.slice(0, token.lastIndexOf("_") + 1)}…${token.slice(-4)}`
