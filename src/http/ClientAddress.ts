/**
 * Who the client of a request is (SPEC §11). The socket's peer is the client unless it is one of
 * `TRUSTED_PROXIES`; only then are the proxies' headers believed: `Forwarded` (RFC 7239) when
 * present, otherwise `X-Forwarded-For`. Each proxy appends the address it received the request
 * from, so the list is walked from the right, past our own proxies, and the first hop that is not
 * one of them is the client; whatever lies to its left was written by that client and proves
 * nothing. A hop that cannot be read (garbage, `unknown`, an obfuscated identifier) ends the walk
 * at the last address a trusted proxy vouched for, so a bad header can neither crash a request nor
 * move it to an address of the sender's choosing.
 *
 * Addresses are compared and reported as IPv4 when they are IPv4-mapped IPv6 (`::ffff:1.2.3.4`,
 * how a dual-stack socket reports an IPv4 peer). Rate limits group IPv6 clients per /64, the block
 * one subscriber usually holds whole (`limitKeyOf`).
 */
import { Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import ipaddr from "ipaddr.js"
import { isIP } from "node:net"

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6

/** A network of proxies we operate; a single address is a network with its full prefix. */
export interface TrustedNetwork {
  readonly address: IpAddress
  readonly prefix: number
}

export type TrustedProxies = ReadonlyArray<TrustedNetwork>

const unmapped = (address: IpAddress): IpAddress =>
  address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address

/**
 * An IPv4 or IPv6 literal as Node writes and reads it (`net.isIP`: strict dotted decimal, no host
 * names), IPv4-mapped ones as IPv4, or `undefined`. The zone id of a scoped IPv6 address names an
 * interface, not an address, and is dropped. An IPv6 literal with a dotted tail other than the
 * mapped `::ffff:a.b.c.d` is refused: ipaddr.js would read it as mapped, Node as another address.
 */
export const parseIp = (text: string): IpAddress | undefined => {
  const kind = isIP(text)
  if (kind === 0) return undefined
  const zone = text.indexOf("%")
  const literal = zone >= 0 ? text.slice(0, zone) : text
  if (kind === 6 && literal.includes(".") && !/^::ffff:[\d.]+$/i.test(literal)) return undefined
  try {
    return unmapped(ipaddr.parse(literal))
  } catch {
    return undefined
  }
}

const parseNetwork = (entry: string): TrustedNetwork | undefined => {
  const slash = entry.indexOf("/")
  if (slash < 0) {
    const address = parseIp(entry)
    return address === undefined ? undefined : { address, prefix: address.kind() === "ipv4" ? 32 : 128 }
  }
  const raw = parseIp(entry.slice(0, slash))
  const bits = entry.slice(slash + 1)
  if (raw === undefined || !/^\d{1,3}$/.test(bits)) return undefined
  const prefix = Number(bits)
  // A mapped base came back as IPv4: its prefix counted the 96 bits of the mapping.
  const mapped = raw.kind() === "ipv4" && entry.includes(":")
  const effective = mapped ? prefix - 96 : prefix
  const max = raw.kind() === "ipv4" ? 32 : 128
  return effective >= 0 && effective <= max ? { address: raw, prefix: effective } : undefined
}

/**
 * `TRUSTED_PROXIES`: addresses and CIDR networks, IPv4 or IPv6, separated by commas. The networks
 * read, and a message naming every entry that is neither (`undefined` when there is none).
 */
export const parseTrustedProxies = (
  text: string
): { readonly networks: TrustedProxies; readonly problem: string | undefined } => {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
  const networks: Array<TrustedNetwork> = []
  const invalid: Array<string> = []
  for (const entry of entries) {
    const network = parseNetwork(entry)
    if (network === undefined) invalid.push(JSON.stringify(entry))
    else networks.push(network)
  }
  const problem = invalid.length === 0 ? undefined : `TRUSTED_PROXIES: ${invalid.join(", ")} ` +
    `${invalid.length === 1 ? "is" : "are"} not an IPv4 or IPv6 address or CIDR network ` +
    "(expected e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8)"
  return { networks, problem }
}

const isTrusted = (trusted: TrustedProxies, address: IpAddress) =>
  trusted.some((network) => network.address.kind() === address.kind() && address.match(network.address, network.prefix))

const PORT = /^(\d{1,5}|_[A-Za-z0-9._-]+)$/

/**
 * A hop as proxies write it: an address, an IPv4 address with a port, a bracketed IPv6 address
 * with or without a port (RFC 7239 node syntax, which some proxies use in `X-Forwarded-For` too).
 * `unknown`, an obfuscated identifier (`_hidden`) or anything else is no address.
 */
export const parseHop = (text: string): IpAddress | undefined => {
  const hop = text.trim()
  if (hop.startsWith("[")) {
    const close = hop.indexOf("]")
    if (close < 0) return undefined
    const rest = hop.slice(close + 1)
    if (rest !== "" && !(rest.startsWith(":") && PORT.test(rest.slice(1)))) return undefined
    const address = parseIp(hop.slice(1, close))
    // Brackets hold IPv6 only, a mapped one included.
    return address !== undefined && hop.slice(1, close).includes(":") ? address : undefined
  }
  const direct = parseIp(hop)
  if (direct !== undefined) return direct
  const colon = hop.lastIndexOf(":")
  if (colon < 0 || !PORT.test(hop.slice(colon + 1))) return undefined
  const host = hop.slice(0, colon)
  return isIP(host) === 4 ? parseIp(host) : undefined
}

/**
 * The `for=` value of each element of a `Forwarded` header, left to right; `undefined` for an
 * element without one (a hop that did not say whom it served). `undefined` as a whole when the
 * header is not well-formed (an unterminated quoted string).
 */
export const forwardedFor = (header: string): Array<string | undefined> | undefined => {
  const elements: Array<string | undefined> = []
  let current: string | undefined
  let name = ""
  let value = ""
  let inValue = false
  let quoted = false
  const endPair = () => {
    if (inValue && name.trim().toLowerCase() === "for" && current === undefined) current = value.trim()
    name = ""
    value = ""
    inValue = false
  }
  for (let i = 0; i < header.length; i++) {
    const char = header[i]!
    if (quoted) {
      if (char === "\\") value += header[++i] ?? ""
      else if (char === "\"") quoted = false
      else value += char
    } else if (char === "\"" && inValue) {
      quoted = true
    } else if (char === ";") {
      endPair()
    } else if (char === ",") {
      endPair()
      elements.push(current)
      current = undefined
    } else if (char === "=" && !inValue) {
      inValue = true
    } else if (inValue) {
      value += char
    } else {
      name += char
    }
  }
  if (quoted) return undefined
  endPair()
  elements.push(current)
  return elements
}

const headerOf = (headers: Readonly<Record<string, string | undefined>>, name: string) => {
  const value = headers[name]
  return value !== undefined && value.trim() !== "" ? value : undefined
}

/** The hops the proxies reported, left to right, or `undefined` when their header cannot be read. */
const reportedHops = (
  headers: Readonly<Record<string, string | undefined>>
): ReadonlyArray<string | undefined> | undefined => {
  const forwarded = headerOf(headers, "forwarded")
  if (forwarded !== undefined) return forwardedFor(forwarded)
  const forwardedForList = headerOf(headers, "x-forwarded-for")
  return forwardedForList === undefined ? [] : forwardedForList.split(",")
}

/**
 * The client's address for a request from `peer` (the socket's) with `headers`, as text (IPv4
 * dotted, IPv6 in its canonical short form). A peer that is no IP address (a Unix socket) is
 * returned as it is.
 */
export const resolveClientAddress = (
  trusted: TrustedProxies,
  peer: string,
  headers: Readonly<Record<string, string | undefined>>
): string => {
  const peerAddress = parseIp(peer)
  if (peerAddress === undefined) return peer
  if (!isTrusted(trusted, peerAddress)) return peerAddress.toString()
  const hops = reportedHops(headers)
  let vouched = peerAddress
  if (hops === undefined) return vouched.toString()
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] === undefined ? undefined : parseHop(hops[i]!)
    if (hop === undefined) return vouched.toString()
    if (!isTrusted(trusted, hop)) return hop.toString()
    vouched = hop
  }
  // Every hop is a proxy of ours: the request started at the leftmost.
  return vouched.toString()
}

