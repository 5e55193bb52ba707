/**
 * The tax authority's two layers (SPEC §7): `TaxAuthorityLive` (production) and
 * `TaxAuthoritySandbox` (homologation), built by one adapter parameterized by environment.
 *
 * Configuration (Effect `Config`):
 * - `TAX_AUTHORITY_LIVE_TARGET`, `TAX_AUTHORITY_SANDBOX_TARGET`: what each layer talks to,
 *   `simulator` (default: the built-in one, src/authority/Simulator.ts, so the service runs offline)
 *   or `sefin` (the national NFS-e system, src/authority/SefinAdapter.ts).
 * - `TAX_AUTHORITY_LIVE_URL`, `TAX_AUTHORITY_SANDBOX_URL`: the SEFIN Nacional base URLs (defaults:
 *   production and "produção restrita", from the official API descriptions);
 *   `TAX_AUTHORITY_LIVE_DANFSE_URL`, `TAX_AUTHORITY_SANDBOX_DANFSE_URL`: the national DANFSe API.
 * - `TAX_AUTHORITY_LIVE_CA_FILE`, `TAX_AUTHORITY_SANDBOX_CA_FILE` (or `TAX_AUTHORITY_CA_FILE` for
 *   both): a PEM bundle of extra certificate authorities to trust for the authority's TLS (produção
 *   restrita chains to ICP-Brasil, which Node does not trust by default; also the local authority's
 *   test CA). Verification always stays on.
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
import { readFileSync } from "node:fs"
import { CredentialVault } from "../credentials/CredentialVault.js"
import type { Environment } from "../domain/Principal.js"
import { makeSefinAuthority } from "./sefin/SefinAdapter.js"
import { makeSimulator } from "./simulator/Simulator.js"
import { authorityDuration, authorityRequests } from "../telemetry/Metrics.js"
import {
  AuthorityTimeout,
  type AuthorityTarget,
  environmentCode,
  type TaxAuthority,
  TaxAuthorityLive,
  TaxAuthoritySandbox
} from "./TaxAuthority.js"

/** What each environment's layer stands for. */
export const authorityEnvironments = {
  live: {
    system: "production",
    tpAmb: environmentCode("live"),
    variablePrefix: "TAX_AUTHORITY_LIVE",
    sefinUrl: "https://sefin.nfse.gov.br/SefinNacional",
    danfseUrl: "https://adn.nfse.gov.br/danfse"
  },
  test: {
    system: "homologation",
    tpAmb: environmentCode("test"),
    variablePrefix: "TAX_AUTHORITY_SANDBOX",
    sefinUrl: "https://sefin.producaorestrita.nfse.gov.br/SefinNacional",
    danfseUrl: "https://adn.producaorestrita.nfse.gov.br/danfse"
  }
} as const satisfies Record<
  Environment,
  { system: TaxAuthority["system"]; tpAmb: 1 | 2; variablePrefix: string; sefinUrl: string; danfseUrl: string }
>

export interface AuthorityAdapterConfig {
  readonly target: AuthorityTarget
  readonly timeout: Duration.Duration
  readonly simulator: { readonly latency: Duration.Duration; readonly failureRate: number }
  readonly sefin: { readonly sefinUrl: string; readonly danfseUrl: string; readonly caFile: Option.Option<string> }
}

const target = (name: string): Config.Config<AuthorityTarget> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) =>
      value === "simulator" || value === "sefin" ||
      `${name}=${JSON.stringify(value)} is not a target: use "simulator" (the built-in authority) or "sefin" (the national NFS-e system).`
    )),
    name
  ).pipe(
    Config.withDefault("simulator"),
    Config.map((value) => value as AuthorityTarget)
  )

/** An https base URL, kept without its trailing slash (paths are appended to it). */
const baseUrl = (name: string, fallback: string): Config.Config<string> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value) => {
      const parsed = URL.canParse(value) ? new URL(value) : undefined
      return (parsed !== undefined && parsed.protocol === "https:" && parsed.search === "" && parsed.hash === "") ||
        `${name} must be an https:// URL without query or fragment (the national system is HTTPS only)`
    })),
    name
  ).pipe(Config.withDefault(fallback), Config.map((value) => value.replace(/\/+$/u, "")))

