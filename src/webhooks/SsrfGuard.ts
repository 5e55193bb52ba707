/**
 * SSRF protection for outgoing webhook deliveries.
 *
 * Two layers: `checkUrl` is a syntactic check when an endpoint is created or changed (and before each
 * delivery, because Node never calls `lookup` for IP-literal hosts), and `guardedLookup` is plugged
 * into `http(s).request` so the addresses are checked at connect time and the socket connects to
 * exactly the address that was checked (no DNS-rebinding window between check and connect).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as dns from "node:dns"
import type { LookupFunction } from "node:net"
import { isIP } from "node:net"

export interface AddressPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: permits loopback only, for local development and tests. */
  readonly allowLoopback: boolean
}

type Classification =
  | { readonly _tag: "public" }
  | { readonly _tag: "loopback"; readonly label: string }
  | { readonly _tag: "forbidden"; readonly label: string }

const PUBLIC: Classification = { _tag: "public" }
const forbidden = (label: string): Classification => ({ _tag: "forbidden", label })

// ---------------------------------------------------------------------------------------------
// IPv4

/** Strict dotted quad (no octal, hex or shortened forms) to an unsigned 32-bit integer. */
const parseIPv4 = (text: string): number | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined
    const octet = Number(part)
    if (octet > 255) return undefined
    value = value * 256 + octet
  }
  return value
}

const v4 = (cidr: string): { readonly base: number; readonly bits: number } => {
  const [address, bits] = cidr.split("/")
  const base = parseIPv4(address ?? "")
  if (base === undefined || bits === undefined) throw new Error(`bad CIDR ${cidr}`)
  return { base, bits: Number(bits) }
}

const inV4 = (address: number, range: { readonly base: number; readonly bits: number }): boolean => {
  if (range.bits === 0) return true
  const shift = 32 - range.bits
  // Division instead of >>> keeps the arithmetic unsigned and correct for /32.
  return Math.floor(address / 2 ** shift) === Math.floor(range.base / 2 ** shift)
}

const V4_LOOPBACK = v4("127.0.0.0/8")