/**
 * The request as the application sees it: `remoteAddress` is the client (`resolveClientAddress`)
 * and `peerAddress` keeps the socket's peer, as Effect's own proxy middleware leaves them.
 */
export const withClientAddress = (
  trusted: TrustedProxies,
  request: HttpServerRequest.HttpServerRequest
): HttpServerRequest.HttpServerRequest => {
  // Without proxies to believe, the peer is the client: the request is kept as it is (no copy per
  // request); the limits read its address through `limitKeyOf`, which unmaps it.
  if (trusted.length === 0) return request
  const peer = request.peerAddress
  if (Option.isNone(peer)) return request
  return request.modify({
    remoteAddress: Option.some(resolveClientAddress(trusted, peer.value, request.headers)),
    peerAddress: peer
  })
}

const MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i

/**
 * An address as logs and limits show it: an IPv4-mapped IPv6 address (how a dual-stack socket
 * reports an IPv4 peer) as its IPv4 address. A string test, cheap enough for every request.
 */
export const shownAddress = (address: string): string =>
  address.charCodeAt(0) === 58 /* ":" */ ? MAPPED.exec(address)?.[1] ?? address : address

/** The client address of a request after `withClientAddress`, `unknown` when there is none. */
export const clientAddressOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.match(request.remoteAddress, { onNone: () => "unknown", onSome: shownAddress })

/**
 * What rate limits count a client by: an IPv4 address itself; for IPv6 its /64 (`2001:db8:1:2::/64`),
 * as one subscriber is handed a whole /64 and can pick any address in it.
 */
export const limitKeyOf = (client: string): string => {
  const address = parseIp(client)
  if (address === undefined) return client
  if (address.kind() === "ipv4") return address.toString()
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4)
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`
}
