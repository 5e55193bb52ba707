/**
 * Goods invoices through the API in tests: a tenant registered to sell goods (a São Paulo company
 * with its state registration and tax regime) and its test key, issuing and polling its documents.
 */
import { expect } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Schema } from "effect"
import { GoodsAuthoritiesLive, TaxAuthoritiesLive } from "../../src/authority/Authorities.js"
import { GoodsAuthorities, type GoodsAuthority } from "../../src/authority/GoodsAuthority.js"
import { AuthorityTimeout } from "../../src/authority/TaxAuthority.js"
import { AppConfigLive, type AppConfigShape } from "../../src/Config.js"
import { AnyDocument, type GoodsDocument } from "../../src/domain/GoodsDocument.js"
import { createKey, registerOwner } from "./fixtures.js"
import { completeRegistration } from "./registration.js"
import { rawRequest } from "./TestApp.js"

/** A goods test app's settings: no rate limit in the way, a quick worker, and the given retry schedule. */
export const goodsAppSettings = (retry: AppConfigShape["retry"]): Partial<AppConfigShape> => ({
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry
})

/** Retries tens of milliseconds apart within five seconds: a test's transient failures pass quickly. */
export const quickRetries = goodsAppSettings({
  baseDelay: Duration.millis(10),
  maxDelay: Duration.millis(50),
  window: Duration.seconds(5)
})

// A short call timeout: `simulate:timeout` keeps the caller waiting for all of it.
/** The built-in simulators of both authorities, their calls bounded by `timeout` (a Config duration). */
export const simulatorsTimingOutAfter = (timeout: string) => {
  const bounded = ConfigProvider.layer(ConfigProvider.fromUnknown({ TAX_AUTHORITY_TIMEOUT: timeout }))
  return {
    services: TaxAuthoritiesLive.pipe(Layer.provide(AppConfigLive), Layer.provide(bounded)),
    goods: GoodsAuthoritiesLive.pipe(Layer.provide(AppConfigLive), Layer.provide(bounded))
  }
}
const halfSecond = simulatorsTimingOutAfter("500 millis")
/** The built-in simulators of both authorities, their calls bounded by half a second. */
export const simulatorAuthorities = halfSecond.services
export const goodsSimulatorAuthorities = halfSecond.goods

export const decode = Schema.decodeUnknownSync(Schema.toCodecJson(AnyDocument))

/** The registration of a São Paulo company that sells goods: its state registration and tax regime. */
export const goodsRegistration = { ...completeRegistration, state_registration: "110042490114", crt: "normal" }

export const goodsTenant = Effect.gen(function*() {
  const owner = yield* registerOwner("goods")
  const patched = yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
    token: owner.session,
    body: { registration: goodsRegistration }
  })
  expect(patched.status, patched.text).toBe(200)
  const key = yield* createKey(owner, "test")
  return { owner, tenantId: owner.tenantId, token: key.token }
})

export const issue = (token: string, body: unknown, idempotencyKey?: string) =>
  rawRequest("POST", "/v1/documents", {
    token,
    body,
    headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
  })

export const accepted = (response: { readonly status: number; readonly text: string; readonly json: unknown }) => {
  expect(response.status, response.text).toBe(202)
  return decode(response.json)
}

export const asGoods = (document: AnyDocument): GoodsDocument => {
  if (document.type === "service_invoice") throw new Error(`document ${document.id} is a service invoice`)
  return document
}

/** Polls the document until its status is final. */
export const settled = (token: string, id: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 800; i++) {
      const response = yield* rawRequest("GET", `/v1/documents/${id}`, { token })
      const document = decode(response.json)
      if (["authorized", "rejected", "failed"].includes(document.status)) return asGoods(document)
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${id} did not settle`))
  })

/** Polls the document until it has `status` (and `holds`, when given). */
export const until = (
  token: string,
  id: string,
  status: string,
  holds: (document: GoodsDocument) => boolean = () => true
) =>
  Effect.gen(function*() {
    for (let i = 0; i < 800; i++) {
      const document = asGoods(decode((yield* rawRequest("GET", `/v1/documents/${id}`, { token })).json))
      if (document.status === status && holds(document)) return document
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${id} did not become ${status}`))
  })

/** Issues `body` (of any type) and waits for its authorization: a rejection or a failure fails the test. */
export const authorizedDocument = (token: string, body: unknown) =>
  Effect.gen(function*() {
    const id = accepted(yield* issue(token, body)).id
    for (let i = 0; i < 800; i++) {
      const document = decode((yield* rawRequest("GET", `/v1/documents/${id}`, { token })).json)
      if (document.status !== "queued" && document.status !== "submitting") {
        expect(document.status, JSON.stringify([document.rejection, document.last_error])).toBe("authorized")
        return document
      }
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${id} did not settle`))
  })

/** In a request's text: the simulator registers it, but its first answer is lost on the way back. */
export const LOST_ANSWER = "[resposta perdida]"

/**
 * A call of the goods port whose first answer is lost for each request `keyOf` names (registered by
 * the authority, a timeout for the caller); every later call answers.
 */
export const losingFirstAnswer = <R, A, E>(
  call: (request: R) => Effect.Effect<A, E>,
  keyOf: (request: R) => string | undefined
) => {
  const lost = new Set<string>()
  return (request: R): Effect.Effect<A, E | AuthorityTimeout> =>
    Effect.flatMap(call(request), (answer) => {
      const key = keyOf(request)
      if (key === undefined || lost.has(key)) return Effect.succeed(answer)
      lost.add(key)
      return Effect.fail(new AuthorityTimeout({ message: "no answer" }))
    })
}

/** The built-in goods simulator, each environment's changed by `change` (to lose answers, say). */
export const changedGoodsSimulator = (change: (authority: GoodsAuthority) => GoodsAuthority) =>
  Layer.effect(
    GoodsAuthorities,
    Effect.map(GoodsAuthorities, (simulator) => {
      const changed = { live: change(simulator.for("live")), test: change(simulator.for("test")) }
      return GoodsAuthorities.of({ for: (environment) => changed[environment] })
    })
  ).pipe(Layer.provide(GoodsAuthoritiesLive), Layer.provide(AppConfigLive))
