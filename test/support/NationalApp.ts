/**
 * The application with its test environment on the national protocol: the real `sefin` adapter
 * talking over mutual TLS to the protocol-faithful local authority (tools/local-authority/), live
 * keys on the simulator. For the end-to-end tests of issue 9.
 */
import { expect } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { makeApp } from "../../src/App.js"
import { makeAuthority, withTimeout } from "../../src/authority/Authorities.js"
import { makeSefinAuthority } from "../../src/authority/sefin/SefinAdapter.js"
import { TaxAuthorities } from "../../src/authority/TaxAuthority.js"
import { AppConfig, type AppConfigShape } from "../../src/Config.js"
import { Document } from "../../src/domain/Document.js"
import {
  type LocalAuthority,
  type LocalAuthorityOptions,
  localAuthorityScoped
} from "../../tools/local-authority/LocalAuthority.js"
import { makePkcs12, testCa, type TestPkcs12, testRoot } from "./certificates.js"
import { createKey, registerOwner } from "./fixtures.js"
import { completeRegistration } from "./registration.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, type TestDatabase } from "./TestApp.js"

/** The local authority the app's test environment talks to, for a test to inspect. */
export class Authority extends Context.Service<Authority, LocalAuthority>()("test/LocalAuthority") {}

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(50), maxDelay: Duration.millis(200), window: Duration.seconds(30) }
}

/**
 * The app on `database`, its sandbox on a fresh local authority (`Authority` in the context too).
 * `callTimeout` is TAX_AUTHORITY_TIMEOUT; `authority` configures the local authority.
 */
export const nationalApp = (
  database: TestDatabase,
  options: {
    readonly callTimeout: Duration.Duration
    readonly authority?: LocalAuthorityOptions
    /** TAX_AUTHORITY_SANDBOX_DANFSE_SOURCE; default local. */
    readonly danfseSource?: "local" | "national"
    readonly config?: Partial<AppConfigShape>
  }
) => {
  // One local authority per app: the same layer object in both places, so it is built once.
  // It takes client certificates of the test hierarchy only, as the real one takes ICP-Brasil's; the
  // tenant's TLS client sends its certificate alone, so the intermediate is among the roots.
  const LocalAuthorityLive = Layer.effect(
    Authority,
    localAuthorityScoped({
      environment: 2,
      clientRoots: [testRoot().certPem, testCa().certPem],
      ...options.authority
    })
  )
  const SandboxOnLocalAuthority = Layer.effect(
    TaxAuthorities,
    Effect.gen(function*() {
      const local = yield* Authority
      const sandbox = yield* makeSefinAuthority({
        environment: "test",
        system: "homologation",
        timeout: options.callTimeout,
        danfseSource: options.danfseSource,
        endpoints: { sefinUrl: local.url, danfseUrl: local.danfseUrl, ca: local.caPem }
      })
      return TaxAuthorities.fromEach({
        live: yield* Effect.orDie(makeAuthority("live", (yield* AppConfig).authority.live)),
        test: withTimeout(sandbox, options.callTimeout)
      })
    })
  )
  return Layer.merge(
    makeApp(
      testConfig({ ...fast, ...options.config }),
      databaseLayer(database),
      SandboxOnLocalAuthority.pipe(Layer.provide(LocalAuthorityLive))
    ).pipe(Layer.provideMerge(httpServerTest)),
    LocalAuthorityLive
  )
}

const PASSWORD = "senha-do-certificado"
// Birth date (ddmmaaaa), CPF, NIS, RG and its issuer, zero-filled where absent, as ICP-Brasil lays them out.
const RESPONSIBLE = `0101198052998224725${"0".repeat(32)}`

/**
 * A tenant that proved its CNPJ with an A1 certificate (uploaded by its owner), with a complete
 * registration (also in the local authority's register when there is one), and a test key.
 */
export const certifiedTenant = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    const tenant = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: owner.session })
    const taxId = String(tenant.json?.["tax_id"]).replace(/\D/g, "")
    // Shaped like an e-CNPJ under the configured test root: the CNPJ in 2.16.76.1.3.3, the
    // responsible person's birth date and CPF in 2.16.76.1.3.4, the issuing CA in the bundle.
    const p12: TestPkcs12 = makePkcs12({
      cn: `${label.toUpperCase()} LTDA:${taxId}`,
      cnpjOid: taxId,
      responsibleOid: RESPONSIBLE,
      password: PASSWORD
    })
    const upload = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/credentials`, {
      token: owner.session,
      body: { pkcs12: Buffer.from(p12.pfx).toString("base64"), password: PASSWORD }
    })
    expect(upload.status, upload.text).toBe(201)
    expect(upload.json?.["verified_chain"]).toBe(true)
    // The national register (CNC) knows the provider as its registration declares it.
    const authority = yield* Effect.serviceOption(Authority)
    if (Option.isSome(authority)) {
      const address = completeRegistration.address!
      authority.value.registerTaxpayer(taxId, {
        name: completeRegistration.legal_name!,
        tradeName: completeRegistration.trade_name!,
        address: {
          street: address.street,
          number: address.number,
          district: address.district,
          municipalityCode: address.municipality_code,
          state: address.state,
          postalCode: address.postal_code
        }
      })
    }
    const key = yield* createKey(owner, "test")
    return { owner, taxId, p12, token: key.token }
  })

const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

/** Polls the document (key-scoped path) until its status is one of `until`. */
export const settle = (token: string, id: string, until: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const document = decodeDocument((yield* rawRequest("GET", `/v1/documents/${id}`, { token })).json)
      if (until.includes(document.status)) return document
      yield* Effect.sleep(Duration.millis(50))
    }
    return yield* Effect.die(`document ${id} did not reach ${until.join("/")}`)
  })
