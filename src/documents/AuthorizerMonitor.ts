/**
 * The state authorizers' status, asked every `SEFAZ_STATUS_CHECK_INTERVAL`: for each state with a
 * goods emitter, its NF-e and its NFC-e authorizer in each environment, over that emitter's
 * certificate (the authorizers take no call without one; the answer does not depend on whose). The
 * instances share the asking through the database (AuthorizerStatusRepo's `claim`): each authorizer is asked
 * once per interval however many instances run, since the authorities refuse a client that asks too
 * often (656, consumo indevido). The answers go to `/readyz` as details and to the
 * `etd.authority.authorizer.in_operation` gauge; an authorizer that is down does not make the
 * instance unready, as its notes wait in the queue. An environment whose goods go to the simulator
 * has nothing to ask.
 */
import { type Duration, Effect, Layer, Metric, Option } from "effect"
import { type AuthorizerProbe, GoodsAuthorities, type GoodsAuthority } from "../authority/GoodsAuthority.js"
import { AppConfig } from "../Config.js"
import type { AuthorizerStatus } from "../domain/AuthorizerStatus.js"
import { GoodsInvoiceType } from "../domain/GoodsInvoice.js"
import type { Environment } from "../domain/Principal.js"
import { now } from "../domain/Time.js"
import { runPeriodically } from "../runtime/Periodic.js"
import { Readiness } from "../runtime/Readiness.js"
import { authorizerInOperation } from "../telemetry/Metrics.js"
import { AuthorizerStatusRepo } from "./AuthorizerStatusRepo.js"

const ENVIRONMENTS: ReadonlyArray<Environment> = ["live", "test"]

type Answer = Pick<AuthorizerStatus, "status" | "code" | "reason">

/** One authorizer's answer, or why there is none; None when there is nothing to ask (the simulator). */
const ask = (authority: GoodsAuthority, environment: Environment, probe: AuthorizerProbe) =>
  Effect.gen(function*() {
    // Why there is no answer goes to the log only: `/readyz` is public, and the failure names hosts and tenants.
    const unanswered = (status: "no_certificate" | "unreachable") => (error: { readonly message: string }) =>
      Effect.as(
        Effect.logWarning("a state authorizer could not be asked its status").pipe(
          Effect.annotateLogs({ environment, state: probe.state, type: probe.type, status, reason: error.message })
        ),
        Option.some<Answer>({ status, code: null, reason: null })
      )
    const answer = yield* authority.status(probe).pipe(
      Effect.map(Option.map((found): Answer => ({
        status: found.inOperation ? "in_operation" : "paused",
        code: found.code,
        reason: found.reason
      }))),
      Effect.catchTags({
        RequestNotSent: unanswered("no_certificate"),
        AuthorityUnavailable: unanswered("unreachable"),
        AuthorityTimeout: unanswered("unreachable")
      })
    )
    if (Option.isNone(answer)) return Option.none<AuthorizerStatus>()
    const at = yield* now
    return Option.some<AuthorizerStatus>({
      environment,
      state: probe.state,
      type: probe.type,
      ...answer.value,
      checked_at: at
    })
  })

/**
 * One round: each authorizer no instance asked within `every` is asked (a few at a time) and its
 * answer kept; then every answer kept, whichever instance had it, is reported. Returns them.
 */
export const makeAuthorizerSweep = (every: Duration.Duration) =>
  Effect.gen(function*() {
    const repo = yield* AuthorizerStatusRepo
    const authorities = yield* GoodsAuthorities
    const readiness = yield* Readiness
    let reported: ReadonlyArray<AuthorizerStatus> = []
    const gaugeOf = (status: AuthorizerStatus) =>
      Metric.withAttributes(authorizerInOperation, {
        environment: status.environment,
        state: status.state,
        type: status.type
      })

    return Effect.gen(function*() {
      const probes = (yield* repo.onePerState).flatMap((emitter) =>
        ENVIRONMENTS.flatMap((environment) =>
          GoodsInvoiceType.literals.map((type) => ({ environment, probe: { ...emitter, type } }))
        )
      )
      yield* Effect.forEach(probes, ({ environment, probe }) =>
        Effect.gen(function*() {
          if (!(yield* repo.claim({ environment, ...probe }, yield* now, every))) return
          const answer = yield* ask(authorities.for(environment), environment, probe)
          if (Option.isSome(answer)) yield* repo.record(answer.value)
        }), { concurrency: 8, discard: true })
      // Only the states watched now: one whose emitters left keeps its row, not its series.
      const watched = new Set(probes.map(({ environment, probe }) => `${environment} ${probe.state} ${probe.type}`))
      const key = (status: AuthorizerStatus) => `${status.environment} ${status.state} ${status.type}`
      const statuses = (yield* repo.answered).filter((status) => watched.has(key(status)))
      yield* readiness.reportAuthorizers(statuses)
      for (const status of statuses) yield* Metric.update(gaugeOf(status), status.status === "in_operation" ? 1 : 0)
      const shown = new Set(statuses.map(key))
      for (const gone of reported) if (!shown.has(key(gone))) yield* Metric.remove(gaugeOf(gone))
      reported = statuses
      return statuses
    })
  })

/** The monitor: one round at start-up, then one per `SEFAZ_STATUS_CHECK_INTERVAL`. */
export const AuthorizerMonitorLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const every = config.authorizerStatusCheckInterval
    yield* runPeriodically("authorizer-status-monitor", every, yield* makeAuthorizerSweep(every))
  })
).pipe(Layer.provide(AuthorizerStatusRepo.layer))