const V4_FORBIDDEN: ReadonlyArray<readonly [ReturnType<typeof v4>, string]> = [
  [v4("0.0.0.0/8"), "\"this\" network (0.0.0.0/8)"],
  [v4("10.0.0.0/8"), "private network (10.0.0.0/8)"],
  [v4("100.64.0.0/10"), "carrier-grade NAT (100.64.0.0/10)"],
  [v4("169.254.0.0/16"), "link-local (169.254.0.0/16)"],
  [v4("172.16.0.0/12"), "private network (172.16.0.0/12)"],
  [v4("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"],
  [v4("192.0.2.0/24"), "documentation (192.0.2.0/24)"],
  [v4("192.168.0.0/16"), "private network (192.168.0.0/16)"],
  [v4("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"],
  [v4("198.51.100.0/24"), "documentation (198.51.100.0/24)"],
  [v4("203.0.113.0/24"), "documentation (203.0.113.0/24)"],
  [v4("224.0.0.0/4"), "multicast (224.0.0.0/4)"],
  // 240/4 contains 255.255.255.255 (limited broadcast).
  [v4("240.0.0.0/4"), "reserved (240.0.0.0/4)"]
]

const classifyIPv4 = (address: number): Classification => {
  if (inV4(address, V4_LOOPBACK)) return { _tag: "loopback", label: "loopback (127.0.0.0/8)" }
  for (const [range, label] of V4_FORBIDDEN) if (inV4(address, range)) return forbidden(label)
  return PUBLIC
}

// ---------------------------------------------------------------------------------------------
// IPv6

/**
 * RFC 4291 text form to a 128-bit integer: hex groups, at most one `::`, optional trailing
 * dotted quad. Zone ids (`%eth0`) must be stripped by the caller.
 */
export const parseIPv6 = (text: string): bigint | undefined => {
  let groups = text
  let tail: Array<number> = []
  const lastColon = text.lastIndexOf(":")
  if (lastColon >= 0 && text.includes(".", lastColon)) {
    const embedded = parseIPv4(text.slice(lastColon + 1))
    if (embedded === undefined) return undefined
    tail = [Math.floor(embedded / 0x10000), embedded % 0x10000]
    // Keep the colon so "::1.2.3.4" leaves "::" and "64:ff9b::1.2.3.4" leaves "64:ff9b::".
    groups = text.slice(0, lastColon + 1)
    if (groups.endsWith(":") && !groups.endsWith("::")) groups = groups.slice(0, -1)
  }

  const halves = groups.split("::")
  if (halves.length > 2) return undefined
  const parseGroups = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const out: Array<number> = []
    for (const group of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined
      out.push(parseInt(group, 16))
    }
    return out
  }
  const head = parseGroups(halves[0] ?? "")
  const rest = halves.length === 2 ? parseGroups(halves[1] ?? "") : []
  if (head === undefined || rest === undefined) return undefined

  const explicit = head.length + rest.length + tail.length
  let all: Array<number>
  if (halves.length === 2) {
    if (explicit > 7) return undefined
    all = [...head, ...Array<number>(8 - explicit).fill(0), ...rest, ...tail]
  } else {
    if (explicit !== 8) return undefined
    all = [...head, ...tail]
  }
  return all.reduce((acc, group) => (acc << 16n) | BigInt(group), 0n)
}

const v6 = (cidr: string): { readonly base: bigint; readonly bits: number } => {
  const [address, bits] = cidr.split("/")
  const base = parseIPv6(address ?? "")
  if (base === undefined || bits === undefined) throw new Error(`bad CIDR ${cidr}`)
  return { base, bits: Number(bits) }
}

const inV6 = (address: bigint, range: { readonly base: bigint; readonly bits: number }): boolean => {
  const shift = BigInt(128 - range.bits)
  return address >> shift === range.base >> shift
}

const formatIPv4 = (address: number): string =>
  [24, 16, 8, 0].map((shift) => Math.floor(address / 2 ** shift) % 256).join(".")

const low32 = (address: bigint): number => Number(address & 0xffffffffn)

const V6_MAPPED = v6("::ffff:0:0/96")
const V6_COMPAT = v6("::/96")
const V6_NAT64 = v6("64:ff9b::/96")
const V6_6TO4 = v6("2002::/16")

const V6_FORBIDDEN: ReadonlyArray<readonly [ReturnType<typeof v6>, string]> = [
  // SIIT "IPv4-translated" (::ffff:0:a.b.c.d) is never a legitimate destination.
  [v6("::ffff:0:0:0/96"), "IPv4-translated (::ffff:0:0:0/96)"],
  [v6("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"],
  [v6("100::/64"), "discard-only (100::/64)"],
  // Teredo embeds an obfuscated IPv4 peer we cannot check meaningfully.
  [v6("2001::/32"), "Teredo (2001::/32)"],
  [v6("2001:db8::/32"), "documentation (2001:db8::/32)"],
  [v6("fc00::/7"), "unique local (fc00::/7)"],
  [v6("fe80::/10"), "link-local (fe80::/10)"],
  // Deprecated site-local, still routed internally by some networks.
  [v6("fec0::/10"), "site-local (fec0::/10)"],
  [v6("ff00::/8"), "multicast (ff00::/8)"]
]

const embedded = (label: string, v4Class: Classification, keepLoopback: boolean): Classification => {
  if (v4Class._tag === "public") return PUBLIC
  // Only the IPv4-mapped form really reaches this host's loopback (dual-stack sockets); a 6to4 or
  // NAT64 address carrying 127.x goes to some relay, so it stays forbidden.
  if (v4Class._tag === "loopback" && keepLoopback) return { _tag: "loopback", label: `${label} form of ${v4Class.label}` }
  return forbidden(`${label} form of ${v4Class.label}`)
}

const classifyIPv6 = (address: bigint): Classification => {
  if (address === 0n) return forbidden("unspecified (::)")
  if (address === 1n) return { _tag: "loopback", label: "loopback (::1)" }
  if (inV6(address, V6_MAPPED)) return embedded("IPv4-mapped", classifyIPv4(low32(address)), true)
  // Deprecated by RFC 4291 and never a legitimate destination, whatever IPv4 address it carries.
  if (inV6(address, V6_COMPAT)) return forbidden(`IPv4-compatible (::/96, embeds ${formatIPv4(low32(address))})`)
  if (inV6(address, V6_NAT64)) return embedded("NAT64", classifyIPv4(low32(address)), false)
  if (inV6(address, V6_6TO4)) {
    return embedded("6to4", classifyIPv4(Number((address >> 80n) & 0xffffffffn)), false)
  }
  for (const [range, label] of V6_FORBIDDEN) if (inV6(address, range)) return forbidden(label)
  return PUBLIC
}

// ---------------------------------------------------------------------------------------------

const stripBrackets = (ip: string): string => (ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip)

const classify = (ip: string): Classification => {
  const text = stripBrackets(ip)
  const family = isIP(text)
  if (family === 4) {
    const address = parseIPv4(text)
    return address === undefined ? forbidden("unparseable IPv4 address") : classifyIPv4(address)
  }
  if (family === 6) {
    const zone = text.indexOf("%")
    const address = parseIPv6(zone >= 0 ? text.slice(0, zone) : text)
    return address === undefined ? forbidden("unparseable IPv6 address") : classifyIPv6(address)
  }
  // Fail closed: whatever this is, it is not an address we have checked.
  return forbidden("not an IP address")
}

/**
 * Why `ip` may not be a webhook target, or `undefined` when it may. Anything that is not a valid
 * IPv4/IPv6 literal is refused.
 */
export const forbiddenReason = (ip: string, policy: AddressPolicy = { allowLoopback: false }): string | undefined => {
  const result = classify(ip)
  switch (result._tag) {
    case "public":
      return undefined
    case "loopback":
      return policy.allowLoopback ? undefined : result.label
    case "forbidden":
      return result.label
  }
}

export const isForbiddenAddress = (ip: string, policy: AddressPolicy = { allowLoopback: false }): boolean =>
  forbiddenReason(ip, policy) !== undefined

// ---------------------------------------------------------------------------------------------
// URL check

export const UnsafeUrlReason = Schema.Literals([
  "invalid_url",
  "scheme_not_allowed",
  "userinfo_not_allowed",
  "missing_host",
  "forbidden_address",
  "forbidden_hostname"
])
export type UnsafeUrlReason = typeof UnsafeUrlReason.Type

export class UnsafeWebhookUrl extends Schema.TaggedError<UnsafeWebhookUrl>()("UnsafeWebhookUrl", {
  reason: UnsafeUrlReason,
  message: Schema.String
}) {}

export interface UrlPolicy extends AddressPolicy {
  readonly requireHttps: boolean
}

// Names that resolve to this host or to the internal network by convention (RFC 6761, RFC 6762,
// RFC 8375, cloud metadata such as metadata.google.internal).
const INTERNAL_SUFFIXES = [".localhost", ".local", ".internal", ".localdomain", ".home.arpa"]

const hostnameProblem = (hostname: string, policy: UrlPolicy): string | undefined => {
  if (hostname === "localhost") {
    return policy.allowLoopback ? undefined : "localhost is not an allowed webhook target"
  }
  const suffix = INTERNAL_SUFFIXES.find((s) => hostname.endsWith(s) || hostname === s.slice(1))
  if (suffix !== undefined) return `${hostname} is an internal host name (*${suffix})`
  // Single-label names are completed by resolver search domains into internal hosts.
  if (!hostname.includes(".")) return `${hostname} is not a fully qualified domain name`
  return undefined
}

/**
 * Syntactic check of a webhook target. Returns the parsed URL, or `UnsafeWebhookUrl`
 * (`Effect.fromResult` lifts it into an Effect).
 */
export const checkUrl = (url: string, policy: UrlPolicy): Result.Result<URL, UnsafeWebhookUrl> => {
  const refuse = (reason: UnsafeUrlReason, message: string) => Result.fail(new UnsafeWebhookUrl({ reason, message }))

  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return refuse("invalid_url", "The webhook URL is not a valid absolute URL")
  }
  const allowed = policy.requireHttps ? ["https:"] : ["https:", "http:"]
  if (!allowed.includes(parsed.protocol)) {
    return refuse(
      "scheme_not_allowed",
      policy.requireHttps
        ? "The webhook URL must use https"
        : "The webhook URL must use http or https"
    )
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return refuse("userinfo_not_allowed", "The webhook URL must not contain credentials (user:password@)")
  }
  // WHATWG parsing already lowercased the host and turned 0x7f.1 / 2130706433 style hosts into
  // dotted quads, so the IP check below sees the address the client would actually use.
  const host = parsed.hostname.endsWith(".") ? parsed.hostname.slice(0, -1) : parsed.hostname
  if (host === "") return refuse("missing_host", "The webhook URL has no host")

  const literal = stripBrackets(host)
  if (isIP(literal) !== 0) {
    const reason = forbiddenReason(literal, policy)
    return reason === undefined
      ? Result.succeed(parsed)
      : refuse("forbidden_address", `The webhook URL points to a non-public address: ${reason}`)
  }
  const problem = hostnameProblem(host, policy)
  return problem === undefined ? Result.succeed(parsed) : refuse("forbidden_hostname", problem)
}

// ---------------------------------------------------------------------------------------------
// Connect-time lookup

export const SSRF_ERROR_CODE = "ERR_SSRF_FORBIDDEN_ADDRESS"

/** Raised through the `lookup` callback, so `http.request` emits it as its `error` event. */
export class SsrfForbiddenAddressError extends Error {
  readonly code = SSRF_ERROR_CODE
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly reason: string
  ) {
    super(`Refusing to connect to ${hostname}: it resolves to ${address}, ${reason}`)
    this.name = "SsrfForbiddenAddressError"
  }
}

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

