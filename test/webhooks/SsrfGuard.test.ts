import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { LookupAddress } from "node:dns"
import * as http from "node:http"
import type { AddressInfo, LookupFunction } from "node:net"
import * as net from "node:net"
import { afterAll, beforeAll } from "vitest"
import {
  checkUrl,
  forbiddenReason,
  guardedLookup,
  isForbiddenAddress,
  parseIPv6,
  type Resolver,
  SSRF_ERROR_CODE,
  SsrfForbiddenAddressError,
  UnsafeWebhookUrl
} from "../../src/webhooks/SsrfGuard.js"

const strict = { allowLoopback: false }
const dev = { allowLoopback: true }

// [address inside the range, address just outside it]
const V4_RANGES: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
  ["0.0.0.0/8", ["0.0.0.0", "0.255.255.255"], ["1.0.0.0"]],
  ["10.0.0.0/8", ["10.0.0.1", "10.255.255.255"], ["9.255.255.255", "11.0.0.0"]],
  ["100.64.0.0/10", ["100.64.0.0", "100.127.255.255"], ["100.63.255.255", "100.128.0.0"]],
  ["127.0.0.0/8", ["127.0.0.1", "127.255.255.254"], ["126.255.255.255", "128.0.0.0"]],
  ["169.254.0.0/16", ["169.254.0.0", "169.254.169.254"], ["169.253.255.255", "169.255.0.0"]],
  ["172.16.0.0/12", ["172.16.0.0", "172.31.255.255"], ["172.15.255.255", "172.32.0.0"]],
  ["192.0.0.0/24", ["192.0.0.0", "192.0.0.255"], ["191.255.255.255", "192.0.1.0"]],
  ["192.0.2.0/24", ["192.0.2.0", "192.0.2.255"], ["192.0.1.255", "192.0.3.0"]],
  ["198.18.0.0/15", ["198.18.0.0", "198.19.255.255"], ["198.17.255.255", "198.20.0.0"]],
  ["198.51.100.0/24", ["198.51.100.0", "198.51.100.255"], ["198.51.99.255", "198.51.101.0"]],
  ["203.0.113.0/24", ["203.0.113.0", "203.0.113.255"], ["203.0.112.255", "203.0.114.0"]],
  ["192.168.0.0/16", ["192.168.0.0", "192.168.255.255"], ["192.167.255.255", "192.169.0.0"]],
  ["224.0.0.0/4", ["224.0.0.0", "239.255.255.255"], ["223.255.255.255"]],
  ["240.0.0.0/4", ["240.0.0.0", "255.255.255.254"], ["223.255.255.255"]],
  ["255.255.255.255/32", ["255.255.255.255"], ["8.8.8.8"]]
]

const V6_RANGES: ReadonlyArray<readonly [string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
  ["::/128", ["::", "0:0:0:0:0:0:0:0"], ["2606:4700:4700::1111"]],
  ["::1/128", ["::1", "0:0:0:0:0:0:0:1", "::0001"], ["2606:4700:4700::1"]],
  ["fc00::/7", ["fc00::", "fd12:3456::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], [
    "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    "fe00::"
  ]],
  ["fe80::/10", ["fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "FE80::ABCD"], [
    "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
  ]],
  ["ff00::/8", ["ff00::", "ff02::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"], ["2a00:1450:4001::1"]],
  ["2001:db8::/32", ["2001:db8::", "2001:db8::1", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"], [
    "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
    "2001:db9::"
  ]],
  // Beyond the brief: ranges with no legitimate public destination.
  ["fec0::/10 site-local", ["fec0::1", "feff::1"], ["fe00::1"]],
  ["2001::/32 Teredo", ["2001::1", "2001:0:ffff::1"], ["2001:1::1"]],
  ["100::/64 discard", ["100::1"], ["100:0:0:1::1"]],
  ["64:ff9b:1::/48 local NAT64", ["64:ff9b:1::8.8.8.8"], ["64:ff9b:2::1"]]
]

