/**
 * The tenant's Simples Nacional option reaches the national system (issue 9): set with
 * `PATCH /v1/tenants/{id}`, it decides what every DPS the `sefin` adapter sends declares, checked on
 * what the protocol-faithful local authority received over mutual TLS. ME/EPP: `opSimpNac` 3 with
 * `regApTribSN` and the ISS rate (`pAliq`); MEI: `opSimpNac` 2 and `indTotTrib` 0, no rate; outside
 * the Simples (the default): `opSimpNac` 1, no rate, the approximate taxes. A change applies to the
 * next document sent.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeApp } from "../../src/App.js"
import { TaxAuthorityLiveLayer, withTimeout } from "../../src/authority/Adapter.js"
import { type LocalAuthority, localAuthorityScoped } from "../../src/authority/local/LocalAuthority.js"
import { makeSefinAuthority } from "../../src/authority/SefinAdapter.js"
import { TaxAuthoritySandbox } from "../../src/authority/TaxAuthority.js"
import { writePatchedSchemas } from "../../src/authority/Xsd.js"
import type { AppConfigShape } from "../../src/Config.js"
import { Document } from "../../src/domain/Document.js"
import type { SimplesNacional } from "../../src/domain/Tenant.js"
import { makePkcs12 } from "../support/certificates.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { databaseLayer, httpServerTest, rawRequest, type TestDatabase, testConfig, testDatabases } from "../support/TestApp.js"

const hasXmllint = (() => {
  try {
    execFileSync("sh", ["-c", "command -v xmllint"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

const CALL_TIMEOUT = Duration.seconds(5)

class Authority extends Context.Service<Authority, LocalAuthority>()("test/TaxRegimeLocalAuthority") {}

// One local authority per app: the same layer object in both places, so it is built once.
const LocalAuthorityLive = Layer.effect(Authority, localAuthorityScoped({ environment: 2 }))

/** Test keys' documents go to the local authority through the real `sefin` adapter. */
const SandboxOnLocalAuthority = Layer.effect(
  TaxAuthoritySandbox,
  Effect.gen(function*() {
    const local = yield* Authority
    const authority = yield* makeSefinAuthority({
      environment: "test",
      system: "homologation",
      timeout: CALL_TIMEOUT,
      endpoints: { sefinUrl: local.url, danfseUrl: local.danfseUrl, ca: local.caPem }
    })
    return withTimeout(authority, CALL_TIMEOUT)
  })
)

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(50), maxDelay: Duration.millis(200), window: Duration.seconds(30) }
}

const appOn = (database: TestDatabase) =>
  Layer.merge(
    makeApp(
      testConfig(fast),
      databaseLayer(database),
      Layer.merge(TaxAuthorityLiveLayer, SandboxOnLocalAuthority).pipe(Layer.provide(LocalAuthorityLive))
    ).pipe(Layer.provideMerge(httpServerTest)),
    LocalAuthorityLive
  )

const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

const PASSWORD = "senha-do-certificado"

/** A tenant that proved its CNPJ with an A1 certificate, with a test key. */
const certifiedTenant = (label: string) =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    const tenant = yield* rawRequest("GET", `/v1/tenants/${owner.tenantId}`, { token: owner.session })
    const taxId = String(tenant.json?.["tax_id"]).replace(/\D/g, "")
    const p12 = makePkcs12({ cn: `${label.toUpperCase()} LTDA:${taxId}`, cnpjOid: taxId, password: PASSWORD })
    const upload = yield* rawRequest("POST", `/v1/tenants/${owner.tenantId}/credentials`, {
      token: owner.session,
      body: { pkcs12: Buffer.from(p12.pfx).toString("base64"), password: PASSWORD }
    })
    expect(upload.status, upload.text).toBe(201)
    const key = yield* createKey(owner, "test")
    return { owner, taxId, token: key.token }
  })

const setRegime = (owner: { session: string; tenantId: string }, option: SimplesNacional) =>
  Effect.gen(function*() {
    const response = yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
      token: owner.session,
      body: { simples_nacional: option }
    })
    expect(response.status, response.text).toBe(200)
    expect(response.json?.["simples_nacional"]).toBe(option)
  })

const invoice = {
  type: "service_invoice",
  taker: { tax_id: "529.982.247-25", name: "Maria José da Conceição" },
  service: {
    code: "010101",
    nbs_code: "115013000",
    description: "Análise e desenvolvimento de sistemas",
    municipality_code: "3550308"
  },
  amounts: { services: 150000, deductions: 0, iss_rate: "2.00" }
}

