/**
 * Goods invoices over HTTP with the built-in simulator (SPEC §6 "Goods invoices"): an NF-e and an
 * NFC-e accepted, numbered apart from the service invoices and from each other, authorized with a
 * 44-character key and their `nfeProc` as the XML file (the official schema, the signature); the
 * emitter's registration (422) and the sale's rules (400) refused before anything is taken; the
 * simulator's magic values through the pipeline; idempotency; the cancellation (event 110111) and
 * its refusal; and what is not offered yet (their PDF) answered as such.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { makeApp } from "../../src/App.js"
import { isValidNfeAccessKey } from "../../src/authority/sefaz/NfeAccessKey.js"
import { validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { consumerInvoiceExample, productInvoiceExample } from "../../src/domain/GoodsExamples.js"
import type { GoodsInvoiceRequest } from "../../src/domain/GoodsInvoice.js"
import { ibsCbsRatesFor } from "../../src/domain/IbsCbsRates.js"
import { brazilianDate } from "../../src/domain/Time.js"
import { expectError, field } from "../support/accounts.js"
import { pageSizes, pdfText } from "../support/DanfseText.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import {
  accepted,
  asGoods,
  decode,
  goodsSimulatorAuthorities,
  goodsTenant,
  issue,
  quickRetries,
  settled,
  simulatorAuthorities,
  until
} from "../support/GoodsApp.js"
import { counterSale, hasXmllint, interstateSale, simplesSale, xmllintNfe } from "../support/NfeXml.js"
import { consultingService } from "../support/samples.js"
import {
  bytesRequest,
  databaseLayer,
  httpServerTest,
  rawRequest,
  testConfig,
  testDatabases
} from "../support/TestApp.js"

/** A sale as a São Paulo emitter makes it: the interstate sale's items leave from SP. */
const spSale = interstateSale
/** A sale within SP to a consumer: the Simples sale's lines, taxed in the normal regime. */
const spConsumerNfe: GoodsInvoiceRequest = {
  ...simplesSale,
  recipient: {
    ...simplesSale.recipient!,
    address: { ...simplesSale.recipient!.address!, municipality_code: "3550308", state: "SP", postal_code: "01310100" }
  },
  items: simplesSale.items.map((item) => ({ ...item, icms: { origin: 0, cst: "00", rate: "18.00" } })),
  payments: [{ method: "pix", amount: 11270 }]
}

const issuePaths = (response: { readonly json: unknown }) => {
  const issues = field(response.json, "issues")
  return Array.isArray(issues) ? issues.map((issue: unknown) => (field(issue, "path") as Array<string>).join(".")) : []
}

