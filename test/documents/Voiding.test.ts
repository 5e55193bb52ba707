/**
 * Number voiding (inutilização) through the API on the built-in simulator, on both databases:
 * only numbers drawn and held by no document but rejected or failed ones, answered in the request
 * (registered with a protocol and `numbers.voided`, or refused with the authority's code),
 * listed and read back, the same request again answered as before; overlapping ranges refused, and
 * two requests at once never void the same number twice.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeApp } from "../../src/App.js"
import { TaxAuthoritiesLive } from "../../src/authority/Authorities.js"
import { AppConfigLive } from "../../src/Config.js"
import { VoidedNumbers } from "../../src/domain/Voiding.js"
import { expectError, field } from "../support/accounts.js"
import {
  accepted,
  changedGoodsSimulator,
  goodsTenant,
  issue,
  losingFirstAnswer,
  LOST_ANSWER,
  quickRetries,
  settled
} from "../support/GoodsApp.js"
import { interstateSale } from "../support/NfeXml.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, testDatabases } from "../support/TestApp.js"

const decodeVoiding = Schema.decodeUnknownSync(Schema.toCodecJson(VoidedNumbers))

/** The simulator, but for the first answer of each voiding whose reason says LOST_ANSWER. */
const goodsAuthorities = changedGoodsSimulator((authority) => ({
  ...authority,
  voidNumbers: losingFirstAnswer(
    authority.voidNumbers,
    (request) => request.reason.includes(LOST_ANSWER) ? request.voidingId : undefined
  )
}))

/** Issues NF-e documents one after the other (numbers 1, 2, …), each to its end: rejected when `rejected`. */
const issueInOrder = (token: string, outcomes: ReadonlyArray<"rejected" | "authorized">) =>
  Effect.forEach(outcomes, (outcome) =>
    Effect.gen(function*() {
      const body = outcome === "rejected" ? { ...interstateSale, notes: "simulate:reject" } : interstateSale
      const done = yield* settled(token, accepted(yield* issue(token, body)).id)
      expect(done.status).toBe(outcome)
      return done
    }))

const REASON = "Notas rejeitadas pela SEFAZ e nunca autorizadas"

const voidNumbers = (token: string, body: Record<string, unknown>) =>
  rawRequest("POST", "/v1/voided-numbers", { token, body: { type: "product_invoice", reason: REASON, ...body } })

