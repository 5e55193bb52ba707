/**
 * The typed client, derived from the same contract as the server.
 *
 * - Effect users: `makeClient({ baseUrl, token })` is the `HttpApiClient`; every declared error
 *   is a typed failure (`InvalidApiKey`, `InsufficientScope`, …) with its `code`.
 * - Everyone else: `createClient({ baseUrl, token })` has the same methods returning Promises;
 *   a failed call rejects with the same error classes (each an `Error` with `code` and `message`).
 */
import { Cause, Effect, Exit } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { Api } from "../Api.js"

export { Api }
export * from "../domain/Errors.js"

export interface ClientOptions {
  /** For example `https://api.example.com` (without `/v1`: the paths carry it). */
  readonly baseUrl: string
  /** An API key (`etd_live_…`, `etd_test_…`) or a session token (`etd_sess_…`). */
  readonly token?: string | undefined
}

export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(Api, {
    baseUrl: options.baseUrl,
    transformClient: options.token === undefined
      ? undefined
      : HttpClient.mapRequest(HttpClientRequest.bearerToken(options.token))
  })

export type EffectClient = Effect.Success<ReturnType<typeof makeClient>>

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

/** The Promise facade for code that does not use Effect. Uses the global `fetch`. */
export const createClient = (options: ClientOptions): PromiseClient => {
  const client = Effect.runSync(makeClient(options).pipe(Effect.provide(FetchHttpClient.layer)))
  const groups: Record<string, Record<string, (...args: ReadonlyArray<unknown>) => Promise<unknown>>> = {}
  for (const [group, endpoints] of Object.entries(client)) {
    groups[group] = {}
    for (const [name, call] of Object.entries(endpoints as unknown as Record<string, (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, unknown>>)) {
      groups[group][name] = (...args) => run(call(...args))
    }
  }
  // The loop above builds exactly the shape PromiseClient describes, one method per endpoint.
  return groups as unknown as PromiseClient
}
