/**
 * Documents over HTTP (SPEC §2, §4, §6, §7): acceptance and amounts, gap-free numbering,
 * validation, the simulator's magic values through the background pipeline, cancellation, lists,
 * reference uniqueness, Idempotency-Key, the live quota, suspension, environment and tenant
 * isolation, scopes, and the key-scoped shorthand `/v1/documents…`.
 */
import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeApp } from "../../src/App.js"
import { TaxAuthoritiesLive } from "../../src/authority/Authorities.js"
import { AppConfigLive, type AppConfigShape } from "../../src/Config.js"
import { backfillAmounts } from "../../src/db/migrations/0013_document_tax_content.js"
import type { NewDocument } from "../../src/documents/Api.js"
import { Document } from "../../src/domain/Document.js"
import { allScopes, type Environment, type Scope } from "../../src/domain/Principal.js"
import { expectError, field } from "../support/accounts.js"
import { cnpj, createKey, registerOwner } from "../support/fixtures.js"
import { consultingService } from "../support/samples.js"
import { asServiceDocument } from "../support/serviceDocument.js"
import {
  client,
  databaseLayer,
  httpServerTest,
  rawRequest,
  testConfig,
  type TestDatabase,
  testDatabases
} from "../support/TestApp.js"

type ApiClient = Effect.Success<ReturnType<typeof client>>

const DOC_ID = /^doc_[0-9a-hjkmnp-tv-z]{26}$/
/** Well-formed, but no document has it. */
const UNKNOWN_DOC_ID = `doc_${"0".repeat(26)}`
const FINAL: ReadonlySet<Document["status"]> = new Set(["authorized", "rejected", "failed", "cancelled"])
const VALID_REASON = { reason_code: "issue_error", reason: "Wrong amount on the invoice, reissuing." } as const

/** Fast background work: workers poll every 20 ms and retries back off in milliseconds. */
const fast: Partial<AppConfigShape> = {
  // Many registrations, keys and polls per file.
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(10), maxDelay: Duration.millis(50), window: Duration.seconds(5) }
}

/**
 * The default authorities (the built-in simulator) with a short call timeout: `simulate:timeout`
 * keeps the caller waiting for the whole timeout (10 s by default) before reconciliation starts.
 */
const authorities = TaxAuthoritiesLive.pipe(
  Layer.provide(AppConfigLive),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ TAX_AUTHORITY_TIMEOUT: "500 millis" })))
)

const makeDocumentsApp = (database: TestDatabase, overrides: Partial<AppConfigShape>) =>
  makeApp(testConfig(overrides), databaseLayer(database), authorities).pipe(Layer.provideMerge(httpServerTest))

// Responses are JSON: decoded with the document's JSON codec, as the typed client does.
const decodeDocument = Schema.decodeUnknownSync(Schema.toCodecJson(Document))

/** A valid service invoice; `overrides` replace whole top-level fields. */
const invoice = (overrides: Partial<NewDocument> = {}): NewDocument => ({
  type: "service_invoice",
  taker: { tax_id: "52998224725", name: "Maria da Silva" },
  service: consultingService,
  amounts: { services: 150000, iss_rate: "2.00" },
  ...overrides
})

interface Caller {
  readonly token: string
  readonly keyId: string
  readonly api: ApiClient
}

const caller = (
  owner: { session: string; tenantId: string },
  environment: Environment,
  scopes: ReadonlyArray<Scope> = allScopes
) =>
  Effect.gen(function*() {
    const created = yield* createKey(owner, environment, scopes)
    return { token: created.token, keyId: created.api_key.id, api: yield* client(created.token) } satisfies Caller
  })

/** A new tenant with an all-scopes test key and live key. */
const tenant = (label = "docs") =>
  Effect.gen(function*() {
    const owner = yield* registerOwner(label)
    return {
      owner,
      tenantId: owner.tenantId,
      test: yield* caller(owner, "test"),
      live: yield* caller(owner, "live")
    }
  })

const documentsPath = (
  tenantId: string | null
) => (tenantId === null ? "/v1/documents" : `/v1/tenants/${tenantId}/documents`)

/** POST issue as a raw request (status and exact body); `tenantId: null` uses the shorthand. */
const issueRaw = (token: string, tenantId: string | null, body: unknown, idempotencyKey?: string) =>
  rawRequest("POST", documentsPath(tenantId), {
    token,
    body,
    headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }
  })

/** Issues through the typed client and checks it is accepted. */
const issue = (who: Caller, tenantId: string, body: NewDocument = invoice()) =>
  Effect.map(who.api.documents.issue({ params: { tenantId }, payload: body, headers: {} }), asServiceDocument)

const accepted = (response: { readonly status: number; readonly text: string; readonly json: unknown }) => {
  expect(response.status, response.text).toBe(202)
  return decodeDocument(response.json)
}

/** Polls GET until `done` holds (by default: a final status), bounded at 200 × 25 ms. */
const waitFor = (
  who: Caller,
  tenantId: string,
  docId: string,
  done: (document: Document) => boolean = (document) => FINAL.has(document.status)
) =>
  Effect.gen(function*() {
    let last: Document | undefined
    for (let i = 0; i < 200; i++) {
      last = asServiceDocument(yield* who.api.documents.get({ params: { tenantId, docId } }))
      if (done(last)) return last
      yield* Effect.sleep(Duration.millis(25))
    }
    return yield* Effect.die(new Error(`document ${docId} did not settle; last status ${last?.status}`))
  })

/** Issues and waits until the authority has answered. */
const issueSettled = (who: Caller, tenantId: string, body: NewDocument = invoice()) =>
  Effect.flatMap(issue(who, tenantId, body), (document) => waitFor(who, tenantId, document.id))

const listIds = (who: Caller, tenantId: string | null, query = "") =>
  Effect.map(rawRequest("GET", `${documentsPath(tenantId)}${query}`, { token: who.token }), (response) => {
    expect(response.status, response.text).toBe(200)
    const data = field(response.json, "data")
    return Array.isArray(data) ? data.map((item) => String(field(item, "id"))) : []
  })

const issuePaths = (response: { readonly json: unknown }) => {
  const issues = field(response.json, "issues")
  return Array.isArray(issues)
    ? issues.map((issue: unknown) => {
      const path = field(issue, "path")
      return Array.isArray(path) ? path.join(".") : String(path)
    })
    : []
}

