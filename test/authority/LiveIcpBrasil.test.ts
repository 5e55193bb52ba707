/**
 * Production takes only ICP-Brasil certificates (SPEC §8 "Trust"): with the live environment on the
 * national protocol (the real `sefin` adapter over mutual TLS to a local authority standing for
 * production, tpAmb 1), a live document of a tenant whose only certificate does not chain to a
 * trusted root is refused before anything is taken (422 credential_required, saying why); once the
 * tenant uploads its e-CNPJ, the same document is authorized.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { makeApp } from "../../src/App.js"
import { makeAuthority, withTimeout } from "../../src/authority/Authorities.js"
import { makeSefinAuthority } from "../../src/authority/sefin/SefinAdapter.js"
import { TaxAuthorities } from "../../src/authority/TaxAuthority.js"
import { AppConfig } from "../../src/Config.js"
import { localAuthorityScoped } from "../../tools/local-authority/LocalAuthority.js"
import { expectError, field } from "../support/accounts.js"
import { makePkcs12, testCa, testRoot } from "../support/certificates.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { Authority, settle } from "../support/NationalApp.js"
import { consultingService } from "../support/samples.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, testDatabases } from "../support/TestApp.js"

const PFX_PASSWORD = "live-icp-pass"
const TIMEOUT = Duration.seconds(10)

const liveOnLocalAuthority = (database: (typeof testDatabases)[number]) => {
  const LocalAuthorityLive = Layer.effect(
    Authority,
    localAuthorityScoped({ environment: 1, clientRoots: [testRoot().certPem, testCa().certPem] })
  )
  const Authorities = Layer.effect(
    TaxAuthorities,
    Effect.gen(function*() {
      const local = yield* Authority
      const live = yield* makeSefinAuthority({
        environment: "live",
        system: "production",
        timeout: TIMEOUT,
        endpoints: { sefinUrl: local.url, danfseUrl: local.danfseUrl, ca: local.caPem }
      })
      return TaxAuthorities.fromEach({
        live: withTimeout(live, TIMEOUT),
        test: yield* Effect.orDie(makeAuthority("test", (yield* AppConfig).authority.test))
      })
    })
  ).pipe(Layer.provide(LocalAuthorityLive))
  // The same layer object in both places, so the local authority is built once.
  return Layer.merge(
    makeApp(
      testConfig({
        issuance: { concurrency: 2, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
        retry: { baseDelay: Duration.millis(50), maxDelay: Duration.millis(200), window: Duration.seconds(30) }
      }),
      databaseLayer(database),
      Authorities
    ).pipe(Layer.provideMerge(httpServerTest)),
    LocalAuthorityLive
  )
}

const invoice = {
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
}

for (const database of testDatabases) {
  layer(liveOnLocalAuthority(database), { timeout: 120_000, excludeTestServices: true })(
    `live documents need an ICP-Brasil certificate (${database})`,
    (it) => {
      it.effect("a tenant with only a certificate that does not chain gets 422; its e-CNPJ makes it issue", () =>
        Effect.gen(function*() {
          const owner = yield* registerOwner("live-icp")
          const tenant = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: owner.session })
          const taxId = String(field(tenant.json, "tax_id")).replace(/\D/g, "")
          const selfSigned = makePkcs12({
            cn: `LIVE ICP LTDA:${taxId}`,
            cnpjOid: taxId,
            password: PFX_PASSWORD,
            selfSigned: true
          })
          const genuine = makePkcs12({ cn: `LIVE ICP LTDA:${taxId}`, cnpjOid: taxId, password: PFX_PASSWORD })
          const upload = (pfx: Uint8Array) =>
            rawRequest("POST", `/v1/tenants/${owner.tenantId}/credentials`, {
              token: owner.session,
              body: { pkcs12: Buffer.from(pfx).toString("base64"), password: PFX_PASSWORD }
            })
          const key = yield* createKey(owner, "live")

          const stored = yield* upload(selfSigned.pfx)
          expect(stored.status, stored.text).toBe(201)
          expect(field(stored.json, "verified_chain")).toBe(false)
          const refused = yield* rawRequest("POST", "/v1/documents", { token: key.token, body: invoice })
          expectError(refused, 422, "credential_required")
          expect(String(field(refused.json, "message"))).toContain("ICP-Brasil")
          expect(String(field(refused.json, "message"))).toContain("verified_chain")
          const local = yield* Authority
          expect(local.counts().submitDps).toBe(0)

          const proven = yield* upload(genuine.pfx)
          expect(proven.status, proven.text).toBe(201)
          expect(field(proven.json, "verified_chain")).toBe(true)
          const accepted = yield* rawRequest("POST", "/v1/documents", { token: key.token, body: invoice })
          expect(accepted.status, accepted.text).toBe(202)
          const document = yield* settle(key.token, String(field(accepted.json, "id")), ["authorized", "rejected"])
          expect(document.status).toBe("authorized")
        }))
    }
  )
}
