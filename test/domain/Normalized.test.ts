/**
 * The typed client encodes payloads with the schemas the server decodes them with: whatever the
 * server accepts and normalizes, the client must accept too (issue 12), and send it normalized.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { Cnpj, Cpf, TaxId } from "../../src/domain/TaxId.js"

const encoded = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: S["Type"]) =>
  Result.getOrThrow(Schema.encodeResult(schema)(value))

const refusedOnEncode = <S extends Schema.Codec<unknown, unknown>>(schema: S, value: S["Type"]) =>
  Result.isFailure(Schema.encodeResult(schema)(value))

describe("tax ids, encoded as the typed client does", () => {
  it("tax ids: formatted CPF and CNPJ (numeric and alphanumeric, any case) are sent normalized", () => {
    expect(encoded(TaxId, "529.982.247-25")).toBe("52998224725")
    expect(encoded(TaxId, "11.222.333/0001-81")).toBe("11222333000181")
    expect(encoded(TaxId, "12.abc.345/01de-35")).toBe("12ABC34501DE35")
    expect(encoded(Cpf, " 529 982 247 25 ")).toBe("52998224725")
    expect(encoded(Cnpj, "11.222.333/0001-81")).toBe("11222333000181")
    // Already normalized ids are sent unchanged.
    expect(encoded(TaxId, "52998224725")).toBe("52998224725")
  })

  it("tax ids: wrong check digits are still refused, formatted or not", () => {
    expect(refusedOnEncode(TaxId, "529.982.247-26")).toBe(true)
    expect(refusedOnEncode(TaxId, "52998224726")).toBe(true)
    // A valid CNPJ is not a CPF.
    expect(refusedOnEncode(Cpf, "11.222.333/0001-81")).toBe(true)
  })

  it("decoding (the server's side) is unchanged: normalized values, same refusals", () => {
    expect(Schema.decodeUnknownSync(TaxId)("529.982.247-25")).toBe("52998224725")
    expect(Schema.decodeUnknownSync(Cnpj)("12.abc.345/01de-35")).toBe("12ABC34501DE35")
    expect(Result.isFailure(Schema.decodeUnknownResult(TaxId)("529.982.247-26"))).toBe(true)
  })
})
