/**
 * The connect-time check: a `dns.lookup` replacement for `http(s).request` and `net.connect` that
 * checks every resolved address and hands the socket exactly the addresses it checked, so there is
 * no DNS-rebinding window between check and connect.
 */
import * as dns from "node:dns"
import type { LookupFunction } from "node:net"
import { isIP } from "node:net"
import { stripBrackets } from "./AddressLiteral.js"
import { type AddressPolicy, forbiddenReason } from "./AddressPolicy.js"

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
 * host (a mixed answer is how rebinding attacks hide). Node (since 20) calls it with `{ all: true }`
 * when `autoSelectFamily` is on (the default) and without otherwise; both shapes are served.
 */
export const guardedLookup = (options: GuardedLookupOptions): LookupFunction => {
  const resolve = options.resolve ?? systemResolver
  return (hostname, lookupOptions, callback) => {
    const family = requestedFamily(lookupOptions.family)
    const literal = stripBrackets(hostname)
    const resolved: Promise<ReadonlyArray<ResolvedAddress>> = isIP(literal) !== 0
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
        process.nextTick(() => callback(error instanceof Error ? error : new Error(String(error)), "", 0))
    )
  }
}