for (const database of testDatabases) {
  layer(
    makeApp(
      testConfig(quickRetries),
      databaseLayer(database),
      TaxAuthoritiesLive.pipe(Layer.provide(AppConfigLive)),
      goodsAuthorities
    ).pipe(Layer.provideMerge(httpServerTest)),
    { timeout: 90_000, excludeTestServices: true }
  )(`number voiding on the simulator (${database})`, (it) => {
    it.effect("voids the numbers of rejected documents, with a protocol and numbers.voided; never a number in use", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        const [first, second] = yield* issueInOrder(t.token, ["rejected", "authorized", "rejected", "rejected"])
        expect([first!.number, second!.number]).toEqual([1, 2])
        const one = yield* voidNumbers(t.token, { from: 1, to: 1 })
        expect(one.status, one.text).toBe(200)
        const voided = decodeVoiding(one.json)
        expect(voided).toMatchObject({
          object: "voided_numbers",
          environment: "test",
          type: "product_invoice",
          series: "1",
          from: 1,
          to: 1,
          reason: REASON,
          status: "registered",
          error: null
        })
        expect(voided.id).toMatch(/^vnr_[0-9a-z]{26}$/)
        expect(voided.protocol).toMatch(/^1[0-9]{14}$/)
        const range = yield* voidNumbers(t.token, { from: 3, to: 4, series: "1" })
        expect(decodeVoiding(range.json)).toMatchObject({ from: 3, to: 4, status: "registered" })

        // Number 2 is an authorized note's; 5 was never drawn.
        const held = yield* voidNumbers(t.token, { from: 2, to: 3 })
        expectError(held, 409, "conflict")
        expect(field(held.json, "message")).toContain(second!.id)
        expectError(yield* voidNumbers(t.token, { from: 5, to: 5 }), 409, "invalid_state")
        expectError(yield* voidNumbers(t.token, { type: "consumer_invoice", from: 1, to: 1 }), 409, "invalid_state")
        // The same request again is answered as before; another over the same numbers is refused.
        const again = yield* voidNumbers(t.token, { from: 1, to: 1 })
        expect(decodeVoiding(again.json)).toEqual(voided)
        expectError(yield* voidNumbers(t.token, { from: 1, to: 1, reason: `${REASON}, de novo` }), 409, "conflict")

        const listed = yield* rawRequest("GET", "/v1/voided-numbers?limit=1", { token: t.token })
        expect(listed.status, listed.text).toBe(200)
        expect((field(listed.json, "data") as Array<unknown>).map((v) => field(v, "from"))).toEqual([3])
        expect(field(listed.json, "has_more")).toBe(true)
        const next = yield* rawRequest(
          "GET",
          `/v1/voided-numbers?starting_after=${field(listed.json, "next_cursor")}`,
          {
            token: t.token
          }
        )
        expect((field(next.json, "data") as Array<unknown>).map((v) => field(v, "id"))).toEqual([voided.id])
        const read = yield* rawRequest("GET", `/v1/tenants/${t.owner.tenantId}/voided-numbers/${voided.id}`, {
          token: t.token
        })
        expect(decodeVoiding(read.json)).toEqual(voided)
        const stranger = yield* goodsTenant
        expectError(
          yield* rawRequest("GET", `/v1/voided-numbers/${voided.id}`, { token: stranger.token }),
          404,
          "not_found"
        )

        const sql = yield* SqlClient.SqlClient
        const events = yield* sql<{ readonly object: unknown }>`
          SELECT data -> 'object' AS object FROM events
          WHERE type = 'numbers.voided' AND tenant_id = ${t.owner.tenantId} ORDER BY created_at, id`
        expect(events.map((event) => field(event.object, "from"))).toEqual([1, 3])
      }))

    it.effect("a refused voiding frees its range; a lost answer stays pending and the same request finishes it", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        yield* issueInOrder(t.token, ["rejected", "rejected"])
        const refused = yield* voidNumbers(t.token, { from: 1, to: 1, reason: `${REASON} simulate:reject` })
        expect(refused.status, refused.text).toBe(200)
        expect(decodeVoiding(refused.json)).toMatchObject({ status: "refused", protocol: null, error: { code: "999" } })
        expect(decodeVoiding((yield* voidNumbers(t.token, { from: 1, to: 1 })).json).status).toBe("registered")

        const reason = `${REASON} ${LOST_ANSWER}`
        expectError(yield* voidNumbers(t.token, { from: 2, to: 2, reason }), 503, "service_unavailable")
        const pending = yield* rawRequest("GET", "/v1/voided-numbers", { token: t.token })
        expect((field(pending.json, "data") as Array<unknown>)[0]).toMatchObject({ from: 2, status: "pending" })
        expectError(yield* voidNumbers(t.token, { from: 2, to: 2 }), 409, "conflict")
        const finished = yield* voidNumbers(t.token, { from: 2, to: 2, reason })
        expect(decodeVoiding(finished.json)).toMatchObject({ from: 2, status: "registered" })
      }))

    it.effect("what the layout refuses is a 400 at its field; two requests at once void a number once", () =>
      Effect.gen(function*() {
        const t = yield* goodsTenant
        yield* issueInOrder(t.token, ["rejected", "rejected", "rejected"])
        for (
          const [body, path] of [
            [{ from: 3, to: 2 }, "to"],
            [{ from: 1, to: 1001 }, "to"],
            [{ from: 0, to: 1 }, "from"],
            [{ from: 1, to: 1, reason: "curta" }, "reason"],
            [{ from: 1, to: 1, type: "service_invoice" }, "type"],
            [{ from: 1, to: 1, series: "1000" }, "series"]
          ] as const
        ) {
          const refused = yield* voidNumbers(t.token, body)
          expectError(refused, 400, "invalid_request")
          expect(JSON.stringify(field(refused.json, "issues"))).toContain(`"${path}"`)
        }
        const answers = yield* Effect.all(
          [1, 2, 3].map((n) => voidNumbers(t.token, { from: 1, to: 3, reason: `${REASON} (pedido ${n})` })),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1)
        for (const answer of answers) if (answer.status !== 200) expectError(answer, 409, "conflict")
        const listed = yield* rawRequest("GET", "/v1/voided-numbers", { token: t.token })
        expect(field(listed.json, "data")).toHaveLength(1)
      }))
  })
}