/** Issues one document with the test key and waits for it to be authorized; its number and the DPS the authority received. */
const issue = (tenant: { taxId: string; token: string }) =>
  Effect.gen(function*() {
    const local = yield* Authority
    const accepted = yield* rawRequest("POST", "/v1/documents", { token: tenant.token, body: invoice })
    expect(accepted.status, accepted.text).toBe(202)
    const id = String(accepted.json?.["id"])
    let document = decodeDocument(accepted.json)
    for (let i = 0; i < 600 && !["authorized", "rejected", "failed"].includes(document.status); i++) {
      yield* Effect.sleep(Duration.millis(50))
      document = decodeDocument((yield* rawRequest("GET", `/v1/documents/${id}`, { token: tenant.token })).json)
    }
    expect(document.status, JSON.stringify(document.rejection ?? document.last_error)).toBe("authorized")
    // The DPS id ends with the series (5 digits) and the number (15): this document's, from this issuer.
    const suffix = `${tenant.taxId}00001${String(document.number).padStart(15, "0")}"`
    const sent = local.received.filter((r) => r.operation === "submitDps" && r.clientTaxId === tenant.taxId && r.xml?.includes(suffix))
    expect(sent).toHaveLength(1)
    const nfse = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: tenant.token })
    expect(nfse.status).toBe(200)
    return { dps: sent[0]!.xml!, nfse: nfse.text }
  })

/** What a DPS declares about the issuer's regime, the ISS rate and the approximate taxes. */
const regimeOf = (dps: string) => ({
  regTrib: /<regTrib>(.*?)<\/regTrib>/.exec(dps)?.[1],
  pAliq: /<pAliq>(.*?)<\/pAliq>/.exec(dps)?.[1],
  totTrib: /<totTrib>(.*?)<\/totTrib>/.exec(dps)?.[1]
})

/** Checks the DPS against the official schema with xmllint, a validator we did not write. */
const expectSchemaValid = (dps: string) => {
  if (!hasXmllint) return
  const dir = mkdtempSync(join(tmpdir(), "etd-regime-"))
  writeFileSync(join(dir, "dps.xml"), dps)
  const schemas = writePatchedSchemas(join(dir, "xsd"))
  execFileSync("xmllint", ["--noout", "--schema", join(schemas, "DPS_v1.01.xsd"), join(dir, "dps.xml")], { stdio: "pipe" })
}

for (const database of testDatabases) {
  layer(appOn(database), { timeout: 300_000, excludeTestServices: true })(`the tenant's Simples Nacional option in the DPS (${database})`, (it) => {
    it.effect("ME/EPP: opSimpNac 3, regApTribSN 1, the ISS rate in pAliq and the approximate taxes", () =>
      Effect.gen(function*() {
        const tenant = yield* certifiedTenant("meepp")
        yield* setRegime(tenant.owner, "me_epp")
        const { dps, nfse } = yield* issue(tenant)
        expect(regimeOf(dps)).toEqual({
          regTrib: "<opSimpNac>3</opSimpNac><regApTribSN>1</regApTribSN><regEspTrib>0</regEspTrib>",
          pAliq: "2.00",
          totTrib: "<vTotTrib><vTotTribFed>0.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>30.00</vTotTribMun></vTotTrib>"
        })
        // The note the authority issued embeds that declaration.
        expect(nfse).toContain("<opSimpNac>3</opSimpNac>")
        expectSchemaValid(dps)
      }))

    it.effect("MEI: opSimpNac 2 and indTotTrib 0, no ISS rate", () =>
      Effect.gen(function*() {
        const tenant = yield* certifiedTenant("mei")
        yield* setRegime(tenant.owner, "mei")
        const { dps, nfse } = yield* issue(tenant)
        expect(regimeOf(dps)).toEqual({
          regTrib: "<opSimpNac>2</opSimpNac><regEspTrib>0</regEspTrib>",
          pAliq: undefined,
          totTrib: "<indTotTrib>0</indTotTrib>"
        })
        expect(nfse).toContain("<opSimpNac>2</opSimpNac>")
        expectSchemaValid(dps)
      }))

    it.effect("outside the Simples by default (opSimpNac 1, no rate); a change applies to the next document", () =>
      Effect.gen(function*() {
        const tenant = yield* certifiedTenant("regime")
        const first = yield* issue(tenant)
        expect(regimeOf(first.dps)).toEqual({
          regTrib: "<opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib>",
          pAliq: undefined,
          totTrib: "<vTotTrib><vTotTribFed>0.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>30.00</vTotTribMun></vTotTrib>"
        })

        yield* setRegime(tenant.owner, "me_epp")
        const second = yield* issue(tenant)
        expect(regimeOf(second.dps).regTrib).toBe("<opSimpNac>3</opSimpNac><regApTribSN>1</regApTribSN><regEspTrib>0</regEspTrib>")
        expect(regimeOf(second.dps).pAliq).toBe("2.00")

        yield* setRegime(tenant.owner, "not_opted")
        const third = yield* issue(tenant)
        expect(regimeOf(third.dps).regTrib).toBe("<opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib>")
        expect(regimeOf(third.dps).pAliq).toBeUndefined()
      }))
  })
}
