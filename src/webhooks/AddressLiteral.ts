/**
 * IP address text read the way Node's sockets read it. Node decides what is an IP literal
 * (`net.isIP`; anything else goes through `lookup` to DNS), so only that text is parsed; ipaddr.js
 * turns it into an address. Where the two read the same text differently, Node's reading wins,
 * because the socket connects to what Node understood.
 */
import ipaddr from "ipaddr.js"
import { isIP } from "node:net"

export type Address = ipaddr.IPv4 | ipaddr.IPv6

/** `[::1]` as it appears in a URL host to `::1`. */
export const stripBrackets = (host: string): string =>
  host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host

// ipaddr.js reads "::a.b.c.d" as "::ffff:a.b.c.d" (whitequark/ipaddr.js#142), a different address
// from the IPv4-compatible one Node connects to; spelt as two hex groups, the tail is unambiguous.
const embeddedIPv4AsHex = (text: string): string => {
  const lastColon = text.lastIndexOf(":")
  const tail = text.slice(lastColon + 1)
  if (!tail.includes(".")) return text
  const [a, b, c, d] = ipaddr.IPv4.parse(tail).toByteArray()
  return `${text.slice(0, lastColon + 1)}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`
}

const parseOrUndefined = <A>(parse: () => A): A | undefined => {
  try {
    return parse()
  } catch {
    return undefined
  }
}

/**
 * The address an IPv4 or IPv6 literal (without brackets) denotes, or `undefined` for anything Node
 * would not connect to directly: shortened, octal or hex IPv4 forms, host names, garbage.
 */
export const parseAddress = (text: string): Address | undefined => {
  switch (isIP(text)) {
    case 4:
      // Node accepts strict dotted decimal only, which both read alike.
      return parseOrUndefined(() => ipaddr.IPv4.parse(text))
    case 6: {
      // The zone id says which interface a scoped address leaves by, not which address it is; Node
      // allows characters in it that ipaddr.js does not.
      const zone = text.indexOf("%")
      const address = zone >= 0 ? text.slice(0, zone) : text
      return parseOrUndefined(() => ipaddr.IPv6.parse(embeddedIPv4AsHex(address)))
    }
    default:
      return undefined
  }
}

/** The 128-bit value of an IPv6 literal without zone id, or `undefined`. */
export const parseIPv6 = (text: string): bigint | undefined => {
  const address = text.includes("%") ? undefined : parseAddress(text)
  return address instanceof ipaddr.IPv6
    ? address.parts.reduce((value, group) => (value << 16n) | BigInt(group), 0n)
    : undefined
}
