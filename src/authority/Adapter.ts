/**
 * The tax authority's two layers (SPEC §7): `TaxAuthorityLive` (production) and
 * `TaxAuthoritySandbox` (homologation), built by one adapter parameterized by environment.
 *
 * Configuration (Effect `Config`):
 * - `TAX_AUTHORITY_LIVE_TARGET`, `TAX_AUTHORITY_SANDBOX_TARGET`: what each layer talks to. Default
 *   and, for now, only value: `simulator` (src/authority/Simulator.ts). Anything else stops the
 *   service at start-up: the national (SEFIN Nacional) protocol adapter does not exist yet.
 * - `TAX_AUTHORITY_SIMULATOR_LATENCY` (duration, default 0 ms) and
 *   `TAX_AUTHORITY_SIMULATOR_FAILURE_RATE` (0..1, default 0): the simulator's behaviour.
 * - `TAX_AUTHORITY_TIMEOUT` (duration, default 10 s): bound on every call; past it the call fails
 *   with `AuthorityTimeout` (transient), so a hung authority never holds a worker forever. It is
 *   also how long the simulator keeps a `simulate:timeout` submission waiting.
 */
import {
  Cause,
  Clock,
  Config,
  Duration,
  Effect,
  Exit,
  Layer,
  Metric,
  Option,
  Schema,
  type Scope
} from "effect"
import type { SqlClient } from "effect/sql"
import type { Environment } from "../domain/Principal.js"
import { makeSimulator } from "./Simulator.js"
import {
  AuthorityTimeout,
  environmentCode,
  type TaxAuthority,
  TaxAuthorityLive,
  TaxAuthoritySandbox
} from "./TaxAuthority.js"

/** What each environment's layer stands for. */
export const authorityEnvironments = {
  live: { system: "production", tpAmb: environmentCode("live"), targetVariable: "TAX_AUTHORITY_LIVE_TARGET" },
  test: { system: "homologation", tpAmb: environmentCode("test"), targetVariable: "TAX_AUTHORITY_SANDBOX_TARGET" }
} as const satisfies Record<
  Environment,
  { system: TaxAuthority["system"]; tpAmb: 1 | 2; targetVariable: string }
>

export type AuthorityTarget = "simulator"

export interface AuthorityAdapterConfig {
  readonly target: AuthorityTarget
  readonly timeout: Duration.Duration
  readonly simulator: { readonly latency: Duration.Duration; readonly failureRate: number }
}

const target = (name: string): Config.Config<AuthorityTarget> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) =>
      value === "simulator" ||
      `${name}=${JSON.stringify(value)} is not supported: the only available target is "simulator"; ` +
        `the national tax authority (SEFIN Nacional) protocol adapter is not available yet.`
    )),
    name
  ).pipe(
    Config.withDefault("simulator"),
    Config.map(() => "simulator" as const)
  )

export const authorityConfig = (environment: Environment): Config.Config<AuthorityAdapterConfig> =>
  Config.all({
    target: target(authorityEnvironments[environment].targetVariable),
    timeout: Config.schema(
      Schema.DurationFromString.check(Schema.makeFilter((d) =>
        Duration.isGreaterThan(d, Duration.zero) || "TAX_AUTHORITY_TIMEOUT must be a positive duration"
      )),
      "TAX_AUTHORITY_TIMEOUT"
    ).pipe(Config.withDefault(Duration.seconds(10))),
    simulator: Config.all({
      latency: Config.Duration("TAX_AUTHORITY_SIMULATOR_LATENCY").pipe(Config.withDefault(Duration.zero)),
      failureRate: Config.schema(
        Schema.Number.check(Schema.makeFilter((rate) =>
          (rate >= 0 && rate <= 1) || "TAX_AUTHORITY_SIMULATOR_FAILURE_RATE must be a number from 0 to 1"
        )),
        "TAX_AUTHORITY_SIMULATOR_FAILURE_RATE"
      ).pipe(Config.withDefault(0))
    })
  })

