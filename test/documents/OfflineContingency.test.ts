/**
 * NFC-e offline contingency over HTTP with the built-in simulator: an NFC-e that allows it is
 * issued offline (tpEmis 9) when its first attempt cannot reach the SEFAZ at all (`simulate:offline`),
 * handed out at once (`contingency`: its signed XML, its DANFE NFC-e saying so, its event), and
 * transmitted until authorized under the same key. Without the switch, or after a timeout (when the
 * online note may exist), the service keeps asking online: never two notes for one sale. The
 * end-to-end test against the local SEFAZ over mTLS is in SefazEndToEnd.test.ts.
 */
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import { makeApp } from "../../src/App.js"
import { isValidNfeAccessKey } from "../../src/authority/sefaz/NfeAccessKey.js"
import { validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { OFFLINE_REASON } from "../../src/documents/GoodsIssuance.js"
import { productInvoiceExample } from "../../src/domain/GoodsExamples.js"
import { expectError } from "../support/accounts.js"
import { pdfText } from "../support/DanfseText.js"
import {
  accepted,
  goodsAppSettings,
  goodsTenant,
  issue,
  settled,
  simulatorsTimingOutAfter,
  until
} from "../support/GoodsApp.js"
import { counterSale, hasXmllint, xmllintNfe } from "../support/NfeXml.js"
import {
  bytesRequest,
  databaseLayer,
  httpServerTest,
  rawRequest,
  testConfig,
  testDatabases
} from "../support/TestApp.js"

// Only a first attempt goes offline, and a timed-out one never does: the simulators' calls get three
// seconds, so that loading the NF-e schemas on a loaded machine cannot time the first attempt out.
const simulators = simulatorsTimingOutAfter("3 seconds")

// Retries four seconds apart: long enough to read a note in contingency before its transmission, even
// on a loaded machine.
const paced = goodsAppSettings({
  baseDelay: Duration.seconds(4),
  maxDelay: Duration.seconds(5),
  window: Duration.seconds(30)
})

/** The events recorded about a document, oldest first: their type and the status the document then had. */
const eventsOf = (documentId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly type: string; readonly status: string }>`
      SELECT type, data -> 'object' ->> 'status' AS status FROM events
      WHERE data -> 'object' ->> 'id' = ${documentId} ORDER BY created_at, id`)

