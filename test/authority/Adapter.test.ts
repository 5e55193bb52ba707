/**
 * The authority adapter: configuration checked at start-up, every call bounded by
 * TAX_AUTHORITY_TIMEOUT, and documents routed to the system of their environment.
 */
import { expect, layer } from "@effect/vitest"
import { Cause, ConfigProvider, Duration, Effect, Exit, Fiber, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { randomBytes } from "node:crypto"
import { TaxAuthoritiesLive } from "../../src/authority/Authorities.js"
import {
  type AlreadyAuthorized,
  type AuthorityRejected,
  type RequestNotSent,
  type Submission,
  TaxAuthorities,
  type TransientAuthorityError
} from "../../src/authority/TaxAuthority.js"
import { appConfig, AppConfigLive } from "../../src/Config.js"
import { CredentialVault } from "../../src/credentials/CredentialVault.js"
import { MigrationsLive } from "../../src/db/Database.js"
import { asId } from "../../src/domain/Ids.js"
import type { Environment } from "../../src/domain/Principal.js"
import { plainAmounts } from "../support/amounts.js"
import { registeredIssuer } from "../support/registration.js"
import { databaseLayer, testDatabases } from "../support/TestApp.js"

const NOW = Date.parse("2026-11-10T12:00:00Z")

const withEnv = (variables: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnv({ env: variables }))

/** Both authorities, configured by `variables` (the application's configuration reads them). */
const authoritiesWith = (variables: Record<string, string>) =>
  TaxAuthoritiesLive.pipe(Layer.provide(AppConfigLive), Layer.provide(withEnv(variables)))

const authorityFor = (environment: Environment) =>
  Effect.map(TaxAuthorities, (authorities) => authorities.for(environment))

const submission = (notes: string | null = null): Submission => ({
  tenantId: asId("tenant", "ten_adapter"),
  submissionId: `DPS-${randomBytes(8).toString("hex")}`,
  document: {
    environment: "test",
    issuer: registeredIssuer("11222333000181", "Acme Serviços Ltda"),
    series: "1",
    number: 7,
    issueDate: "2026-11-10",
    createdAt: new Date(NOW),
    taker: { tax_id: "52998224725", name: "Maria da Silva" },
    service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
    intermediary: null,
    tax: {},
    amounts: plainAmounts(10_000, "2.00"),
    notes
  }
})

type AuthorityError = AuthorityRejected | AlreadyAuthorized | RequestNotSent | TransientAuthorityError

const realPause = (millis = 5) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/** Builds a layer (and releases it) with the given environment variables, for its exit. */
// The simulator never opens a credential; the national system's adapter only does when it sends.
const NoVault = Layer.mock(CredentialVault, {
  sealMaterial: () => {
    throw new Error("not expected")
  }
})

const start = (variables: Record<string, string>) =>
  Effect.exit(Effect.scoped(Layer.build(authoritiesWith(variables).pipe(Layer.provide(NoVault))))).pipe(
    Effect.map(Exit.asVoid)
  )

const defectMessage = <A, E>(exit: Exit.Exit<A, E>): string =>
  Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "succeeded"

const systemsOf = (submissionId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly system: string }>`
      SELECT system FROM authority_sim_records WHERE submission_id = ${submissionId}`
    return rows.map((row) => row.system)
  })

