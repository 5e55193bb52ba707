/**
 * The typed client, derived from the same contract as the server.
 *
 * - Effect users: `makeClient({ baseUrl, token })` is the `HttpApiClient`; every declared error
 *   is a typed failure (`InvalidApiKey`, `InsufficientScope`, …) with its `code`.
 * - Everyone else: `createClient({ baseUrl, token })` has the same methods returning Promises;
 *   a failed call rejects with the same error classes (each an `Error` with `code` and `message`).
 *
 * Published as its own package (client/, built by scripts/build-client.mjs): this file and what it
 * imports are the contract, which imports nothing but `effect` (`npm run depcruise`).
 */
import { Cause, Effect, Exit, Redacted, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../Api.js"
import { argumentChecks, InvalidArgument } from "./Arguments.js"

export { Api }
export * from "../domain/Errors.js"
export { type ArgumentIssue, InvalidArgument } from "./Arguments.js"

/**
 * Passwords travel as `Redacted` values, so that logging a payload never shows one:
 * `Redacted.make("…")`. Re-exported for code that does not import `effect` itself.
 */
export { Redacted }

/**
 * A call that got no answer the contract describes: the network failed or the URL was invalid
 * (`reason._tag` `TransportError`, `InvalidUrlError`, `EncodeError`), or the answer was not one the
 * contract declares, e.g. a proxy's 502 page (`StatusCodeError`, `DecodeError`, `EmptyBodyError`).
 * Effect's `HttpClientError` (`_tag: "HttpClientError"`), under a name that says what it means here.
 */
export const RequestError = HttpClientError.HttpClientError
export type RequestError = HttpClientError.HttpClientError

/**
 * A value the contract refuses: a payload, path or query parameter checked before anything is
 * sent (the server would answer `400 invalid_request`), or a response body that does not match the
 * contract. Effect's `Schema.SchemaError` (`_tag: "SchemaError"`); `message` lists the issues.
 */
export const ParseError = Schema.SchemaError
export type ParseError = Schema.SchemaError

export interface ClientOptions {
  /** For example `https://api.example.com` (without `/v1`: the paths carry it). */
  readonly baseUrl: string
  /** An API key (`etd_live_…`, `etd_test_…`) or a session token (`etd_sess_…`). */
  readonly token?: string | undefined
}

/** One method per endpoint, grouped as in the contract (`etd.documents.issue`, `etd.apiKeys.create`, …). */
export type EffectClient = HttpApiClient.ForApi<typeof Api>

// The return type is spelled out so the published declarations name it instead of inlining it.
export const makeClient = (options: ClientOptions): Effect.Effect<EffectClient, never, HttpClient.HttpClient> =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: options.token === undefined
      ? undefined
      : HttpClient.mapRequest(HttpClientRequest.bearerToken(options.token))
  })

// Each endpoint method is generic in its `responseMode`; the facade offers the plain-value form.
type Promisified<F> = F extends (...args: infer Args) => Effect.Effect<infer A, infer _E, infer _R>
  ? (...args: Args) => Promise<
    Exclude<A, readonly [unknown, HttpClientResponse.HttpClientResponse] | HttpClientResponse.HttpClientResponse>
  >
  : never

export type PromiseClient = {
  readonly [Group in keyof EffectClient]: {
    readonly [Endpoint in keyof EffectClient[Group]]: Promisified<EffectClient[Group][Endpoint]>
  }
}

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause)
  })

/**
 * The Promise facade for code that does not use Effect. Uses the global `fetch`. A call's arguments
 * are checked before anything is sent: one the contract refuses rejects with `InvalidArgument`.
 */
export const createClient = (options: ClientOptions): PromiseClient => {
  const client = Effect.runSync(makeClient(options).pipe(Effect.provide(FetchHttpClient.layer)))
  const checks = argumentChecks(Api)
  const groups: Record<string, Record<string, (...args: ReadonlyArray<unknown>) => Promise<unknown>>> = {}
  for (const [group, endpoints] of Object.entries(client)) {
    groups[group] = {}
    for (
      const [name, call] of Object.entries(
        endpoints as unknown as Record<string, (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>>
      )
    ) {
      const method = `${group}.${name}`
      const check = checks.get(method)
      groups[group][name] = (...args) => {
        const issues = check?.(args[0]) ?? []
        return issues.length > 0 ? Promise.reject(new InvalidArgument(method, issues)) : run(call(...args))
      }
    }
  }
  // The loop above builds exactly the shape PromiseClient describes, one method per endpoint.
  return groups as unknown as PromiseClient
}