const PUBLIC_ADDRESSES = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450:4001:82a::200e"]

describe("isForbiddenAddress: IPv4 ranges", () => {
  for (const [range, inside, outside] of V4_RANGES) {
    it(`${range}: refuses ${inside.join(", ")}; allows ${outside.join(", ")}`, () => {
      for (const ip of inside) expect(isForbiddenAddress(ip), ip).toBe(true)
      for (const ip of outside) expect(isForbiddenAddress(ip), ip).toBe(false)
    })
  }
})

describe("isForbiddenAddress: IPv6 ranges", () => {
  for (const [range, inside, outside] of V6_RANGES) {
    it(`${range}: refuses ${inside.join(", ")}; allows ${outside.join(", ")}`, () => {
      for (const ip of inside) expect(isForbiddenAddress(ip), ip).toBe(true)
      for (const ip of outside) expect(isForbiddenAddress(ip), ip).toBe(false)
    })
  }

  it("allows ordinary public addresses", () => {
    for (const ip of PUBLIC_ADDRESSES) expect(forbiddenReason(ip), ip).toBeUndefined()
  })
})

describe("isForbiddenAddress: IPv4 embedded in IPv6", () => {
  it("IPv4-mapped ::ffff:0:0/96 in dotted and hex forms", () => {
    for (
      const ip of [
        "::ffff:127.0.0.1",
        "::ffff:7f00:1",
        "::FFFF:7F00:0001",
        "0:0:0:0:0:ffff:127.0.0.1",
        "0000:0000:0000:0000:0000:ffff:7f00:0001",
        "::ffff:10.0.0.1",
        "::ffff:a00:1",
        "::ffff:169.254.169.254",
        "::ffff:a9fe:a9fe",
        "::ffff:192.168.1.1",
        "::ffff:c0a8:101",
        "::ffff:0.0.0.0",
        "::ffff:0:0",
        "::ffff:100.64.0.1",
        "::ffff:255.255.255.255"
      ]
    ) expect(isForbiddenAddress(ip), ip).toBe(true)
    for (const ip of ["::ffff:8.8.8.8", "::ffff:808:808", "::ffff:93.184.216.34", "::ffff:5db8:d822"]) {
      expect(isForbiddenAddress(ip), ip).toBe(false)
    }
  })

  it("IPv4-compatible ::a.b.c.d is refused whatever it embeds", () => {
    for (const ip of ["::127.0.0.1", "::7f00:1", "::10.0.0.1", "::8.8.8.8", "::808:808", "::2"]) {
      expect(isForbiddenAddress(ip), ip).toBe(true)
    }
  })

  it("IPv4-translated ::ffff:0:a.b.c.d is refused", () => {
    expect(isForbiddenAddress("::ffff:0:8.8.8.8")).toBe(true)
    expect(isForbiddenAddress("::ffff:0:127.0.0.1")).toBe(true)
  })

  it("NAT64 64:ff9b::/96 checks the embedded IPv4", () => {
    for (
      const ip of ["64:ff9b::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b::10.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b::"]
    ) {
      expect(isForbiddenAddress(ip), ip).toBe(true)
    }
    for (const ip of ["64:ff9b::8.8.8.8", "64:ff9b::808:808", "64:ff9b::1:a00:1"]) {
      expect(isForbiddenAddress(ip), ip).toBe(false)
    }
  })

  it("6to4 2002::/16 checks the embedded IPv4", () => {
    for (const ip of ["2002:7f00:1::", "2002:a00:1::1", "2002:c0a8:101::1", "2002:a9fe:a9fe:1234::1", "2002::1"]) {
      expect(isForbiddenAddress(ip), ip).toBe(true)
    }
    for (const ip of ["2002:808:808::1", "2002:5db8:d822::", "2003::1", "2001:ffff::1"]) {
      expect(isForbiddenAddress(ip), ip).toBe(false)
    }
  })

  it("explains the refusal", () => {
    expect(forbiddenReason("::ffff:a00:1")).toBe("IPv4-mapped form of private network (10.0.0.0/8)")
    expect(forbiddenReason("169.254.169.254")).toBe("link-local (169.254.0.0/16)")
  })

  // Tenants read these through checkUrl's message.
  it("names the block and the form that carries it", () => {
    expect(forbiddenReason("::")).toBe("unspecified (::)")
    expect(forbiddenReason("::1")).toBe("loopback (::1)")
    expect(forbiddenReason("127.0.0.1")).toBe("loopback (127.0.0.0/8)")
    expect(forbiddenReason("::ffff:127.0.0.1")).toBe("IPv4-mapped form of loopback (127.0.0.0/8)")
    expect(forbiddenReason("64:ff9b::127.0.0.1", dev)).toBe("NAT64 form of loopback (127.0.0.0/8)")
    expect(forbiddenReason("2002:c0a8:101::1")).toBe("6to4 form of private network (192.168.0.0/16)")
    expect(forbiddenReason("::10.0.0.1")).toBe("IPv4-compatible (::/96, embeds 10.0.0.1)")
    expect(forbiddenReason("::ffff:0:8.8.8.8")).toBe("IPv4-translated (::ffff:0:0:0/96)")
    expect(forbiddenReason("64:ff9b:1::1")).toBe("local-use NAT64 (64:ff9b:1::/48)")
    expect(forbiddenReason("fd00::1")).toBe("unique local (fc00::/7)")
    expect(forbiddenReason("255.255.255.255")).toBe("reserved (240.0.0.0/4)")
    expect(forbiddenReason("localhost")).toBe("not an IP address")
  })

  // ipaddr.js reads "::a.b.c.d" as the IPv4-mapped "::ffff:a.b.c.d"; Node connects to ::a.b.c.d.
  it("reads ::a.b.c.d as the IPv4-compatible address Node connects to, not as IPv4-mapped", () => {
    expect(forbiddenReason("::8.8.8.8")).toBe("IPv4-compatible (::/96, embeds 8.8.8.8)")
    expect(forbiddenReason("::127.0.0.1", dev)).toBe("IPv4-compatible (::/96, embeds 127.0.0.1)")
    expect(parseIPv6("::8.8.8.8")).toBe(0x08080808n)
    expect(parseIPv6("::FFFF:8.8.8.8")).toBe(0xffff08080808n)
  })
})