for (const database of testDatabases) {
  const Database = Layer.mergeAll(Layer.provideMerge(MigrationsLive, databaseLayer(database)), NoVault)

  layer(Database, { timeout: 120_000 })(`authority adapter (${database})`, (it) => {
    it.effect("refuses an unknown target at start-up, naming the variable and the two targets", () =>
      Effect.gen(function*() {
        const attempts = [
          { variable: "TAX_AUTHORITY_LIVE_TARGET", exit: yield* start({ TAX_AUTHORITY_LIVE_TARGET: "national" }) },
          {
            variable: "TAX_AUTHORITY_SANDBOX_TARGET",
            exit: yield* start({ TAX_AUTHORITY_SANDBOX_TARGET: "SEFIN" })
          }
        ]
        for (const { exit, variable } of attempts) {
          expect(Exit.isFailure(exit)).toBe(true)
          const message = defectMessage(exit)
          expect(message).toContain(variable)
          expect(message).toContain(`"simulator"`)
          expect(message).toContain(`"sefin"`)
        }
        // Both fail to start when either side is misconfigured.
        const both = yield* start({ TAX_AUTHORITY_SANDBOX_TARGET: "national" })
        expect(Exit.isFailure(both)).toBe(true)
      }))

    it.effect("starts the national system's adapter with its official URLs, and refuses a URL that is not https or a CA file that is not PEM", () =>
      Effect.gen(function*() {
        expect(defectMessage(
          yield* start({
            TAX_AUTHORITY_LIVE_TARGET: "sefin",
            TAX_AUTHORITY_SANDBOX_TARGET: "sefin"
          })
        )).toBe("succeeded")
        const plainHttp = yield* start({
          TAX_AUTHORITY_SANDBOX_TARGET: "sefin",
          TAX_AUTHORITY_SANDBOX_URL: "http://sefin.producaorestrita.nfse.gov.br/SefinNacional"
        })
        expect(defectMessage(plainHttp)).toContain("TAX_AUTHORITY_SANDBOX_URL")
        const notPem = yield* start({
          TAX_AUTHORITY_LIVE_TARGET: "sefin",
          TAX_AUTHORITY_CA_FILE: new URL(import.meta.url).pathname
        })
        expect(defectMessage(notPem)).toContain("TAX_AUTHORITY_CA_FILE")
        const missing = yield* start({
          TAX_AUTHORITY_LIVE_TARGET: "sefin",
          TAX_AUTHORITY_CA_FILE: "/nonexistent/ca.pem"
        })
        expect(defectMessage(missing)).toContain("cannot be read")
        // Each environment may have its own bundle, which wins over the shared one: a test CA for
        // homologation need not be trusted for production.
        const sandboxOnly = yield* start({
          TAX_AUTHORITY_LIVE_TARGET: "sefin",
          TAX_AUTHORITY_SANDBOX_TARGET: "sefin",
          TAX_AUTHORITY_SANDBOX_CA_FILE: "/nonexistent/sandbox-ca.pem"
        })
        expect(defectMessage(sandboxOnly)).toContain("TAX_AUTHORITY_SANDBOX_CA_FILE")
        expect(defectMessage(sandboxOnly)).toContain("/nonexistent/sandbox-ca.pem")
        const liveOwn = yield* start({
          TAX_AUTHORITY_LIVE_TARGET: "sefin",
          TAX_AUTHORITY_CA_FILE: "/nonexistent/shared.pem",
          TAX_AUTHORITY_LIVE_CA_FILE: "/nonexistent/live.pem"
        })
        expect(defectMessage(liveOwn)).toContain("/nonexistent/live.pem")
      }))

    it.effect("reads where a sefin environment's DANFSe comes from: local by default, national on request, nothing else", () =>
      Effect.gen(function*() {
        const sourcesWith = (env: Record<string, string>) =>
          Effect.map(
            Effect.orDie(appConfig.parse(ConfigProvider.fromEnv({ env }))),
            (config) => [config.authority.live.sefin.danfseSource, config.authority.test.sefin.danfseSource]
          )
        expect(yield* sourcesWith({})).toEqual(["local", "local"])
        expect(yield* sourcesWith({ TAX_AUTHORITY_SANDBOX_DANFSE_SOURCE: "national" })).toEqual(["local", "national"])
        expect(yield* sourcesWith({ TAX_AUTHORITY_LIVE_DANFSE_SOURCE: "national" })).toEqual(["national", "local"])
        const unknown = yield* start({ TAX_AUTHORITY_LIVE_TARGET: "sefin", TAX_AUTHORITY_LIVE_DANFSE_SOURCE: "adn" })
        expect(defectMessage(unknown)).toContain("TAX_AUTHORITY_LIVE_DANFSE_SOURCE")
        expect(defectMessage(unknown)).toContain(`"local"`)
        expect(defectMessage(unknown)).toContain(`"national"`)
        expect(defectMessage(
          yield* start({ TAX_AUTHORITY_SANDBOX_TARGET: "sefin", TAX_AUTHORITY_SANDBOX_DANFSE_SOURCE: "national" })
        )).toBe("succeeded")
      }))

    it.effect("refuses a failure rate outside 0..1 and a malformed timeout", () =>
      Effect.gen(function*() {
        const invalid: ReadonlyArray<Record<string, string>> = [
          { TAX_AUTHORITY_SIMULATOR_FAILURE_RATE: "1.5" },
          { TAX_AUTHORITY_SIMULATOR_FAILURE_RATE: "-0.1" },
          { TAX_AUTHORITY_TIMEOUT: "soon" },
          { TAX_AUTHORITY_TIMEOUT: "0 millis" }
        ]
        for (const variables of invalid) {
          const exit = yield* start(variables)
          expect(Exit.isFailure(exit), JSON.stringify(variables)).toBe(true)
          expect(defectMessage(exit)).toContain(Object.keys(variables)[0]!)
        }
        // The defaults, and the one supported target spelled out, start.
        const ok = yield* start({
          TAX_AUTHORITY_LIVE_TARGET: "simulator",
          TAX_AUTHORITY_SANDBOX_TARGET: "simulator"
        })
        expect(defectMessage(ok)).toBe("succeeded")
      }))

    it.effect("routes live to production and test to homologation", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const live = yield* authorityFor("live")
        const sandbox = yield* authorityFor("test")
        expect(live.system).toBe("production")
        expect(sandbox.system).toBe("homologation")

        const liveSubmission = submission()
        const liveAuthorization = yield* live.submit(liveSubmission)
        // Production protocols start with tpAmb 1, homologation ones with 2.
        expect(liveAuthorization.protocol.startsWith("1")).toBe(true)
        expect(yield* systemsOf(liveSubmission.submissionId)).toEqual(["production"])

        const testSubmission = submission()
        const testAuthorization = yield* sandbox.submit(testSubmission)
        expect(testAuthorization.protocol.startsWith("2")).toBe(true)
        expect(yield* systemsOf(testSubmission.submissionId)).toEqual(["homologation"])
        expect(Option.isNone(yield* live.lookup(testSubmission))).toBe(true)
      }).pipe(Effect.provide(authoritiesWith({}))))

    it.effect("bounds every call by TAX_AUTHORITY_TIMEOUT, even when the authority hangs", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* authorityFor("test")
        const sub = submission()
        const calls: ReadonlyArray<Effect.Effect<unknown, AuthorityError>> = [
          authority.submit(sub),
          authority.lookup(sub),
          authority.cancel({
            tenantId: sub.tenantId,
            submissionId: sub.submissionId,
            environment: "test",
            issuerTaxId: "11222333000181",
            accessKey: "1".repeat(50),
            reasonCode: "other",
            reason: "x".repeat(20),
            requestedAt: new Date(NOW)
          })
        ]
        for (const call of calls) {
          const fiber = yield* Effect.forkChild(call)
          yield* realPause(20)
          yield* TestClock.adjust(Duration.millis(1_999))
          yield* realPause(20)
          expect(fiber.pollUnsafe() === undefined).toBe(true)
          yield* TestClock.adjust(Duration.millis(1))
          const error = yield* Effect.flip(Fiber.join(fiber))
          expect(error._tag).toBe("AuthorityTimeout")
          expect(error.message).toContain("2s")
        }
        // The request never got past the (simulated) network: nothing was recorded.
        expect(yield* systemsOf(sub.submissionId)).toEqual([])
      }).pipe(
        Effect.provide(
          authoritiesWith({ TAX_AUTHORITY_SIMULATOR_LATENCY: "1 hour", TAX_AUTHORITY_TIMEOUT: "2 seconds" })
        )
      ))

    it.effect("a simulate:timeout submission ends in AuthorityTimeout at the configured timeout, then reconciles", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const authority = yield* authorityFor("live")
        const sub = submission("simulate:timeout")
        const fiber = yield* Effect.forkChild(authority.submit(sub))
        for (let i = 0; i < 400 && (yield* systemsOf(sub.submissionId)).length === 0; i++) yield* realPause()
        yield* TestClock.adjust(Duration.seconds(3))
        const error = yield* Effect.flip(Fiber.join(fiber))
        expect(error._tag).toBe("AuthorityTimeout")
        const found = yield* authority.lookup(sub)
        expect(Option.map(found, (record) => record.status)).toEqual(Option.some("authorized"))
        expect((yield* Effect.flip(authority.submit(sub)))._tag).toBe("AlreadyAuthorized")
      }).pipe(Effect.provide(authoritiesWith({ TAX_AUTHORITY_TIMEOUT: "3 seconds" }))))
  })
}