// SPEC §13: authority latency and errors.
const callDuration = Metric.histogram("etd_authority_call_duration_ms", {
  description: "Duration of tax-authority calls",
  // 5 ms .. ~41 s: the simulator answers in milliseconds, the real authority in seconds.
  boundaries: Metric.exponentialBoundaries({ start: 5, factor: 2, count: 14 })
})
const callOutcomes = Metric.counter("etd_authority_calls_total", {
  description: "Tax-authority calls by outcome",
  incremental: true
})

/**
 * Every call bounded by `timeout` and measured. The inner call is interrupted on timeout; what the
 * authority did meanwhile is the worker's to find out with `lookup`.
 */
export const withTimeout = (authority: TaxAuthority, timeout: Duration.Duration): TaxAuthority => {
  const labels = (operation: string) => ({ system: authority.system, operation })
  const bounded = <A, E extends { readonly _tag: string }>(
    operation: string,
    submissionId: string,
    call: Effect.Effect<A, E>
  ): Effect.Effect<A, E | AuthorityTimeout> =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const exit = yield* Effect.exit(Effect.timeoutOrElse(call, {
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new AuthorityTimeout({ message: `The tax authority did not answer within ${Duration.format(timeout)}.` })
          )
      }))
      const elapsed = (yield* Clock.currentTimeMillis) - started
      const outcome = Exit.isSuccess(exit)
        ? "ok"
        : Option.match(Cause.findErrorOption(exit.cause), { onNone: () => "defect", onSome: (error) => error._tag })
      yield* Metric.update(Metric.withAttributes(callDuration, labels(operation)), elapsed)
      yield* Metric.update(Metric.withAttributes(callOutcomes, { ...labels(operation), outcome }), 1)
      return yield* exit
    }).pipe(
      // The port-level span, whatever the target; it includes the time spent waiting for a timeout.
      Effect.withSpan(`TaxAuthority.${operation}`, {
        kind: "client",
        attributes: { "authority.system": authority.system, "authority.submission_id": submissionId }
      })
    )
  return {
    system: authority.system,
    submit: (submission) => bounded("submit", submission.submissionId, authority.submit(submission)),
    lookup: (ref) => bounded("lookup", ref.submissionId, authority.lookup(ref)),
    cancel: (request) => bounded("cancel", request.submissionId, authority.cancel(request))
  }
}

/** The adapter for one environment, as configured. */
export const makeAuthority = (
  environment: Environment
): Effect.Effect<TaxAuthority, Config.ConfigError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* authorityConfig(environment)
    const { system } = authorityEnvironments[environment]
    // Only one target exists today; the national protocol adapter will be chosen here by `config.target`.
    const simulator = yield* makeSimulator({
      system,
      latency: config.simulator.latency,
      failureRate: config.simulator.failureRate,
      timeoutAfter: config.timeout
    })
    yield* Effect.logInfo("tax authority adapter ready").pipe(
      Effect.annotateLogs({ "authority.system": system, "authority.target": config.target })
    )
    return withTimeout(simulator, config.timeout)
  })

// A configuration error is fatal at start-up: the service must not run against the wrong authority.
export const TaxAuthorityLiveLayer: Layer.Layer<TaxAuthorityLive, never, SqlClient.SqlClient> = Layer.effect(
  TaxAuthorityLive,
  Effect.orDie(makeAuthority("live"))
)

export const TaxAuthoritySandboxLayer: Layer.Layer<TaxAuthoritySandbox, never, SqlClient.SqlClient> = Layer.effect(
  TaxAuthoritySandbox,
  Effect.orDie(makeAuthority("test"))
)

export const TaxAuthoritiesLive = Layer.merge(TaxAuthorityLiveLayer, TaxAuthoritySandboxLayer)

/** The authority of a document's environment: production for live, homologation for test. */
export const authorityFor = (
  environment: Environment
): Effect.Effect<TaxAuthority, never, TaxAuthorityLive | TaxAuthoritySandbox> =>
  environment === "live" ? TaxAuthorityLive : TaxAuthoritySandbox
