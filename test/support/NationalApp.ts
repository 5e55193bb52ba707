/**
 * The application with its test environment on the national protocol: the real `sefin` adapter
 * talking over mutual TLS to the protocol-faithful local authority (tools/local-authority/), live
 * keys on the simulator. For the end-to-end tests of issue 9.
 */
import { expect } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Schema } from "effect"
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
import { makePkcs12, type TestPkcs12 } from "./certificates.js"
import { createKey, registerOwner } from "./fixtures.js"
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
    readonly config?: Partial<AppConfigShape>
  }
) => {
  // One local authority per app: the same layer object in both places, so it is built once.
  const LocalAuthorityLive = Layer.effect(Authority, localAuthorityScoped({ environment: 2, ...options.authority }))
  const SandboxOnLocalAuthority = Layer.effect(
    TaxAuthorities,
    Effect.gen(function*() {
      const local = yield* Authority
      const sandbox = yield* makeSefinAuthority({
        environment: "test",
        system: "homologation",
        timeout: options.callTimeout,
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

/** A tenant that proved its CNPJ with an A1 certificate (uploaded by its owner), and a test key. */
export const certifiedTenant = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    const tenant = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: owner.session })
    const taxId = String(tenant.json?.["tax_id"]).replace(/\D/g, "")
    const p12: TestPkcs12 = makePkcs12({
      cn: `${label.toUpperCase()} LTDA:${taxId}`,
      cnpjOid: taxId,
      password: PASSWORD
    })
    const upload = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/credentials`, {
      token: owner.session,
      body: { pkcs12: Buffer.from(p12.pfx).toString("base64"), password: PASSWORD }
    })
    expect(upload.status, upload.text).toBe(201)
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