for (const database of testDatabases) {
  layer(
    makeApp(testConfig(paced), databaseLayer(database), simulators.services, simulators.goods).pipe(
      Layer.provideMerge(httpServerTest)
    ),
    { timeout: 60_000, excludeTestServices: true }
  )(`NFC-e offline contingency on the simulator (${database})`, (it) => {
    it.effect("the SEFAZ unreachable: issued offline at once (contingency, its signed note and DANFE), then transmitted and authorized under the same key", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const sale = { ...counterSale, offline_contingency: true, notes: "Caixa 3 simulate:offline" }
        const id = accepted(yield* issue(t.token, sale)).id

        const offline = yield* until(t.token, id, "contingency")
        const contingency = offline.contingency!
        expect(offline.authority).toBeNull()
        expect(isValidNfeAccessKey(contingency.access_key)).toBe(true)
        expect(contingency.access_key.slice(34, 35)).toBe("9") // tpEmis inside the key
        expect(contingency.reason).toBe(OFFLINE_REASON)
        expect(contingency.since.getTime()).toBeGreaterThanOrEqual(
          Math.floor(offline.created_at.getTime() / 1000) * 1000
        )
        expect(contingency.transmit_by.getTime()).toBe(offline.created_at.getTime() + 24 * 3_600_000)
        expect(offline.last_error).toBeNull()

        // What the consumer gets meanwhile: the signed offline note and its DANFE NFC-e.
        const xml = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: t.token })
        expect(xml.status, xml.text).toBe(200)
        expect(xml.headers["etd-document-status"]).toBe("contingency")
        expect(xml.headers["content-disposition"]).toContain(`NFCe-${contingency.access_key}.xml`)
        expect(xml.text).toMatch(/^(<\?xml[^>]*\?>)?<NFe /)
        expect(xml.text).toContain(`Id="NFe${contingency.access_key}"`)
        expect(xml.text).toContain("<tpEmis>9</tpEmis>")
        expect(xml.text).toContain(`<xJust>${OFFLINE_REASON}</xJust>`)
        expect(xml.text).toMatch(/<dhCont>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d-03:00<\/dhCont>/)
        // The offline QR code: key|version|environment|day|total|buyer's kind|buyer's id|signature.
        const qr = /<qrCode>(?:<!\[CDATA\[)?([^<\]]+)/.exec(xml.text)?.[1] ?? ""
        const parameters = qr.split("?p=")[1]?.split("|") ?? []
        expect(parameters).toHaveLength(8)
        expect(parameters[0]).toBe(contingency.access_key)
        expect(parameters[7]).toMatch(/^[A-Za-z0-9+/]{40,}={0,2}$/)
        expect(Result.isSuccess(validateNfe("NFe", xml.text))).toBe(true)
        if (hasXmllint) {
          const checked = xmllintNfe("nfe_v4.00.xsd", xml.text)
          expect(checked.ok, checked.output).toBe(true)
        }
        const pdf = yield* bytesRequest(`/v1/documents/${id}/pdf`, t.token)
        expect(pdf.status).toBe(200)
        const text = pdfText(pdf.bytes)
        expect(text).toContain("EMITIDA EM CONTINGÊNCIA")
        expect(text.replace(/\s+/g, "")).toContain(contingency.access_key)

        // Not authorized yet, so nothing to cancel.
        const cancel = yield* rawRequest("POST", `/v1/documents/${id}/cancel`, {
          token: t.token,
          body: { reason_code: "other", reason: "Venda desfeita no caixa pelo cliente." }
        })
        expectError(cancel, 409, "invalid_state")

        const authorized = yield* until(t.token, id, "authorized")
        expect(authorized.authority?.access_key).toBe(contingency.access_key)
        expect(authorized.authority?.protocol).toMatch(/^1[0-9]{14}$/)
        expect(authorized.contingency).toEqual(contingency)
        expect(authorized.attempts).toBeGreaterThanOrEqual(2)
        const processed = yield* rawRequest("GET", `/v1/documents/${id}/xml`, { token: t.token })
        expect(processed.headers["etd-document-status"]).toBe("authorized")
        expect(processed.text).toContain("<nfeProc")
        expect(processed.text).toContain(`<chNFe>${contingency.access_key}</chNFe>`)
        expect(processed.text).toContain("<tpEmis>9</tpEmis>")

        expect(yield* eventsOf(id)).toEqual([
          { type: "document.contingency", status: "contingency" },
          { type: "document.authorized", status: "authorized" }
        ])
        const listed = yield* rawRequest("GET", "/v1/documents?status=contingency", { token: t.token })
        expect(listed.status, listed.text).toBe(200)
      }))

    it.effect("an offline NFC-e the authority rejects at its transmission is rejected, and its number is not voidable", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const sale = { ...counterSale, offline_contingency: true, notes: "simulate:offline simulate:reject" }
        const id = accepted(yield* issue(t.token, sale)).id
        yield* until(t.token, id, "contingency")
        const rejected = yield* until(t.token, id, "rejected")
        expect(rejected.rejection?.code).toBe("999")
        expect(rejected.contingency?.access_key.slice(34, 35)).toBe("9")
        expect((yield* eventsOf(id)).map((event) => event.type)).toEqual(["document.contingency", "document.rejected"])
        // The consumer holds the printed note: its number stays taken.
        const voiding = yield* rawRequest("POST", "/v1/voided-numbers", {
          token: t.token,
          body: {
            type: "consumer_invoice",
            from: rejected.number,
            to: rejected.number,
            reason: "Nota rejeitada na transmissão da contingência"
          }
        })
        expectError(voiding, 409, "conflict")
        expect(voiding.text).toContain(id)
      }))

    it.effect("without offline_contingency an unreachable SEFAZ is asked again online: the NFC-e waits submitting, not offline", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const id = accepted(yield* issue(t.token, { ...counterSale, notes: "simulate:offline" })).id
        const waiting = yield* until(t.token, id, "submitting", (document) => document.last_error !== null)
        expect(waiting.contingency).toBeNull()
        expect(waiting.last_error?.code).toBe("authority_unavailable")
        expect(yield* eventsOf(id)).toEqual([])
      }))

    it.effect("a timeout is no reason to go offline (the online note may exist): it is looked up and adopted, one note", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const sale = { ...counterSale, offline_contingency: true, notes: "simulate:timeout" }
        const done = yield* settled(t.token, accepted(yield* issue(t.token, sale)).id)
        expect(done.status).toBe("authorized")
        expect(done.contingency).toBeNull()
        expect(done.authority?.access_key.slice(34, 35)).toBe("1")
        expect((yield* eventsOf(done.id)).map((event) => event.type)).toEqual(["document.authorized"])
      }))

    it.effect("an NF-e has no offline contingency: 400 at offline_contingency, nothing taken", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const refused = yield* issue(t.token, { ...productInvoiceExample, offline_contingency: true })
        expectError(refused, 400, "invalid_request")
        expect(refused.text).toContain("offline_contingency")
      }))
  })
}
