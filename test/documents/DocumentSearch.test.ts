/**
 * Finding documents (SPEC §6's list filters): by the taker's CPF/CNPJ or a part of its name, by
 * NFS-e number and by DPS number (and series); each narrows within the tenant and environment the
 * list already keeps, pages like the unfiltered list, refuses malformed values with 400, and reads
 * through its own index.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeApp } from "../../src/App.js"
import type { AppConfigShape } from "../../src/Config.js"
import type { NewDocument } from "../../src/documents/Api.js"
import { Document } from "../../src/domain/Document.js"
import { expectError, field } from "../support/accounts.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { cnpj } from "../support/taxIds.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, testDatabases } from "../support/TestApp.js"

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) }
}

const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

const MARIA_CPF = "52998224725"

const invoice = (taker: { readonly tax_id: string; readonly name: string }, series?: string): NewDocument => ({
  type: "service_invoice",
  taker,
  ...(series === undefined ? {} : { series }),
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" }
})

const path = (tenantId: string) => `/v1/tenants/${tenantId}/documents`

const tenant = Effect.gen(function*() {
  const owner = yield* registerOwner("search")
  return {
    owner,
    tenantId: owner.tenantId,
    test: (yield* createKey(owner, "test")).token,
    live: (yield* createKey(owner, "live")).token
  }
})

/** Issues and waits for the authority's answer, so the NFS-e number is there. */
const issueAuthorized = (token: string, tenantId: string, body: NewDocument) =>
  Effect.gen(function*() {
    const accepted = yield* rawRequest("POST", path(tenantId), { token, body })
    expect(accepted.status, accepted.text).toBe(202)
    const id = String(field(accepted.json, "id"))
    for (let i = 0; i < 200; i++) {
      const document = decodeDocument((yield* rawRequest("GET", `${path(tenantId)}/${id}`, { token })).json)
      if (document.status === "authorized") return document
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${id} was not authorized`))
  })

const listIds = (token: string, tenantId: string, query: string) =>
  Effect.map(rawRequest("GET", `${path(tenantId)}?${query}`, { token }), (response) => {
    expect(response.status, `${query}: ${response.text}`).toBe(200)
    const data = field(response.json, "data")
    return Array.isArray(data) ? data.map((item) => String(field(item, "id"))) : []
  })

for (const database of testDatabases) {
  layer(
    makeApp(testConfig(fast), databaseLayer(database)).pipe(Layer.provideMerge(httpServerTest)),
    { timeout: 60_000, excludeTestServices: true }
  )(`document search (${database})`, (it) => {
    it.effect("finds by taker, NFS-e number and DPS number, within the tenant and environment, page by page", () =>
      Effect.gen(function*() {
        const t = yield* tenant
        const company = cnpj()
        const maria = { tax_id: MARIA_CPF, name: "Maria da Silva" }
        const joaoComercio = { tax_id: company, name: "João Comércio Ltda" }
        const percent = { tax_id: cnpj(), name: "100% Café_Bar" }
        const docs = []
        for (
          const body of [invoice(maria), invoice(joaoComercio), invoice(maria), invoice(percent), invoice(maria, "2")]
        ) {
          docs.push(yield* issueAuthorized(t.test, t.tenantId, body))
        }
        const [maria1, joao, maria2, percentDoc, mariaSeries2] = docs as [
          Document,
          Document,
          Document,
          Document,
          Document
        ]
        // The same taker in the other environment and in another tenant.
        const live = yield* issueAuthorized(t.live, t.tenantId, invoice(maria))
        const other = yield* tenant
        yield* issueAuthorized(other.test, other.tenantId, invoice(maria))
        const ids = (query: string) => listIds(t.test, t.tenantId, query)

        const mariaDocs = [mariaSeries2.id, maria2.id, maria1.id]
        expect(yield* ids(`taker_tax_id=${MARIA_CPF}`)).toEqual(mariaDocs)
        expect(yield* ids(`taker_tax_id=${encodeURIComponent("529.982.247-25")}`)).toEqual(mariaDocs)
        const punctuated = `${company.slice(0, 2)}.${company.slice(2, 5)}.${company.slice(5, 8)}/${
          company.slice(8, 12)
        }-${company.slice(12)}`
        expect(yield* ids(`taker_tax_id=${encodeURIComponent(punctuated)}`)).toEqual([joao.id])
        expect(yield* listIds(t.live, t.tenantId, `taker_tax_id=${MARIA_CPF}`)).toEqual([live.id])

        // A part of the name, whatever its case and accents; `%` and `_` are plain characters.
        expect(yield* ids("taker_name=joao")).toEqual([joao.id])
        expect(yield* ids(`taker_name=${encodeURIComponent("COMÉRCIO")}`)).toEqual([joao.id])
        expect(yield* ids("taker_name=silva")).toEqual(mariaDocs)
        expect(yield* ids(`taker_name=${encodeURIComponent(" cafe_b ")}`)).toEqual([percentDoc.id])
        expect(yield* ids(`taker_name=${encodeURIComponent("0%")}`)).toEqual([percentDoc.id])
        expect(yield* ids(`taker_name=${encodeURIComponent("a_d")}`)).toEqual([])
        expect(yield* ids("taker_name=nobody")).toEqual([])

        const nfseNumber = joao.authority!.nfse_number!
        expect(nfseNumber).toMatch(/^[1-9][0-9]*$/)
        expect(yield* ids(`nfse_number=${nfseNumber}`)).toEqual([joao.id])
        expect(yield* listIds(t.live, t.tenantId, `nfse_number=${nfseNumber}`)).toEqual([])

        // DPS numbers count per series: number 1 is in series 1 and 2.
        expect([maria1.number, mariaSeries2.number, mariaSeries2.series]).toEqual([1, 1, "2"])
        expect(yield* ids("number=1")).toEqual([mariaSeries2.id, maria1.id])
        expect(yield* ids("number=1&series=2")).toEqual([mariaSeries2.id])
        expect(yield* ids("series=2")).toEqual([mariaSeries2.id])
        expect(yield* ids(`number=${maria2.number}`)).toEqual([maria2.id])
        expect(yield* ids("number=99")).toEqual([])

        // Filters combine with each other and with the list's own.
        expect(yield* ids(`taker_tax_id=${MARIA_CPF}&number=1`)).toEqual([mariaSeries2.id, maria1.id])
        expect(yield* ids(`taker_name=maria&series=1`)).toEqual([maria2.id, maria1.id])
        expect(yield* ids(`taker_tax_id=${MARIA_CPF}&status=rejected`)).toEqual([])

        // Page by page, forwards and back.
        const first = yield* ids(`taker_tax_id=${MARIA_CPF}&limit=2`)
        expect(first).toEqual(mariaDocs.slice(0, 2))
        expect(yield* ids(`taker_tax_id=${MARIA_CPF}&limit=2&starting_after=${first[1]}`)).toEqual(mariaDocs.slice(2))
        expect(yield* ids(`taker_name=silva&limit=1&ending_before=${maria1.id}`)).toEqual([maria2.id])

        // A member's session reads both environments, or the one it names.
        const session = t.owner.session
        expect(yield* listIds(session, t.tenantId, `taker_tax_id=${MARIA_CPF}`)).toEqual([live.id, ...mariaDocs])
        expect(yield* listIds(session, t.tenantId, `taker_tax_id=${MARIA_CPF}&environment=live`)).toEqual([live.id])
      }))

    it.effect("refuses malformed search values with 400 invalid_request", () =>
      Effect.gen(function*() {
        const t = yield* tenant
        for (
          const query of [
            "taker_tax_id=123",
            "taker_tax_id=52998224726",
            "taker_tax_id=",
            "taker_name=",
            `taker_name=${"a".repeat(151)}`,
            "taker_name=%E2%80%AE",
            // An accent alone folds to nothing, which every name contains.
            "taker_name=%CC%81",
            "taker_name=%CC%81%CC%83",
            "nfse_number=abc",
            "nfse_number=0123",
            "nfse_number=12345678901234",
            "number=0",
            "number=-1",
            "number=1.5",
            "number=ten",
            "number=1234567890123456",
            "series=0",
            "series=abc"
          ]
        ) {
          const response = yield* rawRequest("GET", `${path(t.tenantId)}?${query}`, { token: t.test })
          expectError(response, 400, "invalid_request")
          expect(response.text, query).not.toContain("stack")
        }
      }))

    it.effect("reads each equality filter through its own index", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const plan = (condition: string) =>
          sql.withTransaction(Effect.gen(function*() {
            // Few rows make a sequential scan cheapest; what is asked is whether the index serves.
            yield* sql.unsafe("SET LOCAL enable_seqscan = off")
            const rows = yield* sql.unsafe<Record<string, string>>(
              `EXPLAIN SELECT * FROM documents WHERE tenant_id = 'ten_x' AND environment = 'test' AND ${condition} ` +
                "ORDER BY id DESC LIMIT 51"
            )
            return rows.map((row) => Object.values(row).join(" ")).join("\n")
          }))
        expect(yield* plan(`taker->>'tax_id' = '${MARIA_CPF}'`)).toContain("documents_by_taker_tax_id")
        expect(yield* plan("authority->>'nfse_number' = '17'")).toContain("documents_by_nfse_number")
        expect(yield* plan("number = 17")).toContain("documents_by_number")
      }))
  })
}
