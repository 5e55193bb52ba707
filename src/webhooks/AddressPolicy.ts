/**
 * Which addresses a webhook may be delivered to: public unicast only (plus loopback when allowed).
 *
 * The blocks are listed here rather than taken from ipaddr.js's `range()` names: those group blocks
 * differently from what a refusal must say (its "reserved" lumps documentation, benchmarking and
 * 240/4 together with the deprecated 6to4 relay, its "rfc6052" both NAT64 prefixes), and the list is
 * a security policy that should not move when the library adds a name.
 */
import ipaddr from "ipaddr.js"
import { parseAddress, stripBrackets } from "./AddressLiteral.js"

export interface AddressPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_TARGETS: permits loopback only, for local development and tests. */
  readonly allowLoopback: boolean
}

type Classification =
  | { readonly _tag: "public" }
  | { readonly _tag: "loopback"; readonly label: string }
  | { readonly _tag: "forbidden"; readonly label: string }

const PUBLIC: Classification = { _tag: "public" }
const loopback = (label: string): Classification => ({ _tag: "loopback", label })
const forbidden = (label: string): Classification => ({ _tag: "forbidden", label })

interface Block<A extends ipaddr.IPv4 | ipaddr.IPv6> {
  readonly range: [A, number]
  /** Part of the refusal message tenants read, e.g. "private network (10.0.0.0/8)". */
  readonly label: string
}

const v4 = (cidr: string, name: string): Block<ipaddr.IPv4> => ({
  range: ipaddr.IPv4.parseCIDR(cidr),
  label: `${name} (${cidr})`
})

const v6 = (cidr: string, name: string): Block<ipaddr.IPv6> => ({
  range: ipaddr.IPv6.parseCIDR(cidr),
  label: `${name} (${cidr})`
})

// ---------------------------------------------------------------------------------------------
// IPv4

const V4_LOOPBACK = v4("127.0.0.0/8", "loopback")

const V4_FORBIDDEN: ReadonlyArray<Block<ipaddr.IPv4>> = [
  v4("0.0.0.0/8", "\"this\" network"),
  v4("10.0.0.0/8", "private network"),
  v4("100.64.0.0/10", "carrier-grade NAT"),
  v4("169.254.0.0/16", "link-local"),
  v4("172.16.0.0/12", "private network"),
  v4("192.0.0.0/24", "IETF protocol assignments"),
  v4("192.0.2.0/24", "documentation"),
  v4("192.168.0.0/16", "private network"),
  v4("198.18.0.0/15", "benchmarking"),
  v4("198.51.100.0/24", "documentation"),
  v4("203.0.113.0/24", "documentation"),
  v4("224.0.0.0/4", "multicast"),
  // 240/4 contains 255.255.255.255 (limited broadcast).
  v4("240.0.0.0/4", "reserved")
]

const classifyIPv4 = (address: ipaddr.IPv4): Classification => {
  if (address.match(V4_LOOPBACK.range)) return loopback(V4_LOOPBACK.label)
  const block = V4_FORBIDDEN.find(({ range }) => address.match(range))
  return block === undefined ? PUBLIC : forbidden(block.label)
}

// ---------------------------------------------------------------------------------------------
// IPv6

const V6_UNSPECIFIED = ipaddr.IPv6.parse("::")
const V6_LOOPBACK = ipaddr.IPv6.parse("::1")

interface Carrier {
  readonly range: [ipaddr.IPv6, number]
  /** Prefixed to the embedded address's label: "NAT64 form of private network (10.0.0.0/8)". */
  readonly name: string
  /** Byte offset of the embedded IPv4 address. */
  readonly at: number
  /**
   * Only the IPv4-mapped form really reaches this host's loopback (dual-stack sockets); a 6to4 or
   * NAT64 address carrying 127.x goes to some relay, so it stays forbidden.
   */
  readonly keepsLoopback: boolean
}

/** Blocks that carry an IPv4 address: the verdict is the embedded address's. */
const V6_CARRIERS: ReadonlyArray<Carrier> = [
  { range: ipaddr.IPv6.parseCIDR("::ffff:0:0/96"), name: "IPv4-mapped", at: 12, keepsLoopback: true },
  { range: ipaddr.IPv6.parseCIDR("64:ff9b::/96"), name: "NAT64", at: 12, keepsLoopback: false },
  { range: ipaddr.IPv6.parseCIDR("2002::/16"), name: "6to4", at: 2, keepsLoopback: false }
]

// Deprecated by RFC 4291 and never a legitimate destination, whatever IPv4 address it carries.
const V6_COMPATIBLE = ipaddr.IPv6.parseCIDR("::/96")

const V6_FORBIDDEN: ReadonlyArray<Block<ipaddr.IPv6>> = [
  // SIIT "IPv4-translated" (::ffff:0:a.b.c.d) is never a legitimate destination.
  v6("::ffff:0:0:0/96", "IPv4-translated"),
  v6("64:ff9b:1::/48", "local-use NAT64"),
  v6("100::/64", "discard-only"),
  // Teredo embeds an obfuscated IPv4 peer we cannot check meaningfully.
  v6("2001::/32", "Teredo"),
  v6("2001:db8::/32", "documentation"),
  v6("fc00::/7", "unique local"),
  v6("fe80::/10", "link-local"),
  // Deprecated site-local, still routed internally by some networks.
  v6("fec0::/10", "site-local"),
  v6("ff00::/8", "multicast")
]

const embeddedIPv4 = (address: ipaddr.IPv6, at: number): ipaddr.IPv4 =>
  new ipaddr.IPv4(address.toByteArray().slice(at, at + 4))

const carried = (carrier: Carrier, address: ipaddr.IPv6): Classification => {
  const inner = classifyIPv4(embeddedIPv4(address, carrier.at))
  if (inner._tag === "public") return PUBLIC
  const label = `${carrier.name} form of ${inner.label}`
  return inner._tag === "loopback" && carrier.keepsLoopback ? loopback(label) : forbidden(label)
}

const classifyIPv6 = (address: ipaddr.IPv6): Classification => {
  if (address.match(V6_UNSPECIFIED, 128)) return forbidden("unspecified (::)")
  if (address.match(V6_LOOPBACK, 128)) return loopback("loopback (::1)")
  const carrier = V6_CARRIERS.find(({ range }) => address.match(range))
  if (carrier !== undefined) return carried(carrier, address)
  if (address.match(V6_COMPATIBLE)) {
    return forbidden(`IPv4-compatible (::/96, embeds ${embeddedIPv4(address, 12).toString()})`)
  }
  const block = V6_FORBIDDEN.find(({ range }) => address.match(range))
  return block === undefined ? PUBLIC : forbidden(block.label)
}

// ---------------------------------------------------------------------------------------------

const classify = (ip: string): Classification => {
  const address = parseAddress(stripBrackets(ip))
  // Fail closed: whatever this is, it is not an address we have checked.
  if (address === undefined) return forbidden("not an IP address")
  return address instanceof ipaddr.IPv4 ? classifyIPv4(address) : classifyIPv6(address)
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
