/**
 * Syntactic check of a webhook URL, when an endpoint is created or changed and before each delivery
 * (Node never calls `lookup` for IP-literal hosts, so this is the only check those get).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { isIP } from "node:net"
import { stripBrackets } from "./AddressLiteral.js"
import { type AddressPolicy, forbiddenReason } from "./AddressPolicy.js"

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