for (const database of testDatabases) {
  layer(
    makeApp(testConfig(quickRetries), databaseLayer(database), simulatorAuthorities, goodsSimulatorAuthorities).pipe(
      Layer.provideMerge(httpServerTest)
    ),
    { timeout: 60_000, excludeTestServices: true }
  )(`goods documents on the simulator (${database})`, (it) => {
    it.effect("an NF-e with the tax reform's IBS/CBS: its totals in the answer and IBSCBSTot in the note (while the year's rates are published)", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const sale = {
          ...spSale,
          items: spSale.items.map((item) => ({ ...item, ibs_cbs: { cst: "000", class_code: "000001" } }))
        }
        const answer = yield* issue(t.token, sale)
        if (Result.isFailure(ibsCbsRatesFor(brazilianDate(new Date())))) {
          // A year whose rates await a resolution: refused at the field, nothing taken.
          expectError(answer, 400, "invalid_request")
          expect(issuePaths(answer)).toEqual(["items.0.ibs_cbs", "items.1.ibs_cbs"])
          return
        }
        const done = yield* settled(t.token, accepted(answer).id)
        expect(done.status, JSON.stringify(done.rejection)).toBe("authorized")
        // The base of each item less its ICMS, PIS and COFINS (see NfeXml.test.ts for the hand computation).
        expect(done.totals.ibs_cbs).toEqual({ base: 13986, state_ibs: 14, municipal_ibs: 0, ibs: 14, cbs: 126 })
        expect(done.totals.total).toBe(17822)
        const xml = yield* rawRequest("GET", `/v1/documents/${done.id}/xml`, { token: t.token })
        expect(xml.text).toContain("<IBSCBSTot><vBCIBSCBS>139.86</vBCIBSCBS>")
        expect(Result.isSuccess(validateNfe("nfeProc", xml.text))).toBe(true)
      }))

    it.effect("an NF-e charging ICMS-ST (CST 10): vST in its totals and its total, authorized, printed on its DANFE", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const item = {
          ...spSale.items[0]!,
          cfop: "6403",
          quantity: "1",
          unit_amount: 100000,
          discount: undefined,
          icms: { origin: 0, cst: "10", rate: "12.00", st: { margin: "40.00", rate: "18.00" } },
          ipi: { cst: "50", rate: "10.00" }
        } as const
        // 1 000.00 + IPI 100.00, × 1.40 = 1 540.00 at 18 % = 277.20, less the own 12 % (120.00): 157.20.
        const sale = { ...spSale, items: [item], payments: [{ method: "bank_slip", amount: 125720 }] } as const
        const done = yield* settled(t.token, accepted(yield* issue(t.token, sale)).id)
        expect(done.status, JSON.stringify(done.rejection)).toBe("authorized")
        expect(done.totals).toMatchObject({ st_base: 154000, st: 15720, ipi: 10000, total: 125720 })
        const pdf = yield* bytesRequest(`/v1/documents/${done.id}/pdf`, t.token)
        const text = pdfText(pdf.bytes)
        expect(text).toContain("1.540,00")
        expect(text).toContain("157,20")
      }))

    it.effect("an NF-e: 202 queued with its sale and totals, then authorized with a 44-character key and its nfeProc", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const queued = asGoods(accepted(yield* issue(t.token, { ...spSale, reference: "pedido-457" })))
        expect(queued).toMatchObject({
          object: "document",
          environment: "test",
          type: "product_invoice",
          status: "queued",
          reference: "pedido-457",
          series: "1",
          number: 1,
          currency: "BRL",
          authority: null,
          rejection: null,
          attempts: 0
        })
        // The sale as asked, the recipient's tax id as sent, and the totals the note will state.
        expect(queued.items).toHaveLength(2)
        expect(queued.recipient?.name).toBe("Auto Peças Carioca S.A.")
        expect(queued.totals.total).toBe(17822)
        expect(queued.totals.products).toBe(17267)

        const done = yield* settled(t.token, queued.id)
        expect(done.status, JSON.stringify(done.last_error)).toBe("authorized")
        const key = done.authority!.access_key
        expect(isValidNfeAccessKey(key)).toBe(true)
        // cUF 35, model 55, series 001, number 000000001, normal emission.
        expect({ state: key.slice(0, 2), model: key.slice(20, 22), series: key.slice(22, 25) }).toEqual({
          state: "35",
          model: "55",
          series: "001"
        })
        expect(key.slice(25, 34)).toBe("000000001")
        expect(done.authority!.protocol).toMatch(/^1[0-9]{14}$/)
        expect(done.totals).toEqual(queued.totals)

        const xml = yield* rawRequest("GET", `/v1/documents/${done.id}/xml`, { token: t.token })
        expect(xml.status, xml.text).toBe(200)
        expect(xml.headers["content-type"]).toContain("application/xml")
        expect(xml.headers["content-disposition"]).toBe(`inline; filename="NFe-${key}.xml"`)
        expect(xml.text).toContain(`<chNFe>${key}</chNFe>`)
        expect(xml.text).toContain(`<nProt>${done.authority!.protocol}</nProt>`)
        expect(Result.isSuccess(validateNfe("nfeProc", xml.text))).toBe(true)
        if (hasXmllint) {
          const checked = xmllintNfe("procNFe_v4.00.xsd", xml.text)
          expect(checked.ok, checked.output).toBe(true)
        }
      }))

    it.effect("the contract's examples of an NF-e and an NFC-e are issued as they are by a São Paulo emitter", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        for (const example of [productInvoiceExample, consumerInvoiceExample]) {
          const done = yield* settled(t.token, accepted(yield* issue(t.token, example)).id)
          expect(done.status, JSON.stringify([done.rejection, done.last_error])).toBe("authorized")
          expect({ type: done.type, reference: done.reference }).toEqual({
            type: example.type,
            reference: example.reference
          })
        }
      }))

    it.effect("each type is numbered apart: the first NF-e, NFC-e and NFS-e of a tenant are each number 1", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = asGoods(accepted(yield* issue(t.token, spConsumerNfe)))
        const nfce = asGoods(accepted(yield* issue(t.token, counterSale)))
        const service = accepted(
          yield* issue(t.token, {
            type: "service_invoice",
            taker: { tax_id: "52998224725", name: "Maria da Silva" },
            service: consultingService,
            amounts: { services: 150000, iss_rate: "2.00" }
          })
        )
        const secondNfe = asGoods(accepted(yield* issue(t.token, spConsumerNfe)))
        expect([nfe.number, nfce.number, service.number, secondNfe.number]).toEqual([1, 1, 1, 2])
        expect(nfce.type).toBe("consumer_invoice")
        const authorizedNfce = yield* settled(t.token, nfce.id)
        expect(authorizedNfce.status, JSON.stringify(authorizedNfce.last_error)).toBe("authorized")
        expect(authorizedNfce.authority!.access_key.slice(20, 22)).toBe("65")
        // The consumer's QR code is in the note (NFC-e only).
        const xml = yield* rawRequest("GET", `/v1/documents/${nfce.id}/xml`, { token: t.token })
        expect(xml.text).toContain("<qrCode>")
        expect(xml.headers["content-disposition"]).toContain(`NFCe-${authorizedNfce.authority!.access_key}.xml`)
        // Lists carry every type.
        const list = yield* rawRequest("GET", "/v1/documents?limit=10", { token: t.token })
        const types = (field(list.json, "data") as Array<unknown>).map((item) => field(item, "type"))
        expect(types.sort()).toEqual(["consumer_invoice", "product_invoice", "product_invoice", "service_invoice"])
        // …and the list filters by type.
        const onlyNfce = yield* rawRequest("GET", "/v1/documents?type=consumer_invoice", { token: t.token })
        expect((field(onlyNfce.json, "data") as Array<unknown>).map((item) => field(item, "id"))).toEqual([nfce.id])
        const unknownType = yield* rawRequest("GET", "/v1/documents?type=freight_invoice", { token: t.token })
        expectError(unknownType, 400, "invalid_request")
      }))

    it.effect("an emitter without a state registration or tax regime is 422 registration_incomplete, nothing taken", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("no-ie")
        const key = yield* createKey(owner, "test")
        const refused = yield* issue(key.token, spSale)
        expectError(refused, 422, "registration_incomplete")
        expect(issuePaths(refused).sort()).toEqual(["registration.crt", "registration.state_registration"])
        const list = yield* rawRequest("GET", "/v1/documents", { token: key.token })
        expect(field(list.json, "data")).toEqual([])
      }))

    it.effect("a sale the national rules refuse is one 400 naming each field, on our own field names", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const refused = yield* issue(t.token, {
          ...spSale,
          items: [{ ...spSale.items[0]!, cfop: "5102" }, spSale.items[1]],
          payments: [{ method: "bank_slip", amount: 100 }]
        })
        expectError(refused, 400, "invalid_request")
        expect(issuePaths(refused)).toEqual(expect.arrayContaining(["items.0.cfop", "payments"]))
        // Shape errors name the field too, and a body of no known type is an issue at `type`.
        const shape = yield* issue(t.token, { ...spSale, items: [{ ...spSale.items[0]!, ncm: "123" }] })
        expectError(shape, 400, "invalid_request")
        expect(issuePaths(shape)).toEqual(["items.0.ncm"])
        const unknown = yield* issue(t.token, { ...spSale, type: "freight_invoice" })
        expect(issuePaths(unknown)).toEqual(["type"])
      }))

    it.effect("magic values: simulate:reject is rejected (999), simulate:unavailable retried, simulate:timeout reconciled once", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const rejected = yield* settled(
          t.token,
          accepted(yield* issue(t.token, { ...spConsumerNfe, notes: "simulate:reject" })).id
        )
        expect({ status: rejected.status, code: rejected.rejection?.code }).toEqual({
          status: "rejected",
          code: "999"
        })
        const retried = yield* settled(
          t.token,
          accepted(yield* issue(t.token, { ...spConsumerNfe, notes: "simulate:unavailable" })).id
        )
        expect(retried.status).toBe("authorized")
        expect(retried.attempts).toBe(3)
        const timedOut = yield* settled(
          t.token,
          accepted(yield* issue(t.token, { ...spConsumerNfe, notes: "simulate:timeout" })).id
        )
        // Authorized by the first attempt, whose answer was lost: found by the second's lookup.
        expect(timedOut.status).toBe("authorized")
        expect(timedOut.attempts).toBe(2)
        expect(timedOut.last_error?.code).toBe("authority_timeout")
      }))

    it.effect("an Idempotency-Key replays the goods document; its PDF is the 80 mm DANFE NFC-e", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const first = yield* issue(t.token, counterSale, "venda-caixa-1")
        const again = yield* issue(t.token, counterSale, "venda-caixa-1")
        expect(again.status).toBe(202)
        expect(again.headers["idempotent-replayed"]).toBe("true")
        expect(decode(again.json).id).toBe(decode(first.json).id)
        const done = yield* settled(t.token, decode(first.json).id)
        expect(done.status).toBe("authorized")
        const pdf = yield* bytesRequest(`/v1/documents/${done.id}/pdf`, t.token)
        expect(pdf.status).toBe(200)
        expect(pdf.headers["content-type"]).toContain("application/pdf")
        expect(pageSizes(pdf.bytes)[0]?.width).toBeCloseTo(226.77, 1)
        const text = pdfText(pdf.bytes).replace(/\s+/g, "")
        expect(text).toContain(asGoods(done).authority!.access_key)
        expect(text).toContain("DocumentoAuxiliardaNotaFiscaldeConsumidorEletrônica")
      }))

    it.effect("a cancellation (event 110111): cancel_requested, then cancelled with the event's protocol; once only", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const done = yield* settled(t.token, accepted(yield* issue(t.token, spConsumerNfe)).id)
        expect(done.status).toBe("authorized")
        const reason = "Venda desfeita: o cliente devolveu a mercadoria."
        const requested = yield* rawRequest("POST", `/v1/documents/${done.id}/cancel`, {
          token: t.token,
          body: { reason_code: "other", reason }
        })
        expect(requested.status, requested.text).toBe(202)
        expect(asGoods(decode(requested.json))).toMatchObject({
          status: "cancel_requested",
          cancellation: { reason_code: "other", reason, cancelled_at: null, protocol: null, error: null }
        })
        const cancelled = yield* until(t.token, done.id, "cancelled")
        expect(cancelled.cancellation?.protocol).toMatch(/^1[0-9]{14}$/)
        expect(cancelled.cancellation?.cancelled_at).toBeInstanceOf(Date)
        // The note's XML stays available, and says the note is cancelled.
        const xml = yield* rawRequest("GET", `/v1/documents/${done.id}/xml`, { token: t.token })
        expect(xml.status).toBe(200)
        expect(xml.headers["etd-document-status"]).toBe("cancelled")
        // Its DANFE says so: the A4 NF-e's, page 1 with the mark.
        const pdf = yield* bytesRequest(`/v1/documents/${done.id}/pdf`, t.token)
        expect(pdf.status).toBe(200)
        expect(pdf.headers["etd-document-status"]).toBe("cancelled")
        expect(pageSizes(pdf.bytes)[0]?.width).toBeCloseTo(595.28, 1)
        expect(pdfText(pdf.bytes)).toContain("NF-e CANCELADA")
        // A cancelled note is not cancelled again; an analysis request is a service invoice's.
        const twice = yield* rawRequest("POST", `/v1/documents/${done.id}/cancel`, {
          token: t.token,
          body: { reason_code: "other", reason }
        })
        expectError(twice, 409, "invalid_state")
        const other = yield* settled(t.token, accepted(yield* issue(t.token, spConsumerNfe)).id)
        const analysis = yield* rawRequest("POST", `/v1/documents/${other.id}/cancel`, {
          token: t.token,
          body: { reason_code: "other", reason, analysis: true }
        })
        expectError(analysis, 409, "invalid_state")
      }))

    it.effect("a cancellation the authority refuses (simulate:cancel-reject, 501) leaves the note authorized with the error", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const done = yield* settled(
          t.token,
          accepted(yield* issue(t.token, { ...spConsumerNfe, notes: "simulate:cancel-reject" })).id
        )
        const requested = yield* rawRequest("POST", `/v1/documents/${done.id}/cancel`, {
          token: t.token,
          body: { reason_code: "other", reason: "Cancelamento pedido depois do prazo legal." }
        })
        expect(requested.status, requested.text).toBe(202)
        const refused = yield* until(t.token, done.id, "authorized", (document) => document.cancellation?.error != null)
        expect(refused.cancellation?.error?.code).toBe("501")
        expect(refused.cancellation?.cancelled_at).toBeNull()
      }))
  })
}