for (const database of testDatabases) {
  layer(makeDocumentsApp(database, fast), { timeout: 60_000, excludeTestServices: true })(
    `documents (${database})`,
    (it) => {
      it.effect("issues a document: 202 queued with its number and amounts, then authorized by the authority", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const before = Date.now()
          const response = yield* issueRaw(
            t.test.token,
            t.tenantId,
            invoice({
              reference: "order-1",
              taker: { tax_id: "529.982.247-25", name: "Maria da Silva", email: "maria@example.com" }
            })
          )
          const queued = accepted(response)
          expect(queued.id).toMatch(DOC_ID)
          expect(queued).toMatchObject({
            object: "document",
            environment: "test",
            type: "service_invoice",
            status: "queued",
            reference: "order-1",
            series: "1",
            number: 1,
            currency: "BRL",
            notes: null,
            authority: null,
            rejection: null,
            cancellation: null,
            attempts: 0,
            last_error: null
          })
          // Tax ids are stored normalized.
          expect(queued.taker).toEqual({ tax_id: "52998224725", name: "Maria da Silva", email: "maria@example.com" })
          // 2 % of R$ 1.500,00 is R$ 30,00; the total is the service value.
          expect(queued.amounts).toEqual({
            source: "computed",
            services: 150000,
            unconditional_discount: 0,
            conditional_discount: 0,
            deductions: 0,
            benefit_reduction: 0,
            base: 150000,
            iss_rate: "2.00",
            iss_amount: 3000,
            iss_withheld: 0,
            federal_withheld: 0,
            total_withheld: 0,
            net: 150000,
            total: 150000
          })
          expect(Math.abs(queued.created_at.getTime() - before)).toBeLessThan(10_000)
          // The competence date of a Brazilian invoice: today in Brasília time, not in UTC.
          expect(queued.issue_date).toBe(
            new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(queued.created_at)
          )
          expect(field(response.json, "created_at")).toBe(queued.created_at.toISOString())

          const done = yield* waitFor(t.test, t.tenantId, queued.id)
          expect(done.status).toBe("authorized")
          expect(done.authority?.access_key).toMatch(/^[0-9]{50}$/)
          expect(done.authority?.protocol).toMatch(/\S/)
          expect(done.authority?.authorized_at).toBeInstanceOf(Date)
          expect(done.attempts).toBeGreaterThanOrEqual(1)
          expect(done.rejection).toBeNull()
          // Authorized, the document shows the note's own figures, which agree with the computation.
          expect({ number: done.number, series: done.series, amounts: done.amounts }).toEqual({
            number: 1,
            series: "1",
            amounts: { ...queued.amounts, source: "note" }
          })
          expect(done.authority?.amounts).toEqual({
            unconditional_discount: 0,
            conditional_discount: 0,
            deductions: 0,
            benefit_reduction: 0,
            base: 150000,
            iss_rate: "2.00",
            iss_amount: 3000,
            iss_withheld: 0,
            federal_withheld: 0,
            total_withheld: 0,
            net: 150000
          })

          // A live key issues a live document.
          const live = accepted(yield* issueRaw(t.live.token, t.tenantId, invoice()))
          expect(live).toMatchObject({ environment: "live", status: "queued", number: 1 })
          expect((yield* waitFor(t.live, t.tenantId, live.id)).status).toBe("authorized")
        }))

      it.effect("a document stored before the tax content (migration 0013) reads as the plain note it was", () =>
        Effect.gen(function*() {
          const t = yield* tenant("olddoc")
          const document = yield* issue(t.test, t.tenantId)
          const sql = yield* SqlClient.SqlClient
          // The row as 0003 stored it: only services, deductions, base, rate, ISS and total.
          yield* sql`
            UPDATE documents SET amounts = amounts - 'source' - 'unconditional_discount' - 'conditional_discount'
              - 'benefit_reduction' - 'iss_withheld' - 'federal_withheld' - 'total_withheld' - 'net'
            WHERE id = ${document.id}`
          yield* backfillAmounts(sql)
          const read = asServiceDocument(
            yield* t.test.api.documents.get({ params: { tenantId: t.tenantId, docId: document.id } })
          )
          expect(read.amounts).toMatchObject({
            services: 150000,
            unconditional_discount: 0,
            conditional_discount: 0,
            total_withheld: 0,
            net: 150000,
            iss_amount: 3000
          })
          expect(read.tax).toEqual({})
          expect(read.intermediary).toBeNull()
        }))

      it.effect("computes base and ISS with deductions, rounding the ISS half up to the centavo", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          // base 1060 × 2.5 % = 26.5 centavos: half up gives 27 (half-even would give 26).
          const halfUp = yield* issue(
            t.test,
            t.tenantId,
            invoice({ amounts: { services: 1100, deductions: 40, iss_rate: "2.5" } })
          )
          expect(halfUp.amounts).toMatchObject({
            services: 1100,
            deductions: 40,
            base: 1060,
            iss_rate: "2.50",
            iss_amount: 27,
            net: 1100,
            total: 1100
          })
          // base 1010 × 2.5 % = 25.25 centavos: rounds down.
          const down = yield* issue(t.test, t.tenantId, invoice({ amounts: { services: 1010, iss_rate: "2.5" } }))
          expect(down.amounts).toMatchObject({ base: 1010, iss_amount: 25, total: 1010 })
          // Deductions equal to the services leave a zero base.
          const zero = yield* issue(
            t.test,
            t.tenantId,
            invoice({ amounts: { services: 5000, deductions: 5000, iss_rate: "5" } })
          )
          expect(zero.amounts).toMatchObject({ base: 0, iss_rate: "5.00", iss_amount: 0, total: 5000 })
        }))

      it.effect("numbers gap-free per tenant, environment and series; refused requests take no number", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const numbersOf = (documents: ReadonlyArray<Document>) => documents.map((d) => [d.series, d.number])

          const first = yield* Effect.forEach([1, 2, 3], () => issue(t.test, t.tenantId))
          expect(numbersOf(first)).toEqual([["1", 1], ["1", 2], ["1", 3]])
          const series2 = yield* issue(t.test, t.tenantId, invoice({ series: "2" }))
          expect(numbersOf([series2])).toEqual([["2", 1]])
          // The live counters are independent of the test ones.
          const live = yield* Effect.forEach([1, 2], () => issue(t.live, t.tenantId))
          expect(numbersOf(live)).toEqual([["1", 1], ["1", 2]])

          // A reference conflict rolls its number back: the next document is contiguous.
          yield* issue(t.test, t.tenantId, invoice({ reference: "dup" }))
          const conflict = yield* issueRaw(t.test.token, t.tenantId, invoice({ reference: "dup" }))
          expectError(conflict, 409, "conflict")
          // So does a validation failure found after decoding (deductions above services).
          const invalid = yield* issueRaw(
            t.test.token,
            t.tenantId,
            invoice({ amounts: { services: 100, deductions: 101, iss_rate: "2.00" } })
          )
          expectError(invalid, 400, "invalid_request")
          const next = yield* issue(t.test, t.tenantId)
          expect(numbersOf([next])).toEqual([["1", 5]])

          // Another tenant starts at 1.
          const other = yield* tenant()
          expect((yield* issue(other.test, other.tenantId)).number).toBe(1)

          // Concurrent issues still get distinct, contiguous numbers.
          const burst = yield* Effect.all(
            Array.from({ length: 8 }, () => issue(t.test, t.tenantId, invoice({ series: "3" }))),
            {
              concurrency: "unbounded"
            }
          )
          expect(burst.map((d) => d.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
        }))

      it.effect("a series is one series however it is spelled: \"02\" continues \"2\"", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const a = yield* issue(t.test, t.tenantId, invoice({ series: "2" }))
          const b = accepted(yield* issueRaw(t.test.token, t.tenantId, { ...invoice(), series: "00002" }))
          expect([a.series, a.number]).toEqual(["2", 1])
          expect([b.series, b.number]).toEqual(["2", 2])
        }))

      it.effect("text the database cannot store (a NUL character) is a 400, not a 500", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const response = yield* issueRaw(t.test.token, t.tenantId, invoice({ notes: "before\u0000after" }))
          expectError(response, 400, "invalid_request")
          const list = yield* rawRequest("GET", `/v1/documents?reference=${encodeURIComponent("a\u0000b")}`, {
            token: t.test.token
          })
          expectError(list, 400, "invalid_request")
        }))

      it.effect("invisible characters (bidi overrides, zero-width, U+0085, U+2028) are refused where an invoice would show them", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const base = invoice()
          const cases: ReadonlyArray<[unknown, ReadonlyArray<string>]> = [
            [{ ...base, taker: { ...base.taker, name: "Maria \u202Eairam" } }, ["taker", "name"]],
            [{ ...base, service: { ...base.service, description: "Consultoria\u200B" } }, ["service", "description"]],
            [{ ...base, notes: "linha\u2028linha" }, ["notes"]],
            [{ ...base, taker: { ...base.taker, name: "Maria\u0085Silva" } }, ["taker", "name"]]
          ]
          for (const [body, path] of cases) {
            const response = yield* issueRaw(t.test.token, t.tenantId, body)
            expectError(response, 400, "invalid_request")
            expect(JSON.stringify(response.json?.["issues"]), JSON.stringify(body)).toContain(JSON.stringify(path))
          }
          // Accents, dashes, emoji, tabs and line breaks are text, not formatting.
          const fine = yield* issueRaw(t.test.token, t.tenantId, { ...base, notes: "Açaí — pedido 42\n\tentregue 😀" })
          expect(fine.status, fine.text).toBe(202)
        }))

      it.effect("refuses invalid documents with 400 invalid_request naming every issue", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const base = invoice()
          const cases: ReadonlyArray<readonly [string, unknown, ReadonlyArray<string>]> = [
            ["CPF check digits", { ...base, taker: { ...base.taker, tax_id: "52998224724" } }, ["taker.tax_id"]],
            ["CNPJ check digits", { ...base, taker: { ...base.taker, tax_id: "11222333000182" } }, ["taker.tax_id"]],
            ["municipality of 6 digits", { ...base, service: { ...base.service, municipality_code: "355030" } }, [
              "service.municipality_code"
            ]],
            ["municipality with a letter", { ...base, service: { ...base.service, municipality_code: "355030X" } }, [
              "service.municipality_code"
            ]],
            ["float amount", { ...base, amounts: { services: 1500.5, iss_rate: "2.00" } }, ["amounts.services"]],
            ["rate as a number", { ...base, amounts: { services: 1500, iss_rate: 2 } }, ["amounts.iss_rate"]],
            ["deductions above services", { ...base, amounts: { services: 100, deductions: 101, iss_rate: "2.00" } }, [
              "amounts.deductions"
            ]],
            ["unknown type", { ...base, type: "freight_invoice" }, ["type"]],
            ["no type", { ...base, type: undefined }, ["type"]],
            ["taker without a name", { ...base, taker: { tax_id: "52998224725" } }, ["taker.name"]],
            ["two bad fields", {
              ...base,
              taker: { ...base.taker, tax_id: "12345678900" },
              service: { ...base.service, municipality_code: "35503080" }
            }, ["taker.tax_id", "service.municipality_code"]]
          ]
          for (const [label, body, paths] of cases) {
            const response = yield* issueRaw(t.test.token, t.tenantId, body)
            expectError(response, 400, "invalid_request")
            expect(issuePaths(response).sort(), `${label}: ${response.text}`).toEqual([...paths].sort())
          }
          const notJson = yield* rawRequest("POST", documentsPath(t.tenantId), {
            token: t.test.token,
            rawBody: "{\"type\":"
          })
          expectError(notJson, 400, "invalid_request")
          const longKey = yield* issueRaw(t.test.token, t.tenantId, base, "k".repeat(256))
          expectError(longKey, 400, "invalid_request")
          // Nothing was stored and no number was used.
          expect(yield* listIds(t.test, t.tenantId)).toEqual([])
          expect((yield* issue(t.test, t.tenantId)).number).toBe(1)
        }))

      it.effect("simulate:reject ends rejected with the authority's reasons, without retrying", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(
            t.test,
            t.tenantId,
            invoice({ notes: "please simulate:reject this one" })
          )
          expect(document.status).toBe("rejected")
          expect(document.rejection?.code).toMatch(/\S/)
          expect(document.rejection?.message).toMatch(/\S/)
          expect(document.authority).toBeNull()
          expect(document.attempts).toBe(1)
          // Give a (wrong) retry the time to happen; the document stays as it is.
          yield* Effect.sleep(Duration.millis(150))
          const later = yield* t.test.api.documents.get({ params: { tenantId: t.tenantId, docId: document.id } })
          expect({ status: later.status, attempts: later.attempts }).toEqual({ status: "rejected", attempts: 1 })
          expect(yield* eventTypesOf(yield* SqlClient.SqlClient, document.id)).toEqual(["document.rejected"])
        }))

      it.effect("simulate:unavailable is retried until authorized, with the last error recorded", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(t.live, t.tenantId, invoice({ notes: "simulate:unavailable" }))
          expect(document.status).toBe("authorized")
          expect(document.attempts).toBeGreaterThan(1)
          expect(document.last_error?.code).toMatch(/\S/)
          expect(document.last_error?.message).toMatch(/\S/)
          expect(document.last_error?.at).toBeInstanceOf(Date)
          expect(document.authority?.access_key).toMatch(/^[0-9]{50}$/)
        }))

      it.effect("simulate:timeout is reconciled: authorized once, never submitted twice", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(t.test, t.tenantId, invoice({ notes: "simulate:timeout" }))
          expect(document.status).toBe("authorized")
          expect(document.attempts).toBeGreaterThan(1)
          expect(document.authority?.access_key).toMatch(/^[0-9]{50}$/)
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<
            { submissionId: string }
          >`SELECT submission_id FROM documents WHERE id = ${document.id}`
          const records = yield* simulatorRecords(sql, row!.submissionId)
          // One NFS-e, submitted once: the retry asked (lookup) and adopted it instead of sending again.
          expect(records).toEqual([
            {
              system: "homologation",
              status: "authorized",
              submitAttempts: 1,
              accessKey: document.authority?.access_key
            }
          ])
          expect(yield* eventTypesOf(sql, document.id)).toEqual(["document.authorized"])
        }))

      it.effect("cancels an authorized document: 202 cancel_requested, then cancelled", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(t.live, t.tenantId)
          expect(document.status).toBe("authorized")
          const response = yield* rawRequest("POST", `${documentsPath(t.tenantId)}/${document.id}/cancel`, {
            token: t.live.token,
            body: VALID_REASON
          })
          const requested = accepted(response)
          expect(requested.status).toBe("cancel_requested")
          expect(requested.cancellation).toMatchObject({ ...VALID_REASON, cancelled_at: null, error: null })
          // While it is pending, further cancellations are refused.
          const repeated = yield* Effect.all(
            Array.from({ length: 5 }, () =>
              rawRequest("POST", `${documentsPath(t.tenantId)}/${document.id}/cancel`, {
                token: t.live.token,
                body: VALID_REASON
              })),
            { concurrency: "unbounded" }
          )
          for (const r of repeated) expectError(r, 409, "invalid_state")
          expect(requested.cancellation?.requested_at).toBeInstanceOf(Date)
          expect(requested.authority).toEqual(document.authority)

          const cancelled = yield* waitFor(t.live, t.tenantId, document.id, (d) => d.status !== "cancel_requested")
          expect(cancelled.status).toBe("cancelled")
          expect(cancelled.cancellation?.cancelled_at).toBeInstanceOf(Date)
          expect(cancelled.cancellation?.error).toBeNull()
          expect(cancelled.cancellation).toMatchObject(VALID_REASON)
          const sql = yield* SqlClient.SqlClient
          expect(yield* eventTypesOf(sql, document.id)).toEqual(["document.authorized", "document.cancelled"])
          const [record] = yield* sql<{ status: string }>`
          SELECT s.status FROM authority_sim_records s JOIN documents d ON d.submission_id = s.submission_id
          WHERE d.id = ${document.id} AND s.system = 'production'`
          expect(record?.status).toBe("cancelled")

          // A cancelled document cannot be cancelled again.
          const again = yield* rawRequest("POST", `${documentsPath(t.tenantId)}/${document.id}/cancel`, {
            token: t.live.token,
            body: VALID_REASON
          })
          expectError(again, 409, "invalid_state")
        }))

      it.effect("simulate:cancel-reject returns the document to authorized with cancellation.error", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(t.test, t.tenantId, invoice({ notes: "simulate:cancel-reject" }))
          expect(document.status).toBe("authorized")
          const requested = yield* t.test.api.documents.cancel({
            params: { tenantId: t.tenantId, docId: document.id },
            payload: { reason_code: "other", reason: "The customer withdrew the order." }
          })
          expect(requested.status).toBe("cancel_requested")
          const refused = yield* waitFor(t.test, t.tenantId, document.id, (d) => d.status !== "cancel_requested")
          expect(refused.status).toBe("authorized")
          expect(refused.cancellation?.error?.code).toMatch(/\S/)
          expect(refused.cancellation?.error?.message).toMatch(/\S/)
          expect(refused.cancellation?.cancelled_at).toBeNull()
          expect(refused.authority).toEqual(document.authority)
          expect(yield* eventTypesOf(yield* SqlClient.SqlClient, document.id)).toEqual([
            "document.authorized",
            "document.cancellation_failed"
          ])
          // A refused cancellation can be requested again.
          const retried = yield* rawRequest("POST", `${documentsPath(t.tenantId)}/${document.id}/cancel`, {
            token: t.test.token,
            body: VALID_REASON
          })
          expect(accepted(retried).cancellation).toMatchObject({ ...VALID_REASON, error: null })
          yield* waitFor(t.test, t.tenantId, document.id, (d) => d.status !== "cancel_requested")
        }))

      it.effect("refuses to cancel what is not authorized (409), unknown ids (404) and bad reasons (400)", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const cancel = (docId: string, body: unknown = VALID_REASON) =>
            rawRequest("POST", `${documentsPath(t.tenantId)}/${docId}/cancel`, { token: t.test.token, body })

          const rejected = yield* issueSettled(t.test, t.tenantId, invoice({ notes: "simulate:reject" }))
          expect(rejected.status).toBe("rejected")
          expectError(yield* cancel(rejected.id), 409, "invalid_state")

          // A queued document (its job is done, so no worker moves it while we look).
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE documents SET status = 'queued' WHERE id = ${rejected.id}`
          expectError(yield* cancel(rejected.id), 409, "invalid_state")
          yield* sql`UPDATE documents SET status = 'failed' WHERE id = ${rejected.id}`
          expectError(yield* cancel(rejected.id), 409, "invalid_state")

          expectError(yield* cancel(UNKNOWN_DOC_ID), 404, "not_found")
          expectError(yield* cancel("doc_not-an-id"), 400, "invalid_request")

          const authorized = yield* issueSettled(t.test, t.tenantId)
          const short = yield* cancel(authorized.id, { reason_code: "other", reason: "too short" })
          expectError(short, 400, "invalid_request")
          expect(issuePaths(short)).toEqual(["reason"])
          const blank = yield* cancel(authorized.id, { reason_code: "other", reason: `   ${"x".repeat(10)}    ` })
          expectError(blank, 400, "invalid_request")
          const long = yield* cancel(authorized.id, { reason_code: "other", reason: "x".repeat(256) })
          expectError(long, 400, "invalid_request")
          const both = yield* cancel(authorized.id, { reason_code: "changed_my_mind", reason: "short" })
          expectError(both, 400, "invalid_request")
          // Both fields are named (a literal union may report its field once per allowed value).
          expect([...new Set(issuePaths(both))].sort()).toEqual(["reason", "reason_code"])
          // None of the refusals touched the document.
          const after = asServiceDocument(
            yield* t.test.api.documents.get({ params: { tenantId: t.tenantId, docId: authorized.id } })
          )
          expect({ status: after.status, cancellation: after.cancellation }).toEqual({
            status: "authorized",
            cancellation: null
          })
        }))

      it.effect("lists newest first with cursor pagination and filters", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const issued: Array<Document> = []
          for (const i of [1, 2, 3, 4, 5]) {
            issued.push(
              yield* issue(
                t.test,
                t.tenantId,
                invoice({ reference: `ref-${i}`, ...(i === 5 ? { notes: "simulate:reject" } : {}) })
              )
            )
          }
          yield* Effect.forEach(issued, (d) => waitFor(t.test, t.tenantId, d.id), { discard: true })
          const live = yield* issue(t.live, t.tenantId, invoice({ reference: "ref-1" }))
          const newestFirst = [...issued].reverse().map((d) => d.id)
          expect([...newestFirst].sort().reverse()).toEqual(newestFirst)

          const page1 = yield* t.test.api.documents.list({ params: { tenantId: t.tenantId }, query: { limit: 2 } })
          expect(page1.data.map((d) => d.id)).toEqual(newestFirst.slice(0, 2))
          expect(page1.data.map((d) => d.number)).toEqual([5, 4])
          expect(page1.has_more).toBe(true)
          expect(page1.next_cursor).toBe(newestFirst[1])
          const page2 = yield* t.test.api.documents.list({
            params: { tenantId: t.tenantId },
            query: { limit: 2, starting_after: page1.next_cursor! }
          })
          expect(page2.data.map((d) => d.id)).toEqual(newestFirst.slice(2, 4))
          expect(page2.has_more).toBe(true)
          const page3 = yield* t.test.api.documents.list({
            params: { tenantId: t.tenantId },
            query: { limit: 2, starting_after: page2.next_cursor! }
          })
          expect(page3.data.map((d) => d.id)).toEqual(newestFirst.slice(4))
          expect(page3.has_more).toBe(false)
          expect(page3.next_cursor).toBeNull()
          // Exactly `limit` left: no further page.
          const exact = yield* t.test.api.documents.list({ params: { tenantId: t.tenantId }, query: { limit: 5 } })
          expect({ count: exact.data.length, has_more: exact.has_more, next_cursor: exact.next_cursor }).toEqual({
            count: 5,
            has_more: false,
            next_cursor: null
          })
          // The default page holds all five, and the live document is not among them.
          expect(yield* listIds(t.test, t.tenantId)).toEqual(newestFirst)

          expect(yield* listIds(t.test, t.tenantId, "?status=rejected")).toEqual([issued[4]!.id])
          expect(yield* listIds(t.test, t.tenantId, "?status=authorized")).toEqual(newestFirst.slice(1))
          expect(yield* listIds(t.test, t.tenantId, "?status=cancelled")).toEqual([])
          expect(yield* listIds(t.test, t.tenantId, "?reference=ref-3")).toEqual([issued[2]!.id])
          expect(yield* listIds(t.live, t.tenantId, "?reference=ref-1")).toEqual([live.id])
          expect(yield* listIds(t.test, t.tenantId, "?reference=nope")).toEqual([])

          const third = issued[2]!.created_at.toISOString()
          const fourth = issued[3]!.created_at.toISOString()
          expect(yield* listIds(t.test, t.tenantId, `?created_gte=${encodeURIComponent(third)}`)).toEqual(
            newestFirst.slice(0, 3)
          )
          expect(yield* listIds(t.test, t.tenantId, `?created_lt=${encodeURIComponent(third)}`)).toEqual(
            newestFirst.slice(3)
          )
          expect(
            yield* listIds(
              t.test,
              t.tenantId,
              `?created_gte=${encodeURIComponent(third)}&created_lt=${encodeURIComponent(fourth)}`
            )
          ).toEqual([issued[2]!.id])
          // The bounds are exact to the millisecond of each document's created_at.
          for (const document of issued) {
            const at = document.created_at.getTime()
            const bound = (millis: number) => encodeURIComponent(new Date(millis).toISOString())
            const ids = (query: string) => listIds(t.test, t.tenantId, query)
            expect(yield* ids(`?created_gte=${bound(at)}`), "created_gte = created_at").toContain(document.id)
            expect(yield* ids(`?created_lt=${bound(at + 1)}`), "created_lt = created_at + 1 ms").toContain(document.id)
            expect(yield* ids(`?created_gte=${bound(at + 1)}`), "created_gte = created_at + 1 ms").not.toContain(
              document.id
            )
            expect(yield* ids(`?created_lt=${bound(at)}`), "created_lt = created_at").not.toContain(document.id)
          }
          // Filters combine with pagination.
          expect(yield* listIds(t.test, t.tenantId, `?status=authorized&limit=1&starting_after=${newestFirst[1]}`))
            .toEqual([
              newestFirst[2]
            ])

          for (
            const query of [
              "?status=bogus",
              "?limit=0",
              "?limit=101",
              "?limit=ten",
              "?limit=1.5",
              "?created_gte=yesterday",
              "?created_lt=2024-13-45T99:00:00Z",
              "?starting_after=not-a-document-id",
              `?reference=${"r".repeat(101)}`
            ]
          ) {
            const response = yield* rawRequest("GET", `${documentsPath(t.tenantId)}${query}`, { token: t.test.token })
            expectError(response, 400, "invalid_request")
            expect(issuePaths(response).length, `${query}: ${response.text}`).toBeGreaterThan(0)
          }
        }))

      it.effect("keeps references unique per tenant and environment (409 conflict)", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const first = yield* issue(t.test, t.tenantId, invoice({ reference: "INV-1" }))
          const duplicate = yield* issueRaw(
            t.test.token,
            t.tenantId,
            invoice({ reference: "INV-1", notes: "another body" })
          )
          expectError(duplicate, 409, "conflict")
          const viaShorthand = yield* issueRaw(t.test.token, null, invoice({ reference: "INV-1" }))
          expectError(viaShorthand, 409, "conflict")
          const typed = yield* Effect.flip(issue(t.test, t.tenantId, invoice({ reference: "INV-1" })))
          expect(typed).toMatchObject({ _tag: "Conflict", code: "conflict" })
          // The other environment and another tenant have their own references.
          const live = yield* issue(t.live, t.tenantId, invoice({ reference: "INV-1" }))
          expect(live.reference).toBe("INV-1")
          const other = yield* tenant()
          expect((yield* issue(other.test, other.tenantId, invoice({ reference: "INV-1" }))).reference).toBe("INV-1")
          expect(yield* listIds(t.test, t.tenantId, "?reference=INV-1")).toEqual([first.id])

          // Racing on one reference: one wins, the others get 409, and no number is lost.
          const racers = yield* Effect.all(
            Array.from({ length: 10 }, () => issueRaw(t.live.token, t.tenantId, invoice({ reference: "INV-2" }))),
            { concurrency: "unbounded" }
          )
          expect(racers.filter((r) => r.status === 202)).toHaveLength(1)
          for (const response of racers) if (response.status !== 202) expectError(response, 409, "conflict")
          expect(racers.map((r) => field(r.json, "number")).filter((n) => n !== undefined)).toEqual([2])
          expect((yield* issue(t.live, t.tenantId)).number).toBe(3)
        }))

      it.effect("Idempotency-Key: the same body replays the original answer marked Idempotent-Replayed, another body is 422", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const key = `idem-${cnpj()}`
          const first = yield* issueRaw(t.test.token, t.tenantId, invoice(), key)
          const original = accepted(first)
          // The first answer is not a replay.
          expect(first.headers["idempotent-replayed"]).toBeUndefined()
          // Same body with its keys in another order.
          const reordered = invoice()
          const replay = yield* issueRaw(t.test.token, t.tenantId, {
            amounts: reordered.amounts,
            service: reordered.service,
            taker: reordered.taker,
            type: reordered.type
          }, key)
          expect(replay.status, replay.text).toBe(202)
          expect(replay.json).toEqual(first.json)
          expect(replay.headers["idempotent-replayed"]).toBe("true")
          // Even after the document moved on, the original answer is what is replayed.
          yield* waitFor(t.test, t.tenantId, original.id)
          const later = yield* issueRaw(t.test.token, t.tenantId, invoice(), key)
          expect(later.status).toBe(202)
          expect(later.json).toEqual(first.json)
          expect(later.headers["idempotent-replayed"]).toBe("true")
          expect(yield* listIds(t.test, t.tenantId)).toEqual([original.id])

          const reused = yield* issueRaw(
            t.test.token,
            t.tenantId,
            invoice({ amounts: { services: 150001, iss_rate: "2.00" } }),
            key
          )
          expectError(reused, 422, "idempotency_key_reused")
          expect(reused.headers["idempotent-replayed"]).toBeUndefined()
          const typed = yield* Effect.flip(
            t.test.api.documents.issue({
              params: { tenantId: t.tenantId },
              payload: invoice({ notes: "x" }),
              headers: { "idempotency-key": key }
            })
          )
          expect(typed).toMatchObject({ _tag: "IdempotencyKeyReused", code: "idempotency_key_reused" })

          // The key is the tenant's: the shorthand path shares it.
          const shorthand = yield* issueRaw(t.test.token, null, invoice(), key)
          expect(shorthand.json).toEqual(first.json)
          expect(shorthand.headers["idempotent-replayed"]).toBe("true")
          expect(yield* listIds(t.test, t.tenantId)).toEqual([original.id])

          // A refusal is an answer too, and is replayed as such.
          yield* issue(t.test, t.tenantId, invoice({ reference: "taken" }))
          const conflictKey = `idem-conflict-${cnpj()}`
          const conflict = yield* issueRaw(t.test.token, t.tenantId, invoice({ reference: "taken" }), conflictKey)
          expectError(conflict, 409, "conflict")
          expect(conflict.headers["idempotent-replayed"]).toBeUndefined()
          const conflictAgain = yield* issueRaw(t.test.token, t.tenantId, invoice({ reference: "taken" }), conflictKey)
          expectError(conflictAgain, 409, "conflict")
          expect(conflictAgain.headers["idempotent-replayed"]).toBe("true")
          // Nor is an answer to a request without a key ever marked.
          expect((yield* issueRaw(t.test.token, t.tenantId, invoice())).headers["idempotent-replayed"]).toBeUndefined()
        }))

      it.effect("a request refused as invalid does not use up its Idempotency-Key: the corrected one is served", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const key = `idem-invalid-${cnpj()}`
          const invalid = yield* issueRaw(
            t.test.token,
            t.tenantId,
            invoice({ amounts: { services: 1000, deductions: 2000, iss_rate: "2.00" } }),
            key
          )
          expectError(invalid, 400, "invalid_request")
          const corrected = yield* issueRaw(t.test.token, t.tenantId, invoice(), key)
          expect(corrected.status, corrected.text).toBe(202)
          // The refused request left nothing to replay: the corrected one is a first answer.
          expect(corrected.headers["idempotent-replayed"]).toBeUndefined()
          const replayed = yield* issueRaw(t.test.token, t.tenantId, invoice(), key)
          expect(replayed.json).toEqual(corrected.json)
          expect(replayed.headers["idempotent-replayed"]).toBe("true")
        }))

      it.effect("Idempotency-Key race: 20 concurrent identical requests create exactly one document", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const key = `race-${cnpj()}`
          const responses = yield* Effect.all(
            Array.from({ length: 20 }, () => issueRaw(t.live.token, t.tenantId, invoice({ reference: "race" }), key)),
            { concurrency: "unbounded" }
          )
          const ids = yield* listIds(t.live, t.tenantId)
          expect(ids).toHaveLength(1)
          const created = responses.filter((r) => r.status === 202)
          expect(created.length).toBeGreaterThanOrEqual(1)
          for (const response of responses) {
            if (response.status === 202) expect(field(response.json, "id")).toBe(ids[0])
            else expectError(response, 409, "idempotency_conflict")
          }
          // Once settled, a retry gets the document.
          const retry = yield* issueRaw(t.live.token, t.tenantId, invoice({ reference: "race" }), key)
          expect(retry.status).toBe(202)
          expect(field(retry.json, "id")).toBe(ids[0])
          expect(retry.headers["idempotent-replayed"]).toBe("true")
          expect((yield* t.live.api.tenants.get({ params: { tenantId: t.tenantId } })).quota.used).toBe(1)
        }))

      it.effect("Idempotency-Keys are scoped to tenant and environment", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const key = `shared-${cnpj()}`
          const test = accepted(yield* issueRaw(t.test.token, t.tenantId, invoice(), key))
          const live = accepted(yield* issueRaw(t.live.token, t.tenantId, invoice(), key))
          expect(live.id).not.toBe(test.id)
          expect([test.environment, live.environment]).toEqual(["test", "live"])
          const other = yield* tenant()
          const foreign = accepted(yield* issueRaw(other.test.token, other.tenantId, invoice(), key))
          expect([test.id, live.id]).not.toContain(foreign.id)
          expect(yield* listIds(t.test, t.tenantId)).toEqual([test.id])
          expect(yield* listIds(t.live, t.tenantId)).toEqual([live.id])
        }))

      it.effect("a suspended tenant cannot issue live documents (402) but can still test", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE tenants SET status = 'suspended' WHERE id = ${t.tenantId}`
          const live = yield* issueRaw(t.live.token, t.tenantId, invoice())
          expectError(live, 402, "tenant_suspended")
          const typed = yield* Effect.flip(issue(t.live, t.tenantId))
          expect(typed).toMatchObject({ _tag: "TenantSuspended", code: "tenant_suspended" })
          accepted(yield* issueRaw(t.test.token, t.tenantId, invoice()))
          expect(yield* listIds(t.live, t.tenantId)).toEqual([])
          expect((yield* t.live.api.tenants.get({ params: { tenantId: t.tenantId } })).quota.used).toBe(0)
          // `past_due` still allows live issuing (SPEC §10); the refusals took no number.
          yield* sql`UPDATE tenants SET status = 'past_due' WHERE id = ${t.tenantId}`
          expect((yield* issue(t.live, t.tenantId)).number).toBe(1)
        }))

      it.effect("separates environments on every endpoint, in both path forms", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const testDoc = yield* issueSettled(t.test, t.tenantId)
          const liveDoc = yield* issueSettled(t.live, t.tenantId)
          const pairs = [[t.live, testDoc], [t.test, liveDoc]] as const
          for (const [who, foreign] of pairs) {
            for (const base of [documentsPath(t.tenantId), documentsPath(null)]) {
              expectError(yield* rawRequest("GET", `${base}/${foreign.id}`, { token: who.token }), 404, "not_found")
              expectError(
                yield* rawRequest("POST", `${base}/${foreign.id}/cancel`, { token: who.token, body: VALID_REASON }),
                404,
                "not_found"
              )
            }
          }
          expect(yield* listIds(t.test, t.tenantId)).toEqual([testDoc.id])
          expect(yield* listIds(t.test, null)).toEqual([testDoc.id])
          expect(yield* listIds(t.live, t.tenantId)).toEqual([liveDoc.id])
          expect(yield* listIds(t.live, null)).toEqual([liveDoc.id])
          // Issuing through either path files the document under the key's environment.
          const viaShorthand = accepted(yield* issueRaw(t.live.token, null, invoice()))
          expect(viaShorthand.environment).toBe("live")
          expectError(
            yield* rawRequest("GET", `${documentsPath(t.tenantId)}/${viaShorthand.id}`, { token: t.test.token }),
            404,
            "not_found"
          )
          // The refused cancellations changed nothing.
          for (const [who, document] of [[t.test, testDoc], [t.live, liveDoc]] as const) {
            const current = asServiceDocument(
              yield* who.api.documents.get({ params: { tenantId: t.tenantId, docId: document.id } })
            )
            expect({ status: current.status, cancellation: current.cancellation }).toEqual({
              status: "authorized",
              cancellation: null
            })
          }
        }))

      it.effect("answers 404 not_found to another tenant's key on this tenant's documents", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(t.test, t.tenantId)
          const other = yield* tenant("intruder")
          for (const who of [other.test, other.live]) {
            const base = documentsPath(t.tenantId)
            const calls = [
              rawRequest("POST", base, { token: who.token, body: invoice() }),
              rawRequest("GET", base, { token: who.token }),
              rawRequest("GET", `${base}/${document.id}`, { token: who.token }),
              rawRequest("POST", `${base}/${document.id}/cancel`, { token: who.token, body: VALID_REASON }),
              // The shorthand resolves to the caller's own tenant, where the document does not exist.
              rawRequest("GET", `${documentsPath(null)}/${document.id}`, { token: who.token }),
              rawRequest("POST", `${documentsPath(null)}/${document.id}/cancel`, {
                token: who.token,
                body: VALID_REASON
              })
            ]
            for (const call of calls) expectError(yield* call, 404, "not_found")
            expect(yield* listIds(who, null)).toEqual([])
          }
          // An unknown tenant looks the same as a foreign one.
          expectError(
            yield* rawRequest("GET", documentsPath(`ten_${"0".repeat(26)}`), { token: t.test.token }),
            404,
            "not_found"
          )
          expect(yield* listIds(t.test, t.tenantId)).toEqual([document.id])
          const current = yield* t.test.api.documents.get({ params: { tenantId: t.tenantId, docId: document.id } })
          expect(current.status).toBe("authorized")
        }))

      it.effect("requires documents:write, documents:read and documents:cancel on all eight endpoints (403)", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const document = yield* issueSettled(t.test, t.tenantId)
          const without = (scope: Scope) => caller(t.owner, "test", allScopes.filter((s) => s !== scope))
          const noWrite = yield* without("documents:write")
          const noRead = yield* without("documents:read")
          const noCancel = yield* without("documents:cancel")
          const cases = [
            [noWrite, "POST", documentsPath(t.tenantId), invoice(), "documents:write"],
            [noWrite, "POST", documentsPath(null), invoice(), "documents:write"],
            [noRead, "GET", documentsPath(t.tenantId), undefined, "documents:read"],
            [noRead, "GET", documentsPath(null), undefined, "documents:read"],
            [noRead, "GET", `${documentsPath(t.tenantId)}/${document.id}`, undefined, "documents:read"],
            [noRead, "GET", `${documentsPath(null)}/${document.id}`, undefined, "documents:read"],
            [noCancel, "POST", `${documentsPath(t.tenantId)}/${document.id}/cancel`, VALID_REASON, "documents:cancel"],
            [noCancel, "POST", `${documentsPath(null)}/${document.id}/cancel`, VALID_REASON, "documents:cancel"]
          ] as const
          for (const [who, method, url, body, scope] of cases) {
            const response = yield* rawRequest(method, url, { token: who.token, body })
            expectError(response, 403, "insufficient_scope")
            expect(field(response.json, "required_scope"), `${method} ${url}`).toBe(scope)
          }
          // Each of those keys can still do what its scopes allow.
          expect((yield* noCancel.api.documents.get({ params: { tenantId: t.tenantId, docId: document.id } })).id).toBe(
            document.id
          )
          expect((yield* issue(noRead, t.tenantId)).number).toBe(2)
          const typed = yield* Effect.flip(noRead.api.documents.listForKey({ query: { limit: 20 } }))
          expect(typed).toMatchObject({ _tag: "InsufficientScope", required_scope: "documents:read" })
          // Refused calls changed nothing.
          const current = yield* t.test.api.documents.get({ params: { tenantId: t.tenantId, docId: document.id } })
          expect(current.status).toBe("authorized")
          expect(yield* listIds(t.test, t.tenantId)).toHaveLength(2)
        }))

      it.effect("the shorthand /v1/documents… behaves like the tenant paths", () =>
        Effect.gen(function*() {
          const t = yield* tenant()
          const viaTenant = yield* issue(t.live, t.tenantId)
          const viaKey = yield* t.live.api.documents.issueForKey({
            payload: invoice({ reference: "short-1" }),
            headers: {}
          })
          expect(viaKey).toMatchObject({ environment: "live", status: "queued", number: 2, reference: "short-1" })
          const authorized = yield* waitFor(t.live, t.tenantId, viaKey.id)
          expect(authorized.status).toBe("authorized")

          const gotByKey = yield* t.live.api.documents.getForKey({ params: { docId: viaKey.id } })
          expect(gotByKey).toEqual(authorized)
          // The unprefixed alias of the shorthand too (SPEC §2).
          const alias = yield* rawRequest("GET", `/documents/${viaKey.id}`, { token: t.live.token })
          expect(alias.status, alias.text).toBe(200)
          expect(decodeDocument(alias.json)).toEqual(authorized)

          const byTenant = yield* t.live.api.documents.list({ params: { tenantId: t.tenantId }, query: { limit: 20 } })
          const byKey = yield* t.live.api.documents.listForKey({ query: { limit: 20 } })
          expect(byKey.data.map((d) => d.id)).toEqual(byTenant.data.map((d) => d.id))
          expect(byKey.data.map((d) => d.id)).toEqual([viaKey.id, viaTenant.id])
          expect(
            (yield* t.live.api.documents.listForKey({ query: { limit: 20, reference: "short-1" } })).data.map((d) =>
              d.id
            )
          )
            .toEqual([viaKey.id])

          expectError(
            yield* rawRequest("GET", `${documentsPath(null)}/${UNKNOWN_DOC_ID}`, { token: t.live.token }),
            404,
            "not_found"
          )
          const requested = yield* t.live.api.documents.cancelForKey({
            params: { docId: viaKey.id },
            payload: VALID_REASON
          })
          expect(requested.status).toBe("cancel_requested")
          const cancelled = yield* waitFor(t.live, t.tenantId, viaKey.id, (d) => d.status !== "cancel_requested")
          expect(cancelled.status).toBe("cancelled")
          const again = yield* Effect.flip(
            t.live.api.documents.cancelForKey({ params: { docId: viaKey.id }, payload: VALID_REASON })
          )
          expect(again).toMatchObject({ _tag: "InvalidState", code: "invalid_state" })
          const short = yield* rawRequest("POST", `${documentsPath(null)}/${viaKey.id}/cancel`, {
            token: t.live.token,
            body: { reason_code: "other", reason: "short" }
          })
          expectError(short, 400, "invalid_request")
        }))
    }
  )

  layer(makeDocumentsApp(database, { ...fast, defaultMonthlyQuota: 5 }), {
    timeout: 60_000,
    excludeTestServices: true
  })(
    `documents: monthly quota (${database})`,
    (it) => {
      it.effect("20 concurrent live issues against a quota of 5: exactly 5 accepted, the rest 402", () =>
        Effect.gen(function*() {
          const t = yield* tenant("quota")
          const sql = yield* SqlClient.SqlClient
          const responses = yield* Effect.all(
            Array.from({ length: 20 }, () => issueRaw(t.live.token, t.tenantId, invoice())),
            { concurrency: "unbounded" }
          )
          const ok = responses.filter((r) => r.status === 202)
          expect(ok).toHaveLength(5)
          for (const response of responses) {
            if (response.status !== 202) expectError(response, 402, "quota_exceeded")
          }
          // Refused requests took no number: the accepted ones are exactly 1..5.
          expect(ok.map((r) => decodeDocument(r.json).number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5])

          const period = new Date().toISOString().slice(0, 7)
          const tenantNow = yield* t.live.api.tenants.get({ params: { tenantId: t.tenantId } })
          expect(tenantNow.quota).toEqual({ period, limit: 5, used: 5 })

          // Test documents never count against the quota.
          for (const _ of [1, 2, 3]) accepted(yield* issueRaw(t.test.token, t.tenantId, invoice()))
          expect((yield* t.test.api.tenants.get({ params: { tenantId: t.tenantId } })).quota.used).toBe(5)
          const typed = yield* Effect.flip(issue(t.live, t.tenantId))
          expect(typed).toMatchObject({ _tag: "QuotaExceeded", code: "quota_exceeded" })

          const thresholds = yield* sql<{ threshold: string; used: string }>`
            SELECT data -> 'object' ->> 'threshold' AS threshold, data -> 'object' ->> 'used' AS used
            FROM events WHERE tenant_id = ${t.tenantId} AND type = 'quota.threshold' ORDER BY id`
          expect(thresholds.map((row) => [Number(row.threshold), Number(row.used)])).toEqual([[80, 4], [100, 5]])

          // With room again, the next live document continues the series without a gap.
          yield* sql`UPDATE tenants SET monthly_quota = 6 WHERE id = ${t.tenantId}`
          expect((yield* issue(t.live, t.tenantId)).number).toBe(6)
          expectError(yield* issueRaw(t.live.token, t.tenantId, invoice()), 402, "quota_exceeded")
        }))

      it.effect("each tenant has its own quota", () =>
        Effect.gen(function*() {
          const a = yield* tenant("quota-a")
          const b = yield* tenant("quota-b")
          for (const _ of [1, 2, 3, 4, 5]) yield* issue(a.live, a.tenantId)
          expectError(yield* issueRaw(a.live.token, a.tenantId, invoice()), 402, "quota_exceeded")
          expect((yield* issue(b.live, b.tenantId)).number).toBe(1)
          expect((yield* b.live.api.tenants.get({ params: { tenantId: b.tenantId } })).quota.used).toBe(1)
        }))
    }
  )
}

/** What the simulator (standing for the remote authority) recorded for one submission id. */
const simulatorRecords = (sql: SqlClient.SqlClient, submissionId: string) =>
  Effect.map(
    sql<{ system: string; status: string; submitAttempts: number; accessKey: string | null }>`
      SELECT system, status, submit_attempts, access_key FROM authority_sim_records
      WHERE submission_id = ${submissionId}`,
    (rows) => rows.map((row) => ({ ...row, submitAttempts: Number(row.submitAttempts) }))
  )

/** The types of the events recorded about one document, oldest first. */
const eventTypesOf = (sql: SqlClient.SqlClient, documentId: string) =>
  Effect.map(
    sql<{ type: string }>`
      SELECT type FROM events WHERE data -> 'object' ->> 'id' = ${documentId} ORDER BY id`,
    (rows) => rows.map((row) => row.type)
  )
