/**
 * SSRF protection for outgoing webhook deliveries, in two layers:
 * - `checkUrl` (SsrfUrlCheck.ts) when an endpoint is created or changed and before each delivery,
 *   because Node never calls `lookup` for IP-literal hosts;
 * - `guardedLookup` (SsrfGuardedLookup.ts), plugged into `http(s).request`: the resolved addresses
 *   are checked at connect time and the socket connects to exactly the address that was checked.
 * Both ask `forbiddenReason` (AddressPolicy.ts), which reads address text with AddressLiteral.ts.
 */
export { parseIPv6 } from "./AddressLiteral.js"
export { type AddressPolicy, forbiddenReason, isForbiddenAddress } from "./AddressPolicy.js"
export {
  guardedLookup,
  type GuardedLookupOptions,
  type ResolvedAddress,
  type Resolver,
  SSRF_ERROR_CODE,
  SsrfForbiddenAddressError
} from "./SsrfGuardedLookup.js"
export { checkUrl, UnsafeUrlReason, UnsafeWebhookUrl, type UrlPolicy } from "./SsrfUrlCheck.js"
