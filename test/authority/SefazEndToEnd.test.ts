/**
 * Goods invoices end to end against the local SEFAZ (tools/local-authority/LocalSefaz.ts) over
 * real mutual TLS with the tenant's A1 certificate: the API takes the sale, the worker builds,
 * signs, validates and sends the note to the SEFAZ target configured for test keys, and the
 * document ends authorized with the authority's protocol in its `nfeProc`, which Debian's `xmllint`
 * validates against the official schemas and `xmlsec1` verifies. A timeout is reconciled by the
 * note's key, never sent as a second note; a cancellation is the tenant's signed event 110111; a
 * tenant without a certificate is refused at acceptance.
 */
import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Metric, Schema } from "effect"
import { makeApp } from "../../src/App.js"
import { makeGoodsAuthority, TaxAuthoritiesLive, withGoodsTimeout } from "../../src/authority/Authorities.js"
import { danfeBarcodeBox } from "../../src/authority/danfe/DanfeBlocks.js"
import { GoodsAuthorities } from "../../src/authority/GoodsAuthority.js"
import { eventBatch } from "../../src/authority/sefaz/NfeCancellation.js"
import { makeSefazAuthority } from "../../src/authority/sefaz/SefazAdapter.js"
import { AppConfig, type AppConfigShape } from "../../src/Config.js"
import { makeAuthorizerSweep } from "../../src/documents/AuthorizerMonitor.js"
import { AuthorizerStatusRepo } from "../../src/documents/AuthorizerStatusRepo.js"
import type { AuthorizerStatus } from "../../src/domain/AuthorizerStatus.js"
import { AnyDocument, type GoodsDocument } from "../../src/domain/GoodsDocument.js"
import type { GoodsInvoiceRequest } from "../../src/domain/GoodsInvoice.js"
import { authorizerInOperation } from "../../src/telemetry/Metrics.js"
import { type LocalSefaz, startLocalSefaz } from "../../tools/local-authority/LocalSefaz.js"
import { expectError, field } from "../support/accounts.js"
import { decodeCode128, rasterize, readQrCode } from "../support/Barcode.js"
import { testCa, testRoot } from "../support/certificates.js"
import { pdfText } from "../support/DanfseText.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { certifiedTenant } from "../support/NationalApp.js"
import {
  counterSale,
  hasXmllint,
  hasXmlsec1,
  interstateSale,
  simplesSale,
  skippedWithout,
  xmllintCancellation,
  xmllintEvent,
  xmllintNfe,
  xmllintVoiding,
  xmlsecVerifyNfe
} from "../support/NfeXml.js"
import { completeRegistration } from "../support/registration.js"
import {
  bytesRequest,
  databaseLayer,
  httpServerTest,
  rawRequest,
  testConfig,
  testDatabases
} from "../support/TestApp.js"
import { hasTool } from "../support/tools.js"

// Above a receipt's two asks (0.5 s and 1 s apart), below the 3 s a `simulate:timeout` answer is held.
const CALL_TIMEOUT = Duration.millis(2500)

const fast: Partial<AppConfigShape> = {
  loginRateLimit: { perMinute: 100_000 },
  rateLimit: { perSecond: 100_000, burst: 100_000 },
  queue: { instanceId: "t", shutdownGrace: Duration.seconds(1) },
  issuance: { concurrency: 4, pollInterval: Duration.millis(20), lease: Duration.seconds(60) },
  retry: { baseDelay: Duration.millis(50), maxDelay: Duration.millis(200), window: Duration.seconds(30) }
}

class Sefaz extends Context.Service<Sefaz, LocalSefaz>()("test/LocalSefaz") {}

// The SEFAZ takes client certificates of the test hierarchy only, as the real ones take ICP-Brasil's.
const LocalSefazLive = Layer.effect(
  Sefaz,
  Effect.acquireRelease(
    Effect.promise(() =>
      startLocalSefaz({ clientRoots: [testRoot().certPem, testCa().certPem], timeoutAfterMs: 3_000 })
    ),
    (sefaz) => Effect.promise(() => sefaz.close())
  )
)

/** Test keys' goods invoices to the local SEFAZ; live keys' to the simulator. */
const GoodsOnLocalSefaz = Layer.effect(
  GoodsAuthorities,
  Effect.gen(function*() {
    const sefaz = yield* Sefaz
    const test = yield* makeSefazAuthority({
      environment: "test",
      system: "homologation",
      timeout: CALL_TIMEOUT,
      baseUrl: sefaz.origin,
      ca: sefaz.caPem
    })
    return GoodsAuthorities.fromEach({
      live: yield* Effect.orDie(makeGoodsAuthority("live", (yield* AppConfig).authority.live)),
      test: withGoodsTimeout(test, CALL_TIMEOUT)
    })
  })
)

