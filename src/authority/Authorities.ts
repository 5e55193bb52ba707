/**
 * The tax authorities of both environments, as configured (AppConfig's `authority`): each the
 * built-in simulator (the default, so the service runs offline) or the national NFS-e system
 * (SEFIN Nacional), every call bounded by TAX_AUTHORITY_TIMEOUT and measured. A configuration
 * error stops the start: the service must not run against the wrong authority.
 */
import { Cause, Clock, Duration, Effect, Exit, Layer, Metric, Option, type Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { AppConfig, type AuthorityAdapterConfig, authorityEnvironments } from "../Config.js"
import { type CredentialVault } from "../credentials/CredentialVault.js"
import type { Environment } from "../domain/Principal.js"
import { authorityDuration, authorityRequests } from "../telemetry/Metrics.js"
import { GoodsAuthorities, type GoodsAuthority } from "./GoodsAuthority.js"
import { makeSefazAuthority } from "./sefaz/SefazAdapter.js"
import { makeSefinAuthority } from "./sefin/SefinAdapter.js"
import { makeGoodsSimulator } from "./simulator/GoodsSimulator.js"
import { makeSimulator } from "./simulator/Simulator.js"
import { AuthorityTimeout, TaxAuthorities, type TaxAuthority } from "./TaxAuthority.js"

/**
 * A call bounded by `timeout` and measured, in the port-level span of its operation. The inner call
 * is interrupted on timeout; what the authority did meanwhile is the worker's to find out with `lookup`.
 */
const boundedBy =
  (system: TaxAuthority["system"], timeout: Duration.Duration) =>
  <A, E extends { readonly _tag: string }>(
    operation: string,
    submissionId: string,
    call: Effect.Effect<A, E>
  ): Effect.Effect<A, E | AuthorityTimeout> =>
    Effect.gen(function*() {
      const labels = { system, operation }
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
      yield* Metric.update(Metric.withAttributes(authorityDuration, labels), elapsed / 1000)
      yield* Metric.update(Metric.withAttributes(authorityRequests, { ...labels, outcome }), 1)
      return yield* exit
    }).pipe(
      // The port-level span, whatever the target; it includes the time spent waiting for a timeout.
      Effect.withSpan(`TaxAuthority.${operation}`, {
        kind: "client",
        attributes: { "authority.system": system, "authority.submission_id": submissionId }
      })
    )

/** Every call of a service invoices' authority bounded by `timeout` and measured. */
export const withTimeout = (authority: TaxAuthority, timeout: Duration.Duration): TaxAuthority => {
  const bounded = boundedBy(authority.system, timeout)
  return {
    system: authority.system,
    submissionIdOf: authority.submissionIdOf,
    requirementsFor: authority.requirementsFor,
    cancellationRequirementsFor: authority.cancellationRequirementsFor,
    submit: (submission) => bounded("submit", submission.submissionId, authority.submit(submission)),
    lookup: (ref) => bounded("lookup", ref.submissionId, authority.lookup(ref)),
    cancel: (request) => bounded("cancel", request.submissionId, authority.cancel(request)),
    danfse: (request) => bounded("danfse", request.accessKey, authority.danfse(request)),
    analysisDecision: (request) =>
      bounded("analysisDecision", request.submissionId, authority.analysisDecision(request))
  }
}

/** Every call of a goods invoices' authority bounded by `timeout` and measured, like the service invoices'. */
export const withGoodsTimeout = (authority: GoodsAuthority, timeout: Duration.Duration): GoodsAuthority => {
  const bounded = boundedBy(authority.system, timeout)
  return {
    system: authority.system,
    submissionIdOf: authority.submissionIdOf,
    requirementsFor: authority.requirementsFor,
    submit: (submission) => bounded("goods.submit", submission.submissionId, authority.submit(submission)),
    // Offline means without the authority: signing alone, nothing to bound.
    issueOffline: authority.issueOffline,
    lookup: (submission) => bounded("goods.lookup", submission.submissionId, authority.lookup(submission)),
    cancel: (request) => bounded("goods.cancel", request.submissionId, authority.cancel(request)),
    correct: (request) => bounded("goods.correct", request.submissionId, authority.correct(request)),
    voidNumbers: (request) => bounded("goods.void", request.voidingId, authority.voidNumbers(request)),
    status: (probe) => bounded("goods.status", `${probe.state}-${probe.type}`, authority.status(probe)),
    danfe: authority.danfe
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
  environment: Environment,
  config: AuthorityAdapterConfig
): Effect.Effect<TaxAuthority, Error, SqlClient.SqlClient | CredentialVault | Scope.Scope> =>
  Effect.gen(function*() {
    const { system } = authorityEnvironments[environment]
    const authority = config.target === "sefin"
      ? yield* makeSefinAuthority({
        environment,
        system,
        timeout: config.timeout,
        danfseSource: config.sefin.danfseSource,
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

export const TaxAuthoritiesLive: Layer.Layer<TaxAuthorities, never, AppConfig | SqlClient.SqlClient | CredentialVault> =
  Layer.effect(
    TaxAuthorities,
    Effect.gen(function*() {
      const { authority } = yield* AppConfig
      return TaxAuthorities.fromEach({
        live: yield* makeAuthority("live", authority.live),
        test: yield* makeAuthority("test", authority.test)
      })
    }).pipe(Effect.orDie)
  )

/** The goods invoices' authority of one environment, as configured: the built-in simulator or the SEFAZ. */
export const makeGoodsAuthority = (
  environment: Environment,
  config: AuthorityAdapterConfig
): Effect.Effect<GoodsAuthority, Error, SqlClient.SqlClient | CredentialVault | Scope.Scope> =>
  Effect.gen(function*() {
    const { system, variablePrefix } = authorityEnvironments[environment]
    const authority = config.goods.target === "sefaz"
      ? yield* makeSefazAuthority({
        environment,
        system,
        timeout: config.timeout,
        ...(Option.isSome(config.goods.sefazUrl) ? { baseUrl: config.goods.sefazUrl.value } : {}),
        ...(Option.isSome(config.sefin.caFile)
          ? {
            ca: yield* readCaBundle(config.sefin.caFile.value, `${variablePrefix}_CA_FILE (or TAX_AUTHORITY_CA_FILE)`)
          }
          : {})
      })
      : yield* makeGoodsSimulator({
        system,
        latency: config.simulator.latency,
        failureRate: config.simulator.failureRate,
        timeoutAfter: config.timeout
      })
    yield* Effect.logInfo("goods authority adapter ready").pipe(
      Effect.annotateLogs({
        "authority.system": system,
        "authority.target": config.goods.target,
        ...(Option.isSome(config.goods.sefazUrl) ? { "authority.url": config.goods.sefazUrl.value } : {})
      })
    )
    return withGoodsTimeout(authority, config.timeout)
  })

export const GoodsAuthoritiesLive: Layer.Layer<
  GoodsAuthorities,
  never,
  AppConfig | SqlClient.SqlClient | CredentialVault
> = Layer.effect(
  GoodsAuthorities,
  Effect.gen(function*() {
    const { authority } = yield* AppConfig
    return GoodsAuthorities.fromEach({
      live: yield* makeGoodsAuthority("live", authority.live),
      test: yield* makeGoodsAuthority("test", authority.test)
    })
  }).pipe(Effect.orDie)
)