export const authorityConfig = (environment: Environment): Config.Config<AuthorityAdapterConfig> =>
  Config.all({
    target: target(`${authorityEnvironments[environment].variablePrefix}_TARGET`),
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
    }),
    sefin: Config.all({
      sefinUrl: baseUrl(`${authorityEnvironments[environment].variablePrefix}_URL`, authorityEnvironments[environment].sefinUrl),
      danfseUrl: baseUrl(
        `${authorityEnvironments[environment].variablePrefix}_DANFSE_URL`,
        authorityEnvironments[environment].danfseUrl
      ),
      // The environment's own bundle first: a test CA trusted for homologation is never trusted for production.
      caFile: Config.option(
        Config.String(`${authorityEnvironments[environment].variablePrefix}_CA_FILE`).pipe(
          Config.orElse(() => Config.String("TAX_AUTHORITY_CA_FILE"))
        )
      )
    })
  })

// SPEC §13: authority latency and errors.

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
      yield* Metric.update(Metric.withAttributes(authorityDuration, labels(operation)), elapsed / 1000)
      yield* Metric.update(Metric.withAttributes(authorityRequests, { ...labels(operation), outcome }), 1)
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
    target: authority.target,
    canSubmitFor: authority.canSubmitFor,
    refusalsOf: authority.refusalsOf,
    cancellationRefusalsOf: authority.cancellationRefusalsOf,
    submit: (submission) => bounded("submit", submission.submissionId, authority.submit(submission)),
    lookup: (ref) => bounded("lookup", ref.submissionId, authority.lookup(ref)),
    cancel: (request) => bounded("cancel", request.submissionId, authority.cancel(request)),
    danfse: (request) => bounded("danfse", request.accessKey, authority.danfse(request))
  }
}

/** The extra CA bundle, read once at start-up: a missing or empty file stops the start. */
const readCaBundle = (path: string, variables: string) =>
  Effect.try({
    try: () => readFileSync(path, "utf8"),
    catch: () => new Error(`${variables}=${path} cannot be read`)
  }).pipe(
    Effect.filterOrFail(
      (pem) => pem.includes("-----BEGIN CERTIFICATE-----"),
      () => new Error(`${variables}=${path} holds no PEM certificate`)
    )
  )

/** The adapter for one environment, as configured. */
export const makeAuthority = (
  environment: Environment
): Effect.Effect<TaxAuthority, Config.ConfigError | Error, SqlClient.SqlClient | CredentialVault | Scope.Scope> =>
  Effect.gen(function*() {
    const config = yield* authorityConfig(environment)
    const { system } = authorityEnvironments[environment]
    const authority = config.target === "sefin"
      ? yield* makeSefinAuthority({
        environment,
        system,
        timeout: config.timeout,
        endpoints: {
          sefinUrl: config.sefin.sefinUrl,
          danfseUrl: config.sefin.danfseUrl,
          ...(Option.isSome(config.sefin.caFile)
            ? {
              ca: yield* readCaBundle(
                config.sefin.caFile.value,
                `${authorityEnvironments[environment].variablePrefix}_CA_FILE (or TAX_AUTHORITY_CA_FILE)`
              )
            }
            : {})
        }
      })
      : yield* makeSimulator({
        system,
        latency: config.simulator.latency,
        failureRate: config.simulator.failureRate,
        timeoutAfter: config.timeout
      })
    yield* Effect.logInfo("tax authority adapter ready").pipe(
      Effect.annotateLogs({
        "authority.system": system,
        "authority.target": config.target,
        ...(config.target === "sefin" ? { "authority.url": config.sefin.sefinUrl } : {})
      })
    )
    return withTimeout(authority, config.timeout)
  })

// A configuration error is fatal at start-up: the service must not run against the wrong authority.
export const TaxAuthorityLiveLayer: Layer.Layer<TaxAuthorityLive, never, SqlClient.SqlClient | CredentialVault> = Layer.effect(
  TaxAuthorityLive,
  Effect.orDie(makeAuthority("live"))
)

export const TaxAuthoritySandboxLayer: Layer.Layer<TaxAuthoritySandbox, never, SqlClient.SqlClient | CredentialVault> =
  Layer.effect(TaxAuthoritySandbox, Effect.orDie(makeAuthority("test")))

export const TaxAuthoritiesLive = Layer.merge(TaxAuthorityLiveLayer, TaxAuthoritySandboxLayer)

/** The authority of a document's environment: production for live, homologation for test. */
export const authorityFor = (
  environment: Environment
): Effect.Effect<TaxAuthority, never, TaxAuthorityLive | TaxAuthoritySandbox> =>
  environment === "live" ? TaxAuthorityLive : TaxAuthoritySandbox