const app = (database: (typeof testDatabases)[number]) =>
  Layer.merge(
    makeApp(
      testConfig(fast),
      databaseLayer(database),
      TaxAuthoritiesLive,
      GoodsOnLocalSefaz.pipe(Layer.provide(LocalSefazLive))
    ).pipe(Layer.provideMerge(httpServerTest)),
    LocalSefazLive
  )

const decode = Schema.decodeUnknownSync(Schema.toCodecJson(AnyDocument))

/** A tenant with a certificate for its CNPJ, declared as a goods emitter (`registration` over the SP one). */
const emitter = (label: string, registration: Record<string, unknown> = {}) =>
  Effect.gen(function*() {
    const tenant = yield* certifiedTenant(label)
    const patched = yield* rawRequest("PATCH", `/v1/tenants/${tenant.owner.tenantId}`, {
      token: tenant.owner.session,
      body: {
        registration: { ...completeRegistration, state_registration: "110042490114", crt: "normal", ...registration }
      }
    })
    expect(patched.status, patched.text).toBe(200)
    return tenant
  })

const issue = (token: string, body: GoodsInvoiceRequest) =>
  Effect.map(rawRequest("POST", "/v1/documents", { token, body }), (response) => {
    expect(response.status, response.text).toBe(202)
    return decode(response.json)
  })

const settled = (token: string, id: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 400; i++) {
      const document = decode((yield* rawRequest("GET", `/v1/documents/${id}`, { token })).json)
      if (document.type !== "service_invoice" && ["authorized", "rejected", "failed"].includes(document.status)) {
        return document satisfies GoodsDocument
      }
      yield* Effect.sleep(Duration.millis(50))
    }
    return yield* Effect.die(new Error(`document ${id} did not settle`))
  })

/** The note's XML from the API, checked by the tools the authorities' integrators use. */
const checkedXml = (token: string, document: GoodsDocument) =>
  Effect.gen(function*() {
    const response = yield* rawRequest("GET", `/v1/documents/${document.id}/xml`, { token })
    expect(response.status, response.text).toBe(200)
    const xml = response.text
    expect(xml).toContain(`<chNFe>${document.authority!.access_key}</chNFe>`)
    if (hasXmllint) {
      const valid = xmllintNfe("procNFe_v4.00.xsd", xml)
      expect(valid.ok, valid.output).toBe(true)
    }
    if (hasXmlsec1) {
      const verified = xmlsecVerifyNfe(xml, "infNFe", [testRoot().certPem, testCa().certPem])
      expect(verified.ok, verified.output).toBe(true)
    }
    yield* checkedDanfe(token, document, xml)
    return xml
  })

const hasPoppler = hasTool("pdftotext") && hasTool("pdftoppm")

/**
 * The note's DANFE from the API, read back by poppler and ZXing: the key, the protocol and the
 * emitter printed, and the NF-e's barcode or the NFC-e's QR code decoding to what the XML says.
 */
const checkedDanfe = (token: string, document: GoodsDocument, xml: string) =>
  Effect.gen(function*() {
    const pdf = yield* bytesRequest(`/v1/documents/${document.id}/pdf`, token)
    expect(pdf.status).toBe(200)
    if (!hasPoppler) return
    const text = pdfText(pdf.bytes).replace(/\s+/g, "")
    const { access_key, protocol } = document.authority!
    expect(text).toContain(access_key)
    expect(text).toContain(protocol)
    expect(text).toContain(
      /<emit><CNPJ>(\d+)<\/CNPJ>/.exec(xml)![1]!.replace(/^(\d{2})(\d{3})(\d{3})(\d{4})(\d{2})$/, "$1.$2.$3/$4-$5")
    )
    if (document.type === "consumer_invoice") {
      expect(readQrCode(pdf.bytes)).toBe(
        /<qrCode>(.*?)<\/qrCode>/.exec(xml)![1]!.replace(/&amp;/g, "&")
      )
    } else {
      const box = danfeBarcodeBox
      expect(
        decodeCode128(rasterize(pdf.bytes), {
          x: box.x + 1,
          y: box.y + 1,
          width: box.width - 2,
          height: box.height - 2
        })
      )
        .toBe(access_key)
    }
  })