export type Resolver = (
  hostname: string,
  options: { readonly family: 0 | 4 | 6; readonly hints: number | undefined }
) => Promise<ReadonlyArray<ResolvedAddress>>

const systemResolver: Resolver = (hostname, options) =>
  dns.promises.lookup(hostname, {
    all: true,
    family: options.family,
    ...(options.hints === undefined ? {} : { hints: options.hints })
  })

export interface GuardedLookupOptions extends AddressPolicy {
  /** Defaults to `dns.lookup(host, { all: true })`; injectable so tests can simulate hostile DNS. */
  readonly resolve?: Resolver
}

const requestedFamily = (family: dns.LookupOptions["family"]): 0 | 4 | 6 =>
  family === 4 || family === "IPv4" ? 4 : family === 6 || family === "IPv6" ? 6 : 0

/**
 * A `dns.lookup`-compatible function for the `lookup` option of `http.request`, `https.request` and
 * `net.connect`. Every resolved address is checked, and a single forbidden one refuses the whole
 * host (a mixed answer is how rebinding attacks hide). Node 20 calls it with `{ all: true }` when
 * `autoSelectFamily` is on (the default) and without otherwise; both shapes are served.
 */
export const guardedLookup = (options: GuardedLookupOptions): LookupFunction => {
  const resolve = options.resolve ?? systemResolver
  return (hostname, lookupOptions, callback) => {
    const family = requestedFamily(lookupOptions.family)
    const literal = stripBrackets(hostname)
    const resolved: Promise<ReadonlyArray<ResolvedAddress>> =
      isIP(literal) !== 0
        ? Promise.resolve([{ address: literal, family: isIP(literal) }])
        : resolve(hostname, { family, hints: lookupOptions.hints })

    const checked = resolved.then((addresses): Array<dns.LookupAddress> => {
      const out: Array<dns.LookupAddress> = []
      for (const { address } of addresses) {
        const reason = forbiddenReason(address, options)
        if (reason !== undefined) throw new SsrfForbiddenAddressError(hostname, address, reason)
        // The family is recomputed from the text we checked, not taken from the resolver.
        const actual = isIP(address)
        if (family === 0 || actual === family) out.push({ address, family: actual })
      }
      if (out.length === 0) {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: "ENOTFOUND",
          hostname
        })
      }
      return out
    })

    // The callback runs outside the promise chain so an exception thrown by the caller's code is not
    // mistaken for a lookup failure (and the callback is never invoked twice).
    checked.then(
      (addresses) =>
        process.nextTick(() => {
          const [first] = addresses
          if (lookupOptions.all === true || first === undefined) callback(null, addresses)
          else callback(null, first.address, first.family)
        }),
      (error: unknown) =>
        process.nextTick(() =>
          callback(error instanceof Error ? error : new Error(String(error)), "", 0)
        )
    )
  }
}
