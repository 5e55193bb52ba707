/**
 * Input shaped to break the service (issue 16 items 4 and 5; SPEC §2, §11): JSON nested past 64
 * levels, escaped lone surrogates that PostgreSQL cannot store, oversized values whose error must
 * not echo them, and multipart bodies with repeated parts. Each gets a 4xx with the SPEC's code,
 * nothing is written, and no body carries internals.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { jsonTextProblem, MAX_JSON_DEPTH } from "../../src/http/JsonText.js"
import { createKey, registerOwner } from "../support/fixtures.js"
import { client, makeTestApp, rawRequest, testDatabases } from "../support/TestApp.js"
import { expectError } from "./helpers.js"

const nested = (depth: number, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`

describe("jsonTextProblem", () => {
  it("counts nesting outside strings only", () => {
    expect(jsonTextProblem(nested(MAX_JSON_DEPTH))).toBeNull()
    expect(jsonTextProblem(nested(MAX_JSON_DEPTH + 1))).toBe("too_deep")
    expect(jsonTextProblem(`{"a":"${"[".repeat(500)}"}`)).toBeNull()
    expect(jsonTextProblem(`{"a":"\\"${"{".repeat(500)}"}`)).toBeNull()
    expect(jsonTextProblem(`[${"{\"a\":1},".repeat(500)}1]`)).toBeNull()
  })

  it("finds escaped surrogates that are not a pair, and nothing else", () => {
    expect(jsonTextProblem(String.raw`{"a":"x\ud800y"}`)).toBe("lone_surrogate")
    expect(jsonTextProblem(String.raw`{"a":"x\uDC00"}`)).toBe("lone_surrogate")
    expect(jsonTextProblem(String.raw`{"a":"\ud800\u0041"}`)).toBe("lone_surrogate")
    expect(jsonTextProblem(String.raw`{"a":"\ud800"}`)).toBe("lone_surrogate")
    expect(jsonTextProblem(String.raw`{"a":"\ud83d\ude00 ok"}`)).toBeNull()
    expect(jsonTextProblem(String.raw`{"a":"\\ud800 is text about an escape"}`)).toBeNull()
    expect(jsonTextProblem(String.raw`{"a":"\u00e9\n\"\\"}`)).toBeNull()
    expect(jsonTextProblem(`{"a":"😀 é"}`)).toBeNull()
  })
})

const documentBody = (takerName: string) =>
  `{"type":"service_invoice","taker":{"tax_id":"52998224725","name":"${takerName}"},` +
  `"service":{"code":"010101","nbs_code":"115013000","description":"Consultoria","municipality_code":"3550308"},` +
  `"amounts":{"services":1000,"iss_rate":"2.00"}}`

for (const database of testDatabases) {
  layer(makeTestApp(database), { timeout: 60_000, excludeTestServices: true })(`hostile input (${database})`, (it) => {
    it.effect("JSON nested past 64 levels is 400 before any parsing work, authenticated or not, on aliases too", () =>
      Effect.gen(function*() {
        for (const url of ["/v1/auth/register", "/auth/login"]) {
          const deep = expectError(yield* rawRequest("POST", url, { rawBody: nested(100_000) }), 400, "invalid_request")
          expect(deep["message"]).toContain("64 levels")
          // At the limit the body is parsed and judged by the schema instead.
          const atLimit = expectError(
            yield* rawRequest("POST", url, { rawBody: nested(MAX_JSON_DEPTH) }),
            400,
            "invalid_request"
          )
          expect(atLimit["message"]).not.toContain("levels")
        }
        const { token } = yield* createKey(yield* registerOwner("deep"), "test", ["documents:write"])
        const deepField = documentBody("x").replace(`"type"`, `"extra":${nested(5_000)},"type"`)
        expectError(
          yield* rawRequest("POST", "/v1/documents", {
            token,
            rawBody: deepField,
            headers: { "idempotency-key": "deep-1" }
          }),
          400,
          "invalid_request"
        )
      }))

    it.effect("an escaped lone surrogate is 400 and nothing is stored; a real pair is accepted", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("surrogate")
        const { token } = yield* createKey(owner, "test", ["documents:write", "documents:read"])
        for (const name of [String.raw`a\ud800b`, String.raw`a\udfffb`]) {
          const refused = expectError(
            yield* rawRequest("POST", "/v1/documents", {
              token,
              rawBody: documentBody(name),
              headers: { "idempotency-key": `s-${name}` }
            }),
            400,
            "invalid_request"
          )
          expect(refused["message"]).toContain("surrogate")
        }
        const api = yield* client(token)
        expect((yield* api.documents.listForKey({ query: {} })).data).toHaveLength(0)
        const accepted = yield* rawRequest("POST", "/v1/documents", {
          token,
          rawBody: documentBody(String.raw`Jo\u00e3o \ud83d\ude00`)
        })
        expect(accepted.status, accepted.text).toBe(202)
        expect(accepted.json?.["taker"]?.["name"]).toBe("João 😀")
        // The idempotency key of a refused request was never claimed: reusing it with a good body works.
        const retried = yield* rawRequest("POST", "/v1/documents", {
          token,
          rawBody: documentBody("Maria"),
          headers: { "idempotency-key": String.raw`s-a\ud800b` }
        })
        expect(retried.status, retried.text).toBe(202)
      }))

    it.effect("an error never echoes a large input: its body stays small whatever was sent", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("echo")
        const { token } = yield* createKey(owner, "test", ["documents:write"])
        const huge = "9".repeat(400_000)
        const bodies = [
          `{"type":"${huge}"}`,
          documentBody(huge),
          `{"${huge}":1,"type":"service_invoice"}`,
          `{"type":"service_invoice","amounts":{"services":"${huge}"}}`
        ]
        for (const rawBody of bodies) {
          const response = yield* rawRequest("POST", "/v1/documents", { token, rawBody })
          expect(response.status, response.text.slice(0, 200)).toBe(400)
          expect(response.text.length).toBeLessThan(8 * 1024)
        }
        const third = huge.slice(0, 300_000)
        const register = yield* rawRequest("POST", "/v1/auth/register", {
          body: { email: third, password: third, name: third }
        })
        expectError(register, 400, "invalid_request")
        expect(register.text.length).toBeLessThan(8 * 1024)
      }))

    it.effect("a multipart upload with two file parts is 400 without any server path in the answer", () =>
      Effect.gen(function*() {
        const owner = yield* registerOwner("multipart")
        const form = new FormData()
        form.append("file", new Blob([new Uint8Array(200)]), "a.pfx")
        form.append("file", new Blob([new Uint8Array(200)]), "b.pfx")
        form.append("password", "x")
        const http = yield* HttpClient.HttpClient
        const response = yield* Effect.scoped(
          Effect.gen(function*() {
            const sent = yield* http.execute(
              HttpClientRequest.post(`/v1/tenants/${owner.tenantId}/credentials`).pipe(
                HttpClientRequest.bearerToken(owner.session),
                HttpClientRequest.bodyFormData(form)
              )
            )
            const text = yield* sent.text
            return { status: sent.status, headers: sent.headers, text }
          })
        )
        expectError(response, 400, "invalid_request")
        expect(response.text).not.toMatch(/\/tmp|\/var|[A-Z]:\\|node_modules|\.ts\b/)
      }))
  })
}