describe("isForbiddenAddress: inputs that are not addresses", () => {
  it("fails closed", () => {
    for (
      const input of [
        "",
        "localhost",
        "example.com",
        "127.1",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "2130706433",
        "1.2.3.256",
        "::ffff:999.0.0.1",
        "1::2::3",
        "12345::",
        "gggg::1"
      ]
    ) expect(isForbiddenAddress(input), input).toBe(true)
  })

  it("handles brackets and zone ids", () => {
    expect(isForbiddenAddress("[::1]")).toBe(true)
    expect(isForbiddenAddress("[2606:4700:4700::1111]")).toBe(false)
    expect(isForbiddenAddress("fe80::1%eth0")).toBe(true)
  })

  it("classifies by the address whatever the zone id says, including zone names ipaddr.js rejects", () => {
    expect(forbiddenReason("2606:4700:4700::1111%eth0")).toBeUndefined()
    expect(forbiddenReason("2606:4700:4700::1111%en-0.1")).toBeUndefined()
    expect(forbiddenReason("fe80::1%en-0.1")).toBe("link-local (fe80::/10)")
    expect(forbiddenReason("::ffff:127.0.0.1%1", dev)).toBeUndefined()
    expect(parseIPv6("fe80::1%eth0")).toBeUndefined()
  })

  it("takes as literals exactly what Node connects to without a lookup", () => {
    // ipaddr.js alone would accept these IPv4 spellings; Node hands them to DNS instead.
    for (const input of ["8.8.8", "8.8.2056", "0x8.8.8.8", "010.8.8.8", "134744072", "08.8.8.8"]) {
      expect(net.isIP(input), input).toBe(0)
      expect(forbiddenReason(input), input).toBe("not an IP address")
    }
    expect(forbiddenReason("ffff::255.255.255.255")).toBe("multicast (ff00::/8)")
    expect(forbiddenReason("1:2:3:4:5:6:8.8.8.8")).toBeUndefined()
  })
})

