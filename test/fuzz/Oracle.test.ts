/**
 * The fuzz's judge, judged: each rule of `oracle.ts` flags the answer it exists for, and lets
 * through what the SPEC allows (a success that shows the client's own long text, an error quoting
 * a short value the client sent).
 */
import { describe, expect, it } from "@effect/vitest"
import { problemsOf } from "./oracle.js"
import type { Outcome, WireRequest } from "./send.js"

const request = (body = "{}", path = "/v1/documents"): WireRequest => ({
  method: "POST",
  path,
  headers: { "content-type": "application/json" },
  body: Buffer.from(body)
})

const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Outcome => ({
  _tag: "Answered",
  response: {
    status,
    headers: { "x-request-id": "0af7651916cd43dd8448eb211c80319c", "content-type": "application/json", ...headers },
    text: typeof body === "string" ? body : JSON.stringify(body)
  }
})

const error = (extra: Record<string, unknown> = {}) => ({
  code: "invalid_request",
  message: "The request is not valid.",
  ...extra
})

describe("the fuzz oracle", () => {
  it("passes a well-formed error and a success", () => {
    expect(problemsOf(request(), answer(400, error()), [])).toEqual([])
    expect(problemsOf(request(), answer(202, { id: "doc_1" }), [])).toEqual([])
  })

  it("flags a 5xx, a dropped connection and a missing request id", () => {
    expect(problemsOf(request(), answer(500, { code: "internal_error", message: "x" }), [])).toContain("answered 500")
    expect(problemsOf(request(), { _tag: "Dropped", reason: "the connection failed: socket hang up" }, [])).toEqual([
      "the connection was dropped: the connection failed: socket hang up"
    ])
    const noId = answer(400, error())
    if (noId._tag === "Answered") Reflect.deleteProperty(noId.response.headers, "x-request-id")
    expect(problemsOf(request(), noId, [])).toContain("no x-request-id header")
  })

  it("flags an error that is not the SPEC's JSON body", () => {
    expect(problemsOf(request(), answer(400, "", { "content-type": "text/plain" }), [])).toEqual(
      expect.arrayContaining(["error content-type is text/plain", "the error body is not a JSON object"])
    )
    expect(problemsOf(request(), answer(404, { message: "gone" }), [])).toContain("the error has no snake_case code")
    expect(problemsOf(request(), answer(404, { code: "NotFound", message: "" }), [])).toEqual(
      expect.arrayContaining(["the error has no snake_case code", "the error has no message"])
    )
  })

  it("flags internals in any body: stack traces, server paths, database and runtime errors", () => {
    const leaks = [
      "TypeError: Cannot read properties of null (reading 'cA')\n    at isCa (/work/main/src/credentials/Pkcs12.ts:42:7)",
      "ENOENT: no such file or directory, open '/tmp/multipart-1234/file'",
      "duplicate key value violates unique constraint \"tenants_tax_id\"",
      "insert into documents failed",
      "RangeError: Maximum call stack size exceeded"
    ]
    for (const message of leaks) {
      expect(
        problemsOf(request(), answer(400, error({ message })), []).some((p) => p.startsWith("the body shows")),
        message
      ).toBe(true)
    }
    expect(problemsOf(request(), answer(200, { name: "at handler (/app/src/x.ts:1:1)" }), []).length).toBeGreaterThan(0)
  })

  it("does not count as a leak what the client itself sent", () => {
    const sent = request(JSON.stringify({ notes: "see /tmp/a.ts:12 and SELECT 1 FROM t" }))
    const quoted = error({
      message: "notes: Expected at most 10 characters, got \"see /tmp/a.ts:12 and SELECT 1 FROM t\""
    })
    expect(problemsOf(sent, answer(400, quoted), [])).toEqual([])
  })

  it("flags an error repeating more than 1 KiB of the input, but not a success showing the stored value", () => {
    const long = "é".repeat(3000)
    const sent = request(JSON.stringify({ description: long }))
    expect(problemsOf(sent, answer(400, error({ message: `got ${long.slice(500, 1600)}` })), [])).toContain(
      "the error repeats more than 1 KiB of the input"
    )
    expect(problemsOf(sent, answer(400, error({ message: `got ${long.slice(0, 1000)}…` })), [])).toEqual([])
    expect(problemsOf(sent, answer(201, { description: long }), [])).toEqual([])
  })

  it("flags a credential of the request or a password of its body anywhere in the answer", () => {
    const token = "etd_test_abcdefghijklmnopqrstuvwxyz234567"
    expect(problemsOf(request(), answer(401, error({ message: `unknown ${token}` })), [token])).toContain(
      "the body repeats a credential of the request"
    )
    const login = request(JSON.stringify({ email: "a@example.com", password: "hunter2hunter2" }), "/v1/auth/login")
    expect(
      problemsOf(login, answer(400, error({ issues: [{ path: ["password"], message: "got hunter2hunter2" }] })), [])
    ).toContain(
      "the body repeats a credential of the request"
    )
  })
})
