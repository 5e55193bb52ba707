/**
 * The Promise client checks a call's arguments before sending anything (src/client/Arguments.ts):
 * what a JavaScript caller left out or got wrong is named in plain words, under a stable code, with
 * no schema internals and never the value passed. The base URL answers nothing: a call that got past
 * the check would fail with `RequestError` instead.
 */
import { describe, expect, it } from "@effect/vitest"
import { createClient, InvalidArgument, type PromiseClient, Redacted, RequestError } from "../../src/client/index.js"

// Cast as JavaScript callers would be: without TypeScript, nothing stops these calls.
const etd = createClient({ baseUrl: "http://127.0.0.1:1" }) as unknown as {
  readonly [Group in keyof PromiseClient]: Record<string, (...args: ReadonlyArray<unknown>) => Promise<unknown>>
}

const failure = (call: Promise<unknown>) => call.then(() => undefined, (error: unknown) => error)

const SCHEMA_INTERNALS = /SchemaError|Expected|RegExp|Missing key|\^|\$/

const invoice = (taxId: string) => ({
  type: "service_invoice",
  taker: { tax_id: taxId, name: "Maria da Silva" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3550308" },
  amounts: { services: 150000, iss_rate: "2.00" }
})

describe("a call's arguments", () => {
  it("a missing path parameter is named, with a stable code", async () => {
    const error = await failure(etd.documents.get({ params: {} }))
    expect(error).toBeInstanceOf(InvalidArgument)
    expect(error).toBeInstanceOf(Error)
    expect(error).toMatchObject({
      name: "InvalidArgument",
      _tag: "InvalidArgument",
      code: "invalid_argument",
      method: "documents.get",
      message: "documents.get: params.tenantId is required; params.docId is required",
      issues: [
        { path: ["params", "tenantId"], message: "is required" },
        { path: ["params", "docId"], message: "is required" }
      ]
    })
  })

  it("no argument at all: the same, instead of a request to a path with `:tenantId` in it", async () => {
    const error = await failure(etd.documents.get())
    expect(error).toBeInstanceOf(InvalidArgument)
    expect((error as InvalidArgument).message).toBe(
      "documents.get: params.tenantId is required; params.docId is required"
    )
    const notAnObject = await failure(etd.documents.getForKey("doc_1"))
    expect((notAnObject as InvalidArgument).message).toBe("documents.getForKey: takes one object with params")
  })

  it("a missing body names each required field", async () => {
    const error = await failure(etd.apiKeys.create({ params: { tenantId: "ten_00000000000000000000000000" } }))
    expect((error as InvalidArgument).issues.map((issue) => issue.path.join("."))).toEqual([
      "payload.name",
      "payload.environment",
      "payload.scopes"
    ])
  })

  it("a value of the wrong form: the contract's own words where it has them, never its checks", async () => {
    const badId = await failure(etd.documents.getForKey({ params: { docId: "doc_1" } }))
    expect((badId as InvalidArgument).message).toBe("documents.getForKey: params.docId is not valid")
    const badTaxId = await failure(etd.documents.issueForKey({ headers: {}, payload: invoice("529.982.247-26") }))
    expect((badTaxId as InvalidArgument).issues).toEqual([
      { path: ["payload", "taker", "tax_id"], message: expect.stringContaining("valid CPF") }
    ])
    const badLimit = await failure(etd.documents.listForKey({ query: { limit: "ten" } }))
    expect((badLimit as InvalidArgument).message).toBe("documents.listForKey: query.limit must be number")
    for (const error of [badId, badTaxId, badLimit]) {
      expect((error as InvalidArgument).message).not.toMatch(SCHEMA_INTERNALS)
    }
  })

  it("never repeats the value it refused", async () => {
    const error = await failure(etd.auth.login({ payload: { email: "ana@example.com", password: "plain-secret" } }))
    expect((error as InvalidArgument).message).toBe("auth.login: payload.password must be Redacted")
    expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain("plain-secret")
  })

  it("a valid call goes out", async () => {
    const valid = [
      etd.documents.getForKey({ params: { docId: "doc_00000000000000000000000000" } }),
      etd.system.healthz(),
      etd.auth.login({ payload: { email: "ana@example.com", password: Redacted.make("correct horse battery staple") } })
    ]
    for (const error of await Promise.all(valid.map(failure))) expect(error).toBeInstanceOf(RequestError)
  })
})