describe("isForbiddenAddress with allowLoopback", () => {
  it("permits loopback and its IPv4-mapped forms", () => {
    for (const ip of ["127.0.0.1", "127.5.6.7", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1"]) {
      expect(isForbiddenAddress(ip, dev), ip).toBe(false)
      expect(isForbiddenAddress(ip, strict), ip).toBe(true)
    }
  })

  it("still refuses everything else", () => {
    for (
      const ip of [
        "10.0.0.1",
        "169.254.169.254",
        "192.168.0.1",
        "172.16.0.1",
        "100.64.0.1",
        "0.0.0.0",
        "::",
        "fe80::1",
        "fc00::1",
        "::ffff:10.0.0.1",
        // Loopback carried by 6to4, NAT64 or the compatible form never reaches this host.
        "2002:7f00:1::",
        "64:ff9b::127.0.0.1",
        "::127.0.0.1"
      ]
    ) expect(isForbiddenAddress(ip, dev), ip).toBe(true)
  })
})

describe("parseIPv6", () => {
  it("expands :: and embedded dotted quads", () => {
    expect(parseIPv6("::")).toBe(0n)
    expect(parseIPv6("::1")).toBe(1n)
    expect(parseIPv6("1::")).toBe(1n << 112n)
    expect(parseIPv6("1:2:3:4:5:6:7:8")).toBe(0x00010002000300040005000600070008n)
    expect(parseIPv6("1:2:3::6:7:8")).toBe(0x00010002000300000000000600070008n)
    expect(parseIPv6("1:2:3:4:5:6:1.2.3.4")).toBe(0x00010002000300040005000601020304n)
    expect(parseIPv6("::ffff:1.2.3.4")).toBe(0xffff01020304n)
    expect(parseIPv6("::1.2.3.4")).toBe(0x01020304n)
    expect(parseIPv6("64:ff9b::1.2.3.4")).toBe(0x0064ff9b000000000000000001020304n)
    expect(parseIPv6("1:2:3:4:5:6:7::")).toBe(0x00010002000300040005000600070000n)
    expect(parseIPv6("::2:3:4:5:6:7:8")).toBe(0x00000002000300040005000600070008n)
  })

  it("rejects malformed text", () => {
    for (
      const text of [
        "",
        ":",
        ":::",
        "1:2:3:4:5:6:7",
        "1:2:3:4:5:6:7:8:9",
        "1:2:3:4:5:6:7:8::",
        "1::2::3",
        ":1::",
        "1:",
        "12345::",
        "::g",
        "1.2.3.4",
        ":1.2.3.4",
        "1:2:3:4:5:6:7:1.2.3.4",
        "::1.2.3",
        "::01.2.3.4",
        "1.2.3.4::"
      ]
    ) expect(parseIPv6(text), text).toBeUndefined()
  })
})

describe("checkUrl", () => {
  const prod = { requireHttps: true, allowLoopback: false }
  const staging = { requireHttps: false, allowLoopback: false }
  const local = { requireHttps: false, allowLoopback: true }

  const reason = (url: string, policy: typeof prod) =>
    Result.match(checkUrl(url, policy), { onFailure: (e) => e.reason, onSuccess: () => "ok" as const })

  it("accepts public https URLs and returns the parsed URL", () => {
    const result = checkUrl("https://hooks.example.com:8443/in?x=1", prod)
    expect(Result.isSuccess(result) && result.success.href).toBe("https://hooks.example.com:8443/in?x=1")
    expect(reason("https://93.184.216.34/hook", prod)).toBe("ok")
    expect(reason("https://[2606:4700:4700::1111]/hook", prod)).toBe("ok")
  })

  it("requires https when asked to, and http(s) always", () => {
    expect(reason("http://hooks.example.com/", prod)).toBe("scheme_not_allowed")
    expect(reason("http://hooks.example.com/", staging)).toBe("ok")
    for (const url of ["ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)"]) {
      expect(reason(url, local), url).toBe("scheme_not_allowed")
    }
  })

  it("rejects what is not an absolute URL", () => {
    for (const url of ["", "not a url", "/relative/path", "example.com/hook", "https://"]) {
      expect(reason(url, staging), url).toBe("invalid_url")
    }
  })

  it("rejects credentials in the URL", () => {
    expect(reason("https://user:pass@example.com/", prod)).toBe("userinfo_not_allowed")
    expect(reason("https://user@example.com/", prod)).toBe("userinfo_not_allowed")
    expect(reason("https://:pass@example.com/", prod)).toBe("userinfo_not_allowed")
  })

  it("rejects forbidden IP literals, including the spellings the URL parser normalises", () => {
    for (
      const url of [
        "https://10.0.0.1/",
        "https://169.254.169.254/latest/meta-data/",
        "https://127.0.0.1/",
        "https://0x7f.1/", // = 127.0.0.1
        "https://2130706433/", // = 127.0.0.1
        "https://0177.0.0.1/", // = 127.0.0.1
        "https://0/", // = 0.0.0.0
        "https://[::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://[::ffff:a00:1]/",
        "https://[fd00::1]/",
        "https://[fe80::1]/",
        "https://[2002:a00:1::]/",
        "https://[64:ff9b::10.0.0.1]/"
      ]
    ) expect(reason(url, prod), url).toBe("forbidden_address")
  })

  it("rejects internal host names", () => {
    for (
      const url of [
        "https://localhost/",
        "https://LOCALHOST:8080/",
        "https://localhost./",
        "https://api.localhost/",
        "https://printer.local/",
        "https://metadata.google.internal/computeMetadata/v1/",
        "https://intranet/",
        "https://router.home.arpa/"
      ]
    ) expect(reason(url, prod), url).toBe("forbidden_hostname")
  })

  it("with allowLoopback permits only loopback", () => {
    expect(reason("http://localhost:3000/hook", local)).toBe("ok")
    expect(reason("http://127.0.0.1:3000/hook", local)).toBe("ok")
    expect(reason("http://[::1]:3000/hook", local)).toBe("ok")
    expect(reason("http://api.localhost/", local)).toBe("forbidden_hostname")
    expect(reason("http://10.0.0.1/", local)).toBe("forbidden_address")
    expect(reason("http://169.254.169.254/", local)).toBe("forbidden_address")
    expect(reason("http://user:pw@localhost/", local)).toBe("userinfo_not_allowed")
  })

  it("explains the refusal in words", () => {
    const result = checkUrl("https://169.254.169.254/", prod)
    expect(Result.isFailure(result) && result.failure.message).toBe(
      "The webhook URL points to a non-public address: link-local (169.254.0.0/16)"
    )
  })

  it.effect("can be yielded inside an Effect", () =>
    Effect.gen(function*() {
      const url = yield* Effect.fromResult(checkUrl("https://hooks.example.com/", prod))
      expect(url.hostname).toBe("hooks.example.com")
      const error = yield* Effect.flip(Effect.fromResult(checkUrl("http://hooks.example.com/", prod)))
      expect(error).toBeInstanceOf(UnsafeWebhookUrl)
      expect(error._tag).toBe("UnsafeWebhookUrl")
    }))
})

type LookupResult =
  | { readonly error: NodeJS.ErrnoException }
  | { readonly address: string | ReadonlyArray<LookupAddress>; readonly family: number | undefined }

const runLookup = (lookup: LookupFunction, host: string, options: { all?: boolean; family?: number } = {}) =>
  new Promise<LookupResult>((resolve) =>
    lookup(host, options, (error, address, family) => resolve(error ? { error } : { address, family }))
  )

const fakeDns = (answers: Record<string, ReadonlyArray<string>>) => {
  const calls: Array<string> = []
  const resolve: Resolver = async (hostname) => {
    calls.push(hostname)
    const addresses = answers[hostname]
    if (addresses === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
    }
    return addresses.map((address) => ({ address, family: net.isIP(address) }))
  }
  return { resolve, calls }
}

const expectSsrfError = (result: LookupResult, address: string) => {
  expect("error" in result).toBe(true)
  if (!("error" in result)) return
  expect(result.error).toBeInstanceOf(SsrfForbiddenAddressError)
  expect(result.error.code).toBe(SSRF_ERROR_CODE)
  expect(result.error.message).toContain(address)
}

describe("guardedLookup with a simulated resolver", () => {
  const dnsAnswers = {
    "evil.example": ["10.1.2.3"],
    "mixed.example": ["93.184.216.34", "127.0.0.1"],
    "mixed6.example": ["2606:2800:220:1::1", "::ffff:169.254.169.254"],
    "good.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "loop.example": ["127.0.0.1", "::1"],
    "loop-and-private.example": ["127.0.0.1", "10.0.0.5"],
    "bogus.example": ["not-an-ip"],
    "empty.example": []
  }

  it("refuses a name that resolves into a private range", async () => {
    const { resolve } = fakeDns(dnsAnswers)
    expectSsrfError(await runLookup(guardedLookup({ ...strict, resolve }), "evil.example", { all: true }), "10.1.2.3")
    expectSsrfError(await runLookup(guardedLookup({ ...strict, resolve }), "evil.example"), "10.1.2.3")
  })

  it("refuses a name when any one of its addresses is forbidden", async () => {
    const { resolve } = fakeDns(dnsAnswers)
    const lookup = guardedLookup({ ...strict, resolve })
    expectSsrfError(await runLookup(lookup, "mixed.example", { all: true }), "127.0.0.1")
    expectSsrfError(await runLookup(lookup, "mixed.example"), "127.0.0.1")
    expectSsrfError(await runLookup(lookup, "mixed6.example", { all: true }), "::ffff:169.254.169.254")
    // Even when only the other family was asked for: the answer as a whole is hostile.
    expectSsrfError(await runLookup(lookup, "mixed6.example", { all: true, family: 4 }), "::ffff:169.254.169.254")
  })

  it("answers in both call shapes with the addresses it checked", async () => {
    const { resolve } = fakeDns(dnsAnswers)
    const lookup = guardedLookup({ ...strict, resolve })
    expect(await runLookup(lookup, "good.example", { all: true })).toEqual({
      address: [
        { address: "93.184.216.34", family: 4 },
        { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 }
      ],
      family: undefined
    })
    expect(await runLookup(lookup, "good.example")).toEqual({ address: "93.184.216.34", family: 4 })
    expect(await runLookup(lookup, "good.example", { family: 6 })).toEqual({
      address: "2606:2800:220:1:248:1893:25c8:1946",
      family: 6
    })
  })

  it("checks IP-literal hosts itself without asking DNS", async () => {
    const { resolve, calls } = fakeDns(dnsAnswers)
    const lookup = guardedLookup({ ...strict, resolve })
    expectSsrfError(await runLookup(lookup, "10.0.0.1", { all: true }), "10.0.0.1")
    expectSsrfError(await runLookup(lookup, "::ffff:7f00:1"), "::ffff:7f00:1")
    expect(await runLookup(lookup, "93.184.216.34")).toEqual({ address: "93.184.216.34", family: 4 })
    expect(await runLookup(lookup, "2606:4700:4700::1111", { all: true })).toEqual({
      address: [{ address: "2606:4700:4700::1111", family: 6 }],
      family: undefined
    })
    expect(calls).toEqual([])
  })

  it("with allowLoopback permits loopback answers but nothing else", async () => {
    const { resolve } = fakeDns(dnsAnswers)
    const lookup = guardedLookup({ ...dev, resolve })
    expect(await runLookup(lookup, "loop.example", { all: true })).toEqual({
      address: [{ address: "127.0.0.1", family: 4 }, { address: "::1", family: 6 }],
      family: undefined
    })
    expectSsrfError(await runLookup(lookup, "loop-and-private.example", { all: true }), "10.0.0.5")
    expectSsrfError(await runLookup(lookup, "evil.example"), "10.1.2.3")
    expectSsrfError(await runLookup(lookup, "169.254.169.254"), "169.254.169.254")
  })

  it("fails closed on odd resolver answers and passes DNS errors through", async () => {
    const { resolve } = fakeDns(dnsAnswers)
    const lookup = guardedLookup({ ...strict, resolve })
    expectSsrfError(await runLookup(lookup, "bogus.example"), "not-an-ip")
    const empty = await runLookup(lookup, "empty.example", { all: true })
    expect("error" in empty && empty.error.code).toBe("ENOTFOUND")
    const missing = await runLookup(lookup, "nxdomain.example")
    expect("error" in missing && missing.error.code).toBe("ENOTFOUND")
  })

  it("does not call back twice when the callback itself throws", async () => {
    const { resolve } = fakeDns(dnsAnswers)
    const lookup = guardedLookup({ ...strict, resolve })
    const seen: Array<unknown> = []
    const boom = new Error("thrown by the caller")
    const uncaught = new Promise<unknown>((resolveUncaught) => {
      const listeners = process.listeners("uncaughtException")
      process.removeAllListeners("uncaughtException")
      process.once("uncaughtException", (error) => {
        for (const listener of listeners) process.on("uncaughtException", listener)
        resolveUncaught(error)
      })
    })
    lookup("good.example", {}, (error) => {
      seen.push(error)
      throw boom
    })
    expect(await uncaught).toBe(boom)
    await new Promise((r) => setTimeout(r, 20))
    expect(seen).toEqual([null])
  })
})

describe("guardedLookup against a real server", () => {
  let server: http.Server
  let port: number
  let hits = 0

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++
      res.end("reached")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.address() as AddressInfo).port // listen() on a TCP port always yields AddressInfo
  })

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const get = (lookup: LookupFunction) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`http://localhost:${port}/`, { lookup, agent: false }, (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (body += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on("error", reject)
      req.end()
    })

  it("refuses localhost without reaching the server", async () => {
    const before = hits
    const error: unknown = await get(guardedLookup(strict)).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(error).toBeInstanceOf(SsrfForbiddenAddressError)
    expect(error).toMatchObject({ code: SSRF_ERROR_CODE, hostname: "localhost" })
    expect(hits).toBe(before)
  })

  it("reaches the server when loopback is allowed", async () => {
    const before = hits
    expect(await get(guardedLookup(dev))).toEqual({ status: 200, body: "reached" })
    expect(hits).toBe(before + 1)
  })

  it("also guards net.connect", async () => {
    const refused = await new Promise<unknown>((resolve) => {
      const socket = net.connect({ host: "localhost", port, lookup: guardedLookup(strict) })
      socket.on("connect", () => {
        socket.destroy()
        resolve("connected")
      })
      socket.on("error", resolve)
    })
    expect(refused).toMatchObject({ code: SSRF_ERROR_CODE })

    const allowed = await new Promise<unknown>((resolve) => {
      const socket = net.connect({ host: "localhost", port, lookup: guardedLookup(dev), autoSelectFamily: false })
      socket.on("connect", () => {
        socket.destroy()
        resolve("connected")
      })
      socket.on("error", resolve)
    })
    expect(allowed).toBe("connected")
  })
})
