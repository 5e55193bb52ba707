/**
 * Correction letters and number voiding decided across instances: two instances of the service on
 * one database, each with its own pools and HTTP server, take the same tenant's requests at once.
 * The letters of one NF-e are numbered 1, 2, … with no number given twice (the document's row lock),
 * and of overlapping voidings of one series exactly one is taken (the series' row lock).
 */
import { describe, expect, it } from "@effect/vitest"
import { type Context, Duration, Effect, Layer } from "effect"
import { makeApp } from "../../src/App.js"
import { expectError, field } from "../support/accounts.js"
import {
  accepted,
  authorizedDocument,
  goodsSimulatorAuthorities,
  goodsTenant,
  issue,
  settled,
  simulatorAuthorities
} from "../support/GoodsApp.js"
import { interstateSale } from "../support/NfeXml.js"
import { databaseLayer, httpServerTest, rawRequest, testConfig, testDatabases } from "../support/TestApp.js"

const REASON = "Notas rejeitadas pela SEFAZ e nunca autorizadas"

for (const database of testDatabases) {
  describe(`goods events across instances (${database})`, () => {
    it.live(
      "letters of one NF-e and overlapping voidings sent to two instances at once: one numbering, one voiding",
      () =>
        Effect.gen(function*() {
          // One database, built once and shared: each instance gets its own services, pools and server.
          const shared = Layer.succeedContext(yield* Layer.build(databaseLayer(database)))
          const instance = (name: string) =>
            Layer.build(
              makeApp(
                testConfig({
                  queue: { instanceId: name, shutdownGrace: Duration.seconds(1) },
                  rateLimit: { perSecond: 100_000, burst: 100_000 },
                  loginRateLimit: { perMinute: 100_000 }
                }),
                shared,
                simulatorAuthorities,
                goodsSimulatorAuthorities
              ).pipe(Layer.provideMerge(httpServerTest))
            )
          const instances = [yield* instance("first"), yield* instance("second")]
          const on = (context: Context.Context<never>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
            Effect.provide(effect, context as Context.Context<R>)
          const first = instances[0]!

          const t = yield* on(first)(goodsTenant)
          const nfe = yield* on(first)(authorizedDocument(t.token, interstateSale))
          const letters = yield* Effect.all(
            Array.from({ length: 6 }, (_, i) =>
              on(instances[i % 2]!)(
                rawRequest("POST", `/v1/documents/${nfe.id}/correction`, {
                  token: t.token,
                  body: { text: `Correção número ${i + 1}: onde se lê Rua da Assembleia, leia-se Rua Direita.` }
                })
              )),
            { concurrency: "unbounded" }
          )
          // One letter in flight at a time: the others wait their turn (409); none shares a number.
          const registered = letters.filter((letter) => letter.status === 200)
          expect(registered.length).toBeGreaterThanOrEqual(1)
          for (const letter of letters) if (letter.status !== 200) expectError(letter, 409, "invalid_state")
          const numbers = registered.map((letter) => Number(field(letter.json, "sequence"))).sort((a, b) => a - b)
          expect(numbers).toEqual(numbers.map((_, i) => i + 1))
          const listed = yield* on(instances[1]!)(
            rawRequest("GET", `/v1/documents/${nfe.id}/corrections`, { token: t.token })
          )
          expect((field(listed.json, "data") as Array<unknown>).map((letter) => field(letter, "sequence"))).toEqual(
            numbers
          )
          // The next letter, on either instance, takes the next number.
          const next = yield* on(instances[1]!)(
            rawRequest("POST", `/v1/documents/${nfe.id}/correction`, {
              token: t.token,
              body: { text: "Correção seguinte: onde se lê Rua da Assembleia, leia-se Rua Direita, 12." }
            })
          )
          expect(field(next.json, "sequence")).toBe(numbers.length + 1)

          // Two rejected notes leave numbers 2 and 3 of the series to void.
          for (const notes of ["simulate:reject", "simulate:reject"]) {
            const done = yield* on(first)(
              settled(t.token, accepted(yield* on(first)(issue(t.token, { ...interstateSale, notes }))).id)
            )
            expect(done.status).toBe("rejected")
          }
          const voidings = yield* Effect.all(
            [[2, 3], [3, 3], [2, 2], [2, 3]].map(([from, to], i) =>
              on(instances[i % 2]!)(
                rawRequest("POST", "/v1/voided-numbers", {
                  token: t.token,
                  body: { type: "product_invoice", from, to, reason: `${REASON} (pedido ${i + 1})` }
                })
              )
            ),
            { concurrency: "unbounded" }
          )
          const taken = voidings.filter((answer) => answer.status === 200)
          expect(taken, voidings.map((answer) => answer.text).join("\n")).toHaveLength(1)
          for (const answer of voidings) if (answer.status !== 200) expectError(answer, 409, "conflict")
          const voided = yield* on(instances[1]!)(rawRequest("GET", "/v1/voided-numbers", { token: t.token }))
          expect(field(voided.json, "data")).toHaveLength(1)
        }).pipe(Effect.scoped),
      { timeout: 90_000 }
    )
  })
}