/** A sale of a São Paulo emitter to a consumer in São Paulo, in the normal regime. */
const spConsumerSale: GoodsInvoiceRequest = {
  ...simplesSale,
  recipient: {
    ...simplesSale.recipient!,
    address: { ...simplesSale.recipient!.address!, municipality_code: "3550308", state: "SP", postal_code: "01310100" }
  },
  items: simplesSale.items.map((item) => ({ ...item, icms: { origin: 0, cst: "00", rate: "18.00" } }))
}

for (const database of testDatabases) {
  layer(app(database), { timeout: 90_000, excludeTestServices: true })(
    `goods invoices against the local SEFAZ over mutual TLS (${database})`,
    (it) => {
      it.effect(
        skippedWithout(
          "xmllint and xmlsec1",
          hasXmllint && hasXmlsec1,
          "an NF-e of a São Paulo company and its NFC-e: authorized by the SEFAZ, schema-valid and signed",
          "the file checks use Debian's libxml2-utils and xmlsec1"
        ),
        () =>
          Effect.gen(function*() {
            const sefaz = yield* Sefaz
            const t = yield* emitter("sefaz-sp")
            const nfe = yield* settled(t.token, (yield* issue(t.token, interstateSale)).id)
            expect(nfe.status, JSON.stringify([nfe.rejection, nfe.last_error])).toBe("authorized")
            const xml = yield* checkedXml(t.token, nfe)
            // The protocol is the SEFAZ's own: the one it recorded for the key.
            const recorded = sefaz.notes().find((note) => note.accessKey === nfe.authority!.access_key)
            expect(recorded?.protocol).toBe(nfe.authority!.protocol)
            expect(xml).toContain(`<CNPJ>${t.taxId}</CNPJ>`)

            const nfce = yield* settled(t.token, (yield* issue(t.token, counterSale)).id)
            expect(nfce.status, JSON.stringify([nfce.rejection, nfce.last_error])).toBe("authorized")
            const consumerXml = yield* checkedXml(t.token, nfce)
            expect(consumerXml).toContain("<qrCode>")
            expect(nfce.authority!.access_key.slice(20, 22)).toBe("65")
          })
      )

      it.effect("an NF-e of a Simples Nacional shop in Rio Grande do Sul (CSOSN)", () =>
        Effect.gen(function*() {
          const t = yield* emitter("sefaz-rs", {
            crt: "simples_nacional",
            state_registration: "0960123456",
            address: {
              street: "Rua dos Andradas",
              number: "1001",
              complement: null,
              district: "Centro Histórico",
              municipality_code: "4314902",
              state: "RS",
              postal_code: "90020007"
            }
          })
          const nfe = yield* settled(t.token, (yield* issue(t.token, simplesSale)).id)
          expect(nfe.status, JSON.stringify([nfe.rejection, nfe.last_error])).toBe("authorized")
          expect(nfe.authority!.access_key.slice(0, 2)).toBe("43")
          const xml = yield* checkedXml(t.token, nfe)
          expect(xml).toContain("<CSOSN>101</CSOSN>")
          expect(xml).toContain("<CRT>1</CRT>")
        }))

      it.effect("an NF-e of a Rio de Janeiro company, a state whose notes the SVRS authorizes", () =>
        Effect.gen(function*() {
          const t = yield* emitter("sefaz-rj", {
            state_registration: "81234567",
            address: {
              street: "Rua da Assembleia",
              number: "10",
              complement: null,
              district: "Centro",
              municipality_code: "3304557",
              state: "RJ",
              postal_code: "20011000"
            }
          })
          const sale: GoodsInvoiceRequest = {
            ...interstateSale,
            recipient: {
              ...interstateSale.recipient!,
              tax_id: "11222333000181",
              state_registration: "110042490114",
              address: {
                street: "Avenida Paulista",
                number: "1578",
                district: "Bela Vista",
                municipality_code: "3550308",
                state: "SP",
                postal_code: "01310200"
              }
            }
          }
          const nfe = yield* settled(t.token, (yield* issue(t.token, sale)).id)
          expect(nfe.status, JSON.stringify([nfe.rejection, nfe.last_error])).toBe("authorized")
          expect(nfe.authority!.access_key.slice(0, 2)).toBe("33")
          const xml = yield* checkedXml(t.token, nfe)
          expect(xml).toContain("<UF>RJ</UF>")
        }))

      it.effect("correction letters (110110) registered by the SEFAZ in order, each schema-valid and signed by the tenant", () =>
        Effect.gen(function*() {
          const sefaz = yield* Sefaz
          const t = yield* emitter("sefaz-cce")
          const nfe = yield* settled(t.token, (yield* issue(t.token, interstateSale)).id)
          expect(nfe.status, JSON.stringify([nfe.rejection, nfe.last_error])).toBe("authorized")
          const texts = [
            "Onde se lê Loja B, leia-se Loja C no endereço do destinatário.",
            "Onde se lê Loja B, leia-se Loja C; transportadora: Rápido Paulista Ltda."
          ]
          for (const [i, text] of texts.entries()) {
            const answer = yield* rawRequest("POST", `/v1/documents/${nfe.id}/correction`, {
              token: t.token,
              body: { text }
            })
            expect(answer.status, answer.text).toBe(200)
            expect(answer.json).toMatchObject({ sequence: i + 1, status: "registered", text })
            const recorded = sefaz.notes().find((note) => note.accessKey === nfe.authority!.access_key)!
            const letter = recorded.corrections[i]!
            expect(letter.sequence).toBe(i + 1)
            expect((answer.json as { protocol: string }).protocol).toBe(letter.protocol)
            if (hasXmllint) {
              const valid = xmllintEvent("envEvento_v1.00.xsd", eventBatch("1", letter.eventXml))
              expect(valid.ok, valid.output).toBe(true)
            }
            if (hasXmlsec1) {
              const verified = xmlsecVerifyNfe(letter.eventXml, "infEvento", [testRoot().certPem, testCa().certPem])
              expect(verified.ok, verified.output).toBe(true)
            }
          }
          // An NFC-e takes no letter: refused by the service before the SEFAZ is asked.
          const nfce = yield* settled(t.token, (yield* issue(t.token, counterSale)).id)
          const refused = yield* rawRequest("POST", `/v1/documents/${nfce.id}/correction`, {
            token: t.token,
            body: { text: texts[0] }
          })
          expectError(refused, 409, "invalid_state")
        }))

      it.effect("a batch the SEFAZ processes apart (103) is followed by its receipt until processed, in one attempt", () =>
        Effect.gen(function*() {
          const sefaz = yield* Sefaz
          const t = yield* emitter("sefaz-async")
          const before = sefaz.counts().NfeRetAutorizacao ?? 0
          const document = yield* settled(
            t.token,
            (yield* issue(t.token, { ...spConsumerSale, notes: "simulate:async" })).id
          )
          expect(document.status, JSON.stringify(document.last_error)).toBe("authorized")
          expect(document.attempts).toBe(1)
          // Asked twice: processing (105), then processed (104) with the protocol the SEFAZ recorded.
          expect((sefaz.counts().NfeRetAutorizacao ?? 0) - before).toBe(2)
          const recorded = sefaz.notes().find((note) => note.accessKey === document.authority!.access_key)
          expect(recorded?.protocol).toBe(document.authority!.protocol)
          yield* checkedXml(t.token, document)
        }))

      it.effect(
        skippedWithout(
          "xmllint and xmlsec1",
          hasXmllint && hasXmlsec1,
          "an NFC-e issued offline while the SEFAZ is paused (108), then transmitted: authorized under its offline key",
          "the file checks use Debian's libxml2-utils and xmlsec1"
        ),
        () =>
          Effect.gen(function*() {
            const sefaz = yield* Sefaz
            const t = yield* emitter("sefaz-offline")
            const sale = { ...counterSale, offline_contingency: true, notes: "simulate:offline" }
            const document = yield* settled(t.token, (yield* issue(t.token, sale)).id)
            expect(document.status, JSON.stringify([document.rejection, document.last_error])).toBe("authorized")
            const key = document.contingency!.access_key
            expect(document.authority!.access_key).toBe(key)
            expect(key.slice(34, 35)).toBe("9")
            // The SEFAZ holds one note of that number: the offline one, sent by its transmission.
            const ofNumber = sefaz.notes().filter((note) =>
              note.issuerTaxId === t.taxId && note.model === "65" && note.number === document.number
            )
            expect(ofNumber.map((note) => note.accessKey)).toEqual([key])
            expect(ofNumber[0]!.protocol).toBe(document.authority!.protocol)
            const received = ofNumber[0]!.nfeXml
            expect(received).toContain("<tpEmis>9</tpEmis>")
            expect(xmllintNfe("nfe_v4.00.xsd", received).ok).toBe(true)
            const verified = xmlsecVerifyNfe(received, "infNFe", [testRoot().certPem, testCa().certPem])
            expect(verified.ok, verified.output).toBe(true)
            // The nfeProc, its DANFE NFC-e and the offline QR code (signed by the tenant) read back.
            const xml = yield* checkedXml(t.token, document)
            expect(xml).toContain(received)
          })
      )

      it.effect("each state's authorizers asked by its status service: /readyz details and a gauge, paused when the SEFAZ says so", () =>
        Effect.gen(function*() {
          const sefaz = yield* Sefaz
          yield* emitter("sefaz-status")
          // Every round of this one asks; an instance's round within the interval asks nothing (below).
          const sweep = yield* Effect.provide(makeAuthorizerSweep(Duration.zero), AuthorizerStatusRepo.layer)
          const inSaoPaulo = (statuses: ReadonlyArray<AuthorizerStatus>) =>
            statuses.filter((status) => status.state === "SP").map(({ code, environment, status, type }) => ({
              environment,
              type,
              status,
              code
            }))
          const gauge = (type: string) =>
            Effect.map(
              Metric.value(Metric.withAttributes(authorizerInOperation, { environment: "test", state: "SP", type })),
              (state) => Number(state.value)
            )

          // Live keys' goods go to the simulator here: nothing to ask there.
          expect(inSaoPaulo(yield* sweep)).toEqual([
            { environment: "test", type: "consumer_invoice", status: "in_operation", code: "107" },
            { environment: "test", type: "product_invoice", status: "in_operation", code: "107" }
          ])
          const ready = yield* rawRequest("GET", "/readyz")
          expect(ready.status, ready.text).toBe(200)
          const shown = field(ready.json, "authorizers") as ReadonlyArray<AuthorizerStatus>
          expect(inSaoPaulo(shown)).toHaveLength(2)
          expect(yield* gauge("product_invoice")).toBe(1)

          sefaz.setServiceStatus("108")
          try {
            expect(inSaoPaulo(yield* sweep).map((status) => [status.status, status.code])).toEqual([
              ["paused", "108"],
              ["paused", "108"]
            ])
            expect(yield* gauge("consumer_invoice")).toBe(0)
            // Details only: the instance stays ready, its notes wait in the queue.
            const stillReady = yield* rawRequest("GET", "/readyz")
            expect(stillReady.status).toBe(200)
            expect(inSaoPaulo(field(stillReady.json, "authorizers") as ReadonlyArray<AuthorizerStatus>)[0]?.status)
              .toBe("paused")
            // Another instance within the interval: the authorities are not asked again, the answers are shared.
            const asked = sefaz.counts().NfeStatusServico ?? 0
            const patient = yield* Effect.provide(makeAuthorizerSweep(Duration.hours(1)), AuthorizerStatusRepo.layer)
            expect(inSaoPaulo(yield* patient).map((status) => status.status)).toEqual(["paused", "paused"])
            expect(sefaz.counts().NfeStatusServico ?? 0).toBe(asked)
          } finally {
            sefaz.setServiceStatus("107")
          }
        }))

      it.effect("a timeout is reconciled by the note's key: authorized once, never sent as a second note", () =>
        Effect.gen(function*() {
          const sefaz = yield* Sefaz
          const t = yield* emitter("sefaz-timeout")
          const document = yield* settled(
            t.token,
            (yield* issue(t.token, { ...spConsumerSale, notes: "simulate:timeout" })).id
          )
          expect(document.status, JSON.stringify(document.last_error)).toBe("authorized")
          expect(document.attempts).toBe(2)
          expect(document.last_error?.code).toBe("authority_timeout")
          const notes = sefaz.notes().filter((note) => note.accessKey === document.authority!.access_key)
          expect(notes).toHaveLength(1)
          expect(notes[0]!.protocol).toBe(document.authority!.protocol)
        }))

      it.effect("a cancellation (110111) registered by the SEFAZ: its event schema-valid and signed by the tenant", () =>
        Effect.gen(function*() {
          const sefaz = yield* Sefaz
          const t = yield* emitter("sefaz-cancel")
          const document = yield* settled(t.token, (yield* issue(t.token, spConsumerSale)).id)
          expect(document.status).toBe("authorized")
          const requested = yield* rawRequest("POST", `/v1/documents/${document.id}/cancel`, {
            token: t.token,
            body: { reason_code: "issue_error", reason: "Nota emitida com o destinatário errado." }
          })
          expect(requested.status, requested.text).toBe(202)
          let cancelled = document
          for (let i = 0; i < 200 && cancelled.status !== "cancelled"; i++) {
            yield* Effect.sleep(Duration.millis(50))
            cancelled = decode(
              (yield* rawRequest("GET", `/v1/documents/${document.id}`, { token: t.token })).json
            ) as GoodsDocument
          }
          expect(cancelled.status, JSON.stringify(cancelled.cancellation)).toBe("cancelled")
          const recorded = sefaz.notes().find((note) => note.accessKey === document.authority!.access_key)!
          expect(cancelled.cancellation?.protocol).toBe(recorded.cancellation?.protocol)
          const event = recorded.cancellation!.eventXml
          expect(event).toContain("<xJust>Nota emitida com o destinatário errado.</xJust>")
          if (hasXmllint) {
            const valid = xmllintCancellation("envEventoCancNFe_v1.00.xsd", eventBatch("1", event))
            expect(valid.ok, valid.output).toBe(true)
          }
          if (hasXmlsec1) {
            const verified = xmlsecVerifyNfe(event, "infEvento", [testRoot().certPem, testCa().certPem])
            expect(verified.ok, verified.output).toBe(true)
          }
          // Through the SEFAZ's event service, once: the first attempt's answer arrived.
          expect(sefaz.counts().RecepcaoEvento).toBeGreaterThanOrEqual(1)
        }))

      it.effect("a rejected note's number voided by the SEFAZ (inutilização): schema-valid, signed by the tenant, once", () =>
        Effect.gen(function*() {
          const sefaz = yield* Sefaz
          const t = yield* emitter("sefaz-inut")
          const rejected = yield* settled(
            t.token,
            (yield* issue(t.token, { ...spConsumerSale, notes: "simulate:reject" })).id
          )
          expect(rejected.status).toBe("rejected")
          const body = {
            type: "product_invoice",
            from: 1,
            to: 1,
            reason: "Nota rejeitada pela SEFAZ e nunca autorizada"
          }
          const voided = yield* rawRequest("POST", "/v1/voided-numbers", { token: t.token, body })
          expect(voided.status, voided.text).toBe(200)
          expect(voided.json).toMatchObject({ status: "registered", from: 1, to: 1 })
          const recorded = sefaz.voided().filter((range) => range.issuerTaxId === t.taxId)
          expect(recorded).toHaveLength(1)
          expect((voided.json as { protocol: string }).protocol).toBe(recorded[0]!.protocol)
          if (hasXmllint) {
            const valid = xmllintVoiding("inutNFe_v4.00.xsd", recorded[0]!.requestXml)
            expect(valid.ok, valid.output).toBe(true)
          }
          if (hasXmlsec1) {
            const verified = xmlsecVerifyNfe(recorded[0]!.requestXml, "infInut", [testRoot().certPem, testCa().certPem])
            expect(verified.ok, verified.output).toBe(true)
          }
          // The same request again is answered from what was recorded: the SEFAZ is not asked twice.
          const again = yield* rawRequest("POST", "/v1/voided-numbers", { token: t.token, body })
          expect(again.json).toEqual(voided.json)
          expect(sefaz.voided().filter((range) => range.issuerTaxId === t.taxId)).toHaveLength(1)
        }))

      it.effect("a rejection is final with the SEFAZ's code; a tenant without a certificate is refused at acceptance", () =>
        Effect.gen(function*() {
          const t = yield* emitter("sefaz-reject")
          const rejected = yield* settled(
            t.token,
            (yield* issue(t.token, { ...spConsumerSale, notes: "simulate:reject" })).id
          )
          expect({ status: rejected.status, code: rejected.rejection?.code }).toEqual({
            status: "rejected",
            code: "999"
          })
          const owner = yield* registerOwner("sefaz-nocert")
          yield* rawRequest("PATCH", `/v1/tenants/${owner.tenantId}`, {
            token: owner.session,
            body: { registration: { ...completeRegistration, state_registration: "110042490114", crt: "normal" } }
          })
          const key = yield* createKey(owner, "test")
          const refused = yield* rawRequest("POST", "/v1/documents", { token: key.token, body: spConsumerSale })
          expectError(refused, 422, "credential_required")
        }))
    }
  )
}
