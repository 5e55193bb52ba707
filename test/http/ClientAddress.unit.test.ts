/**
 * Who the client is behind proxies (SPEC §11, `src/http/ClientAddress.ts`): `TRUSTED_PROXIES`
 * entries, `Forwarded` and `X-Forwarded-For` walked from the right past trusted hops, spoofed and
 * unreadable entries, and the /64 an IPv6 client is counted by.
 */
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit } from "effect"
import { appConfig } from "../../src/Config.js"
import {
  forwardedFor,
  limitKeyOf,
  parseHop,
  parseTrustedProxies,
  resolveClientAddress
} from "../../src/http/ClientAddress.js"

const trusted = (text: string) => {
  const parsed = parseTrustedProxies(text)
  expect(parsed.problem).toBeUndefined()
  return parsed.networks
}

const proxies = trusted("10.0.0.0/8, 127.0.0.1, fd00::/8")
const resolve = (peer: string, headers: Record<string, string> = {}) => resolveClientAddress(proxies, peer, headers)

describe("TRUSTED_PROXIES", () => {
  it("reads addresses and CIDR networks, IPv4 and IPv6, with spaces and empty entries around", () => {
    const networks = trusted(" 10.0.0.0/8 , 127.0.0.1,fd00::/8,, ::ffff:192.168.0.0/112, 2001:db8::1 ")
    expect(networks.map((n) => `${n.address.toString()}/${n.prefix}`)).toEqual([
      "10.0.0.0/8",
      "127.0.0.1/32",
      "fd00::/8",
      // A mapped network is the IPv4 one it maps.
      "192.168.0.0/16",
      "2001:db8::1/128"
    ])
    expect(trusted("")).toEqual([])
  })

  it("refuses host names, bad prefixes and loose IPv4 forms, naming each", () => {
    const { problem } = parseTrustedProxies("10.0.0.0/8, proxy.internal, 10.0.0.0/33, fd00::/129, 127.1, 10.0.0.0/")
    expect(problem).toBe(
      "TRUSTED_PROXIES: \"proxy.internal\", \"10.0.0.0/33\", \"fd00::/129\", \"127.1\", \"10.0.0.0/\" are not an " +
        "IPv4 or IPv6 address or CIDR network (expected e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8)"
    )
  })

  it("an invalid entry stops the start with that message; unset, no proxy is trusted", () => {
    const parse = (env: Record<string, string>) => Effect.runSyncExit(appConfig.parse(ConfigProvider.fromEnv({ env })))
    const refused = parse({ TRUSTED_PROXIES: "10.0.0.0/8, lb.example" })
    expect(Exit.isFailure(refused)).toBe(true)
    expect(String(refused)).toContain("TRUSTED_PROXIES: \"lb.example\" is not an IPv4 or IPv6 address")
    const defaults = Effect.runSync(appConfig.parse(ConfigProvider.fromEnv({ env: {} })))
    expect(defaults.trustedProxies).toEqual([])
    expect(defaults.loginRateLimit.attemptsPerHour).toBeUndefined()
    const set = Effect.runSync(
      appConfig.parse(ConfigProvider.fromEnv({ env: { RATE_LIMIT_LOGIN_ATTEMPTS_PER_HOUR: "12" } }))
    )
    expect(set.loginRateLimit.attemptsPerHour).toBe(12)
    expect(Exit.isFailure(parse({ RATE_LIMIT_LOGIN_ATTEMPTS_PER_HOUR: "0" }))).toBe(true)
  })
})

describe("Forwarded (RFC 7239)", () => {
  it("gives each element's for= value, quoted ones unquoted, in order", () => {
    expect(
      forwardedFor(
        "for=192.0.2.43, for=\"[2001:db8:cafe::17]:4711\";proto=https, proto=http;by=10.0.0.1, For=\"_hidden\", for=unknown"
      )
    ).toEqual(["192.0.2.43", "[2001:db8:cafe::17]:4711", undefined, "_hidden", "unknown"])
    // Separators inside a quoted string are its content; an escaped quote too.
    expect(forwardedFor("for=\"a,b;c\\\"d\";by=x")).toEqual(["a,b;c\"d"])
    // An unterminated quoted string is not a header we can read.
    expect(forwardedFor("for=\"[2001:db8::1]")).toBeUndefined()
  })

  it("reads a hop: an address, with a port, bracketed IPv6; never unknown, obfuscated or junk", () => {
    expect(parseHop("192.0.2.43")?.toString()).toBe("192.0.2.43")
    expect(parseHop(" 192.0.2.43:8080 ")?.toString()).toBe("192.0.2.43")
    expect(parseHop("192.0.2.43:_port")?.toString()).toBe("192.0.2.43")
    expect(parseHop("[2001:db8:cafe::17]:4711")?.toString()).toBe("2001:db8:cafe::17")
    expect(parseHop("[2001:db8:cafe::17]")?.toString()).toBe("2001:db8:cafe::17")
    expect(parseHop("2001:db8:cafe::17")?.toString()).toBe("2001:db8:cafe::17")
    expect(parseHop("::ffff:198.51.100.7")?.toString()).toBe("198.51.100.7")
    for (
      const junk of ["unknown", "_hidden", "[192.0.2.43]", "[2001:db8::1", "example.com", "1.2.3", "1.2.3.4:x", ""]
    ) {
      expect(parseHop(junk), junk).toBeUndefined()
    }
  })
})

