/**
 * Correction letters (CC-e, event 110110) through the API on the built-in simulator, on both
 * databases: numbered per note, answered in the request (registered with a protocol, or refused
 * with the authority's code, the number free again), listed as the status path, sent as
 * `document.corrected`; refused for what takes none (an NFC-e, an NFS-e, a note not authorized)
 * and for text the layout refuses; two letters at once never share a number.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeApp } from "../../src/App.js"
import { TaxAuthoritiesLive } from "../../src/authority/Authorities.js"
import { AppConfigLive } from "../../src/Config.js"
import { Correction } from "../../src/domain/Correction.js"
import { expectError, field } from "../support/accounts.js"
import {
  authorizedDocument,
  changedGoodsSimulator,
  goodsTenant,
  losingFirstAnswer,
  LOST_ANSWER,
  quickRetries
} from "../support/GoodsApp.js"
import { counterSale, interstateSale } from "../support/NfeXml.js"
import { consultingService } from "../support/samples.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, testDatabases } from "../support/TestApp.js"

const decodeCorrection = Schema.decodeUnknownSync(Schema.toCodecJson(Correction))

const correct = (token: string, id: string, text: string) =>
  rawRequest("POST", `/v1/documents/${id}/correction`, { token, body: { text } })

const TEXT = "Onde se lê Rua da Assembleia, 10, leia-se Rua da Assembleia, 100."

/** The simulator, but for the first answer of each letter whose text says LOST_ANSWER. */
const goodsAuthorities = changedGoodsSimulator((authority) => ({
  ...authority,
  correct: losingFirstAnswer(
    authority.correct,
    (request) => request.text.includes(LOST_ANSWER) ? request.text : undefined
  )
}))

