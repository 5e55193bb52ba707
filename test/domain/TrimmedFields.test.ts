/**
 * Text the server trims before checking it (names, emails, reasons, invoice text): the typed client
 * encodes payloads with the same schemas, so it must accept untrimmed text too and send it trimmed
 * (issue 12), while the server's decoding stays as it was.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { RegisterPayload } from "../../src/auth/Api.js"
import { CancelDocument, NewDocument } from "../../src/documents/Api.js"
import { boundedText } from "../../src/domain/Document.js"
import { Email } from "../../src/domain/User.js"
import { CreateApiKey } from "../../src/keys/Api.js"

const encoded = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: S["Type"]) =>
  Result.getOrThrow(Schema.encodeResult(schema)(value))

const refusedOnEncode = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: S["Type"]) =>
  Result.isFailure(Schema.encodeResult(schema)(value))

describe("trimmed request fields, encoded as the typed client does", () => {
  it("trimmed text and emails: surrounding whitespace is trimmed before the checks", () => {
    expect(encoded(Email, "  Ana@Example.com ")).toBe("Ana@Example.com")
    expect(encoded(boundedText(3), "  abc  ")).toBe("abc")
    // The bound applies to the trimmed text, as on the server.
    expect(refusedOnEncode(boundedText(3), " abcd ")).toBe(true)
    expect(refusedOnEncode(boundedText(3), "   ")).toBe(true)
    expect(refusedOnEncode(Email, " not an email ")).toBe(true)
  })

  it("whole payloads: the client sends what the server would have stored", () => {
    const register = encoded(RegisterPayload, {
      email: " ana@example.com",
      password: Schema.decodeSync(RegisterPayload.fields.password)("correct horse battery"),
      name: " Ana ",
      tenant: { name: " Acme Ltda ", tax_id: "11.222.333/0001-81" }
    })
    expect(register).toMatchObject({
      email: "ana@example.com",
      name: "Ana",
      tenant: { name: "Acme Ltda", tax_id: "11222333000181" }
    })
    expect(encoded(CreateApiKey, { name: " backend ", environment: "test", scopes: ["documents:read"] }))
      .toMatchObject({ name: "backend" })
    expect(encoded(CancelDocument, { reason_code: "service_not_provided", reason: "  the service was not rendered  " }))
      .toMatchObject({ reason: "the service was not rendered" })
    const taker = encoded(NewDocument.fields.taker, { tax_id: "529.982.247-25", name: " Maria " })
    expect(taker).toEqual({ tax_id: "52998224725", name: "Maria" })
  })

  it("decoding (the server's side) is unchanged: trimmed values, same refusals", () => {
    expect(Schema.decodeUnknownSync(Email)(" Ana@Example.com ")).toBe("Ana@Example.com")
    expect(Schema.decodeUnknownSync(boundedText(3))(" abc ")).toBe("abc")
    expect(Result.isFailure(Schema.decodeUnknownResult(boundedText(3))(" abcd "))).toBe(true)
    expect(Result.isFailure(Schema.decodeUnknownResult(boundedText(3))(5))).toBe(true)
  })
})