describe("the client of a request", () => {
  it("an untrusted peer is the client: its headers are ignored, spoofed or not", () => {
    const spoofed = { "x-forwarded-for": "203.0.113.9", forwarded: "for=203.0.113.10" }
    expect(resolve("198.51.100.7", spoofed)).toBe("198.51.100.7")
    expect(resolve("::ffff:198.51.100.7", spoofed)).toBe("198.51.100.7")
    expect(resolve("2001:db8::7", spoofed)).toBe("2001:db8::7")
  })

  it("behind trusted proxies, X-Forwarded-For's rightmost untrusted hop; what the client wrote left of it is ignored", () => {
    expect(resolve("10.1.2.3", { "x-forwarded-for": "198.51.100.7" })).toBe("198.51.100.7")
    // The client claimed 1.1.1.1 itself; the proxies appended what they saw.
    expect(resolve("10.1.2.3", { "x-forwarded-for": "1.1.1.1, 198.51.100.7, 10.9.9.9" })).toBe("198.51.100.7")
    expect(resolve("::ffff:127.0.0.1", { "x-forwarded-for": "1.1.1.1,198.51.100.7" })).toBe("198.51.100.7")
    expect(resolve("fd00::1", { "x-forwarded-for": "2001:db8::1, fd12::9" })).toBe("2001:db8::1")
    // Every hop trusted: the request started at the leftmost.
    expect(resolve("10.1.2.3", { "x-forwarded-for": "10.0.0.5, 10.0.0.6" })).toBe("10.0.0.5")
    // No header: the proxy itself.
    expect(resolve("10.1.2.3")).toBe("10.1.2.3")
  })

  it("Forwarded wins over X-Forwarded-For, with quoted IPv6, ports and several hops", () => {
    expect(
      resolve("10.1.2.3", {
        forwarded: "for=1.1.1.1, for=\"[2001:db8:cafe::17]:4711\", for=10.0.0.9:80;proto=https",
        "x-forwarded-for": "203.0.113.1"
      })
    ).toBe("2001:db8:cafe::17")
    // Several Forwarded header lines arrive joined by commas.
    expect(resolve("127.0.0.1", { forwarded: "for=198.51.100.7;proto=https, for=\"[fd00::2]\"" })).toBe("198.51.100.7")
  })

  it("unreadable hops end the walk at the last address a trusted proxy vouched for", () => {
    expect(resolve("10.1.2.3", { forwarded: "for=198.51.100.7, for=_hidden, for=10.0.0.9" })).toBe("10.0.0.9")
    expect(resolve("10.1.2.3", { forwarded: "for=unknown" })).toBe("10.1.2.3")
    expect(resolve("10.1.2.3", { forwarded: "proto=https" })).toBe("10.1.2.3")
    expect(resolve("10.1.2.3", { forwarded: "for=\"[2001:db8::1]" })).toBe("10.1.2.3")
    expect(resolve("10.1.2.3", { "x-forwarded-for": "198.51.100.7, garbage, 10.0.0.9" })).toBe("10.0.0.9")
    expect(resolve("10.1.2.3", { "x-forwarded-for": ",,," })).toBe("10.1.2.3")
    expect(resolve("10.1.2.3", { "x-forwarded-for": "\u0000\uffff%%%" })).toBe("10.1.2.3")
    // A peer that is no IP address (a Unix socket) stays what it is.
    expect(resolve("/run/etd.sock", { "x-forwarded-for": "198.51.100.7" })).toBe("/run/etd.sock")
  })

  it("rate limits count IPv6 clients per /64 and IPv4 ones per address", () => {
    expect(limitKeyOf("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64")
    expect(limitKeyOf("2001:db8:1:2::1")).toBe(limitKeyOf("2001:db8:1:2:ffff::"))
    expect(limitKeyOf("2001:db8:1:3::1")).not.toBe(limitKeyOf("2001:db8:1:2::1"))
    expect(limitKeyOf("198.51.100.7")).toBe("198.51.100.7")
    expect(limitKeyOf("unknown")).toBe("unknown")
  })
})