for (const database of testDatabases) {
  layer(
    makeApp(
      testConfig(quickRetries),
      databaseLayer(database),
      TaxAuthoritiesLive.pipe(Layer.provide(AppConfigLive)),
      goodsAuthorities
    ).pipe(Layer.provideMerge(httpServerTest)),
    { timeout: 90_000, excludeTestServices: true }
  )(`correction letters on the simulator (${database})`, (it) => {
    it.effect("an NF-e's letters are registered in order with their protocol, listed, and sent as document.corrected", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = yield* authorizedDocument(t.token, interstateSale)
        const first = yield* correct(t.token, nfe.id, `  ${TEXT}\n  `)
        expect(first.status, first.text).toBe(200)
        expect(decodeCorrection(first.json)).toMatchObject({
          object: "correction",
          document_id: nfe.id,
          sequence: 1,
          text: TEXT,
          status: "registered",
          error: null
        })
        expect(field(first.json, "protocol")).toMatch(/^1[0-9]{14}$/)
        const second = yield* correct(t.token, nfe.id, `${TEXT} Transportadora: Rápido Paulista Ltda.`)
        expect(decodeCorrection(second.json)).toMatchObject({ sequence: 2, status: "registered" })

        const listed = yield* rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: t.token })
        expect(listed.status, listed.text).toBe(200)
        expect((field(listed.json, "data") as Array<unknown>).map((c) => field(c, "sequence"))).toEqual([1, 2])
        expect(field(listed.json, "has_more")).toBe(false)
        // The tenant path answers the same to a member's session.
        const asMember = yield* rawRequest("GET", `/v1/tenants/${t.owner.tenantId}/documents/${nfe.id}/corrections`, {
          token: t.owner.session
        })
        expect(field(asMember.json, "data")).toEqual(field(listed.json, "data"))

        const sql = yield* SqlClient.SqlClient
        const events = yield* sql<{ readonly object: unknown }>`
          SELECT data -> 'object' AS object FROM events
          WHERE type = 'document.corrected' AND data -> 'object' ->> 'document_id' = ${nfe.id}
          ORDER BY created_at, id`
        expect(events.map((event) => field(event.object, "sequence"))).toEqual([1, 2])
        expect(field(events[0]!.object, "protocol")).toBe(field(first.json, "protocol"))
      }))

    it.effect("a letter the authority refuses is kept as refused and its number is used by the next one", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = yield* authorizedDocument(t.token, interstateSale)
        const refused = yield* correct(t.token, nfe.id, `${TEXT} simulate:reject`)
        expect(refused.status, refused.text).toBe(200)
        expect(decodeCorrection(refused.json)).toMatchObject({
          sequence: 1,
          status: "refused",
          protocol: null,
          error: { code: "999" }
        })
        const next = yield* correct(t.token, nfe.id, TEXT)
        expect(decodeCorrection(next.json)).toMatchObject({ sequence: 1, status: "registered" })
        const listed = yield* rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: t.token })
        expect((field(listed.json, "data") as Array<unknown>).map((c) => field(c, "status"))).toEqual([
          "refused",
          "registered"
        ])
      }))

    it.effect("what takes no letter is refused (409), and so is text the layout refuses (400 at text)", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = yield* authorizedDocument(t.token, interstateSale)
        for (
          const text of [
            "curto demais",
            "x".repeat(1001),
            "Correção do endereço — com travessão",
            "Correção 😀 do endereço de entrega",
            "a                  b"
          ]
        ) {
          const refused = yield* correct(t.token, nfe.id, text)
          expectError(refused, 400, "invalid_request")
          expect(JSON.stringify(field(refused.json, "issues"))).toContain("text")
        }
        const nfce = yield* authorizedDocument(t.token, counterSale)
        expectError(yield* correct(t.token, nfce.id, TEXT), 409, "invalid_state")
        const nfse = yield* authorizedDocument(t.token, {
          type: "service_invoice",
          taker: { tax_id: "52998224725", name: "Maria da Silva" },
          service: consultingService,
          amounts: { services: 150000, iss_rate: "2.00" }
        })
        expectError(yield* correct(t.token, nfse.id, TEXT), 409, "invalid_state")
        const cancelled = yield* authorizedDocument(t.token, interstateSale)
        const asked = yield* rawRequest("POST", `/v1/documents/${cancelled.id}/cancel`, {
          token: t.token,
          body: { reason_code: "other", reason: "Venda desfeita pelo cliente na loja." }
        })
        expect(asked.status, asked.text).toBe(202)
        expectError(yield* correct(t.token, cancelled.id, TEXT), 409, "invalid_state")
        // Another tenant's note is not found.
        const stranger = yield* goodsTenant
        expectError(yield* correct(stranger.token, nfe.id, TEXT), 404, "not_found")
        expectError(
          yield* rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: stranger.token }),
          404,
          "not_found"
        )
        // Nothing was written for any of them.
        const listed = yield* rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: t.token })
        expect(field(listed.json, "data")).toEqual([])
      }))

    it.effect("two letters at once never share a number: one is registered, the other waits its turn (409)", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = yield* authorizedDocument(t.token, interstateSale)
        const answers = yield* Effect.all(
          [1, 2, 3, 4].map((n) => correct(t.token, nfe.id, `${TEXT} Volume ${n} de 4.`)),
          { concurrency: "unbounded" }
        )
        const registered = answers.filter((answer) => answer.status === 200)
        expect(registered.length).toBeGreaterThanOrEqual(1)
        for (const answer of answers) {
          if (answer.status !== 200) expectError(answer, 409, "invalid_state")
        }
        const numbers = registered.map((answer) => decodeCorrection(answer.json).sequence)
        expect(new Set(numbers).size).toBe(numbers.length)
        const listed = yield* rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: t.token })
        expect((field(listed.json, "data") as Array<unknown>).map((c) => field(c, "sequence")).sort()).toEqual(
          numbers.sort()
        )
      }))

    it.effect("a letter whose answer is lost stays pending (503) and is finished by the same text, under its number", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = yield* authorizedDocument(t.token, interstateSale)
        const text = `${TEXT} ${LOST_ANSWER}`
        const lost = yield* correct(t.token, nfe.id, text)
        expectError(lost, 503, "service_unavailable")
        const pending = yield* rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: t.token })
        expect(field(pending.json, "data")).toMatchObject([{ sequence: 1, status: "pending", protocol: null }])
        // Another letter waits for this one's answer.
        expectError(yield* correct(t.token, nfe.id, TEXT), 409, "invalid_state")
        const finished = yield* correct(t.token, nfe.id, text)
        expect(finished.status, finished.text).toBe(200)
        expect(decodeCorrection(finished.json)).toMatchObject({ sequence: 1, status: "registered" })
        const next = yield* correct(t.token, nfe.id, TEXT)
        expect(decodeCorrection(next.json)).toMatchObject({ sequence: 2, status: "registered" })
      }))

    it.effect("an NF-e takes 20 letters and no more", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const nfe = yield* authorizedDocument(t.token, interstateSale)
        for (let n = 1; n <= 20; n++) {
          const answer = yield* correct(t.token, nfe.id, `${TEXT} Carta ${n}.`)
          expect(decodeCorrection(answer.json)).toMatchObject({ sequence: n, status: "registered" })
        }
        expectError(yield* correct(t.token, nfe.id, `${TEXT} Carta 21.`), 409, "invalid_state")
      }))
  })
}
