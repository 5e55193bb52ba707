import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import {
  Cnpj,
  Cpf,
  isValidCnpj,
  isValidCpf,
  isValidTaxId,
  MunicipalityCode,
  normalizeTaxId,
  TAX_ID_MESSAGE,
  TaxId,
  taxIdKind
} from "../../src/domain/TaxId.js"
import { jsonSchemaOf } from "../support/jsonSchema.js"

// --- Independent oracle ---------------------------------------------------------------------
// Deliberately written differently from the implementation: weights are derived from the
// position counted from the right, and the digit uses the "(sum * 10) mod 11, 10 -> 0" form.

const value = (c: string): number => c.charCodeAt(0) - 48

const oracleDigit = (chars: string, cycle: number): number => {
  let sum = 0
  for (let k = 0; k < chars.length; k++) {
    const fromRight = chars.length - 1 - k
    sum += value(chars[k]!) * (2 + (fromRight % cycle))
  }
  return ((sum * 10) % 11) % 10
}

// CPF weights run 2..11 without wrapping, so any cycle >= 10 reproduces them.
const oracleCpf = (body9: string): string => {
  const d1 = oracleDigit(body9, 100)
  return body9 + d1 + oracleDigit(body9 + d1, 100)
}
const oracleCnpj = (body12: string): string => {
  const d1 = oracleDigit(body12, 8)
  return body12 + d1 + oracleDigit(body12 + d1, 8)
}
const oracleValidCpf = (s: string): boolean =>
  /^[0-9]{11}$/.test(s) && new Set(s).size > 1 && oracleCpf(s.slice(0, 9)) === s
const oracleValidCnpj = (s: string): boolean =>
  /^[0-9A-Z]{12}[0-9]{2}$/.test(s) && new Set(s).size > 1 && oracleCnpj(s.slice(0, 12)) === s

// Seeded so a failure is reproducible (mulberry32).
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const DIGITS = "0123456789"
const ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const randomString = (next: () => number, alphabet: string, n: number): string =>
  Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]!).join("")

/** Every string that differs from `s` in exactly one position, using `alphabetAt(i)`. */
const singleSubstitutions = (s: string, alphabetAt: (i: number) => string): Array<[number, string]> => {
  const out: Array<[number, string]> = []
  for (let i = 0; i < s.length; i++) {
    for (const c of alphabetAt(i)) {
      if (c !== s[i]) out.push([i, s.slice(0, i) + c + s.slice(i + 1)])
    }
  }
  return out
}

const formatCpf = (d: string) => `${d.slice(0, 3)}.${d.slice(3, 6)}.${d.slice(6, 9)}-${d.slice(9)}`
const formatCnpj = (d: string) => `${d.slice(0, 2)}.${d.slice(2, 5)}.${d.slice(5, 8)}/${d.slice(8, 12)}-${d.slice(12)}`

describe("normalizeTaxId", () => {
  it("strips punctuation and spaces and upper-cases", () => {
    expect(normalizeTaxId("529.982.247-25")).toBe("52998224725")
    expect(normalizeTaxId(" 12.abc.345/01de-35 ")).toBe("12ABC34501DE35")
    expect(normalizeTaxId("11 222 333 0001 81")).toBe("11222333000181")
  })
})

describe("CPF", () => {
  it("accepts well-known valid CPFs with or without punctuation", () => {
    expect(isValidCpf("529.982.247-25")).toBe(true)
    expect(isValidCpf("52998224725")).toBe(true)
    expect(isValidCpf("111.444.777-35")).toBe(true)
  })

  it("rejects wrong check digits, wrong lengths and non-digits", () => {
    expect(isValidCpf("529.982.247-24")).toBe(false)
    expect(isValidCpf("529.982.247-15")).toBe(false)
    expect(isValidCpf("5299822472")).toBe(false)
    expect(isValidCpf("529982247250")).toBe(false)
    expect(isValidCpf("52998224A25")).toBe(false)
    expect(isValidCpf("")).toBe(false)
    expect(isValidCpf("529#982#247#25")).toBe(false)
  })

  it("rejects every same-digit sequence, including 000.000.000-00 which passes mod 11", () => {
    expect(oracleCpf("000000000")).toBe("00000000000")
    for (const d of DIGITS) {
      expect(isValidCpf(d.repeat(11))).toBe(false)
    }
    expect(isValidCpf("000.000.000-00")).toBe(false)
  })

  it("is not a CNPJ", () => {
    expect(isValidCnpj("52998224725")).toBe(false)
  })

  it("property: 200 generated CPFs are valid, formatted or not; single substitutions agree with the oracle", () => {
    const next = rng(1)
    let generated = 0
    while (generated < 200) {
      const cpf = oracleCpf(randomString(next, DIGITS, 9))
      if (new Set(cpf).size === 1) continue
      generated++
      expect(isValidCpf(cpf), cpf).toBe(true)
      expect(isValidCpf(formatCpf(cpf)), cpf).toBe(true)
      expect(isValidTaxId(cpf)).toBe(true)
      for (const [i, mutated] of singleSubstitutions(cpf, () => DIGITS)) {
        const accepted = isValidCpf(mutated)
        expect(accepted, `${cpf} -> ${mutated}`).toBe(oracleValidCpf(mutated))
        // A changed check digit can never be absorbed: the body still determines it.
        if (i >= 9) expect(accepted, `${cpf} -> ${mutated}`).toBe(false)
      }
    }
  })

  it("mod 11 maps remainders 0 and 1 to the same digit, so rare body substitutions go undetected", () => {
    // Inherent to the official algorithm, not a validator bug: both are valid CPFs.
    expect(isValidCpf("77248404403")).toBe(true)
    expect(isValidCpf("87248404403")).toBe(true)
    const next = rng(2)
    let total = 0
    let undetected = 0
    for (let n = 0; n < 500; n++) {
      const cpf = oracleCpf(randomString(next, DIGITS, 9))
      for (const [, mutated] of singleSubstitutions(cpf, () => DIGITS)) {
        total++
        if (isValidCpf(mutated)) undetected++
      }
    }
    expect(undetected / total).toBeLessThan(0.01)
  })
})

describe("CNPJ", () => {
  it("accepts well-known valid numeric CNPJs with or without punctuation", () => {
    expect(isValidCnpj("11.222.333/0001-81")).toBe(true)
    expect(isValidCnpj("11222333000181")).toBe(true)
  })

  it("computes 35 for the Receita Federal alphanumeric example 12ABC34501DE", () => {
    expect(oracleCnpj("12ABC34501DE")).toBe("12ABC34501DE35")
    expect(isValidCnpj("12ABC34501DE35")).toBe(true)
    expect(isValidCnpj("12.ABC.345/01DE-35")).toBe(true)
    expect(isValidCnpj("12.abc.345/01de-35")).toBe(true)
    for (const dv of ["34", "36", "25", "45"]) {
      expect(isValidCnpj(`12ABC34501DE${dv}`)).toBe(false)
    }
  })

  it("rejects wrong check digits, wrong lengths, letters in the check digits and other characters", () => {
    expect(isValidCnpj("11.222.333/0001-82")).toBe(false)
    expect(isValidCnpj("11.222.333/0001-71")).toBe(false)
    expect(isValidCnpj("1122233300018")).toBe(false)
    expect(isValidCnpj("112223330001811")).toBe(false)
    expect(isValidCnpj("12ABC34501DEA5")).toBe(false)
    expect(isValidCnpj("12ABC34501DE3Z")).toBe(false)
    expect(isValidCnpj("12ABC3450_DE35")).toBe(false)
    expect(isValidCnpj("12ÁBC34501DE35")).toBe(false)
  })

  it("rejects same-character sequences, including 00.000.000/0000-00 which passes mod 11", () => {
    expect(oracleCnpj("000000000000")).toBe("00000000000000")
    for (const d of DIGITS) {
      expect(isValidCnpj(d.repeat(14))).toBe(false)
    }
  })

  it("is not a CPF", () => {
    expect(isValidCpf("11222333000181")).toBe(false)
  })

  it("property: 200 generated numeric CNPJs are valid; a changed digit is rejected unless mod 11 absorbs it", () => {
    const next = rng(3)
    let generated = 0
    while (generated < 200) {
      const cnpj = oracleCnpj(randomString(next, DIGITS, 12))
      if (new Set(cnpj).size === 1) continue
      generated++
      expect(isValidCnpj(cnpj), cnpj).toBe(true)
      expect(isValidCnpj(formatCnpj(cnpj)), cnpj).toBe(true)
      for (const [i, mutated] of singleSubstitutions(cnpj, () => DIGITS)) {
        const accepted = isValidCnpj(mutated)
        expect(accepted, `${cnpj} -> ${mutated}`).toBe(oracleValidCnpj(mutated))
        if (i >= 12) expect(accepted, `${cnpj} -> ${mutated}`).toBe(false)
      }
    }
  })

  // Body substitutions are not always caught here: besides the 0/1 remainder collapse, characters
  // whose values differ by a multiple of 11 ('3' = 3, 'I' = 25) weigh the same mod 11. That is the
  // official algorithm's blind spot, so the oracle decides what must be accepted.
  it("property: 200 generated alphanumeric CNPJs are valid in upper and lower case", () => {
    expect(isValidCnpj("3LBOG3E9WLE357")).toBe(true)
    expect(isValidCnpj("ILBOG3E9WLE357")).toBe(true)
    const next = rng(4)
    for (let n = 0; n < 200; n++) {
      const cnpj = oracleCnpj(randomString(next, ALNUM, 12))
      expect(isValidCnpj(cnpj), cnpj).toBe(true)
      expect(isValidCnpj(formatCnpj(cnpj).toLowerCase()), cnpj).toBe(true)
      expect(taxIdKind(cnpj)).toBe("cnpj")
      for (const [i, mutated] of singleSubstitutions(cnpj, (j) => (j < 12 ? ALNUM : DIGITS))) {
        const accepted = isValidCnpj(mutated)
        expect(accepted, `${cnpj} -> ${mutated}`).toBe(oracleValidCnpj(mutated))
        if (i >= 12) expect(accepted, `${cnpj} -> ${mutated}`).toBe(false)
      }
    }
  })
})

describe("taxIdKind", () => {
  it("classifies CPF, CNPJ and invalid ids", () => {
    expect(taxIdKind("529.982.247-25")).toBe("cpf")
    expect(taxIdKind("11.222.333/0001-81")).toBe("cnpj")
    expect(taxIdKind("12abc34501de35")).toBe("cnpj")
    expect(taxIdKind("123")).toBeUndefined()
  })
})

// Like v3's array formatter: one `{ path, message }` per issue.
const formatIssues = (error: Schema.SchemaError) => SchemaIssue.makeFormatterStandardSchemaV1()(error.issue).issues

const issues = <A>(u: unknown, schema: Schema.Codec<A, string>) =>
  Result.match(Schema.decodeUnknownResult(schema)(u), {
    onFailure: formatIssues,
    onSuccess: () => []
  })

describe("schemas", () => {
  it("TaxId decodes to the normalized value and encodes it back unchanged", () => {
    const decode = Schema.decodeUnknownSync(TaxId)
    expect(decode("529.982.247-25")).toBe("52998224725")
    expect(decode("11.222.333/0001-81")).toBe("11222333000181")
    expect(decode("12.abc.345/01de-35")).toBe("12ABC34501DE35")
    expect(Schema.encodeSync(TaxId)(decode("12.abc.345/01de-35"))).toBe("12ABC34501DE35")
  })

  it("TaxId failures carry the documented message", () => {
    for (const bad of ["123", "529.982.247-24", "00000000000", "11222333000182", "", "12ABC34501DE36"]) {
      const found = issues(bad, TaxId)
      expect(found, bad).toHaveLength(1)
      expect(found[0]!.message).toBe(TAX_ID_MESSAGE)
    }
  })

  it("TaxId reports the field path inside a struct, and rejects non-strings", () => {
    const Body = Schema.Struct({ tax_id: TaxId })
    const result = Schema.decodeUnknownResult(Body)({ tax_id: "1" })
    if (Result.isSuccess(result)) throw new Error("expected a failure")
    const found = formatIssues(result.failure)
    expect(found).toMatchObject([{ path: ["tax_id"], message: TAX_ID_MESSAGE }])
    expect(Result.isFailure(Schema.decodeUnknownResult(Body)({ tax_id: 52998224725 }))).toBe(true)
  })

  it("Cpf and Cnpj only accept their own kind", () => {
    expect(Schema.decodeUnknownSync(Cpf)("529.982.247-25")).toBe("52998224725")
    expect(Result.isFailure(Schema.decodeUnknownResult(Cpf)("11222333000181"))).toBe(true)
    expect(Schema.decodeUnknownSync(Cnpj)("12abc34501de35")).toBe("12ABC34501DE35")
    expect(Result.isFailure(Schema.decodeUnknownResult(Cnpj)("52998224725"))).toBe(true)
    expect(issues("1", Cpf)[0]!.message).toMatch(/CPF/)
    expect(issues("1", Cnpj)[0]!.message).toMatch(/CNPJ/)
  })

  it("produce string JSON Schemas with a pattern and a description on both sides", () => {
    const check = <A>(schema: Schema.Codec<A, string>) => {
      const encoded = jsonSchemaOf(schema)
      expect(encoded.type).toBe("string")
      expect(typeof encoded.pattern).toBe("string")
      expect(typeof encoded.description).toBe("string")
      // The documented pattern must admit the formatted inputs the schema accepts.
      const pattern = new RegExp(encoded.pattern as string)
      expect(pattern.test("529.982.247-25")).toBe(true)
      expect(pattern.test("12.abc.345/01de-35")).toBe(true)

      const decoded = jsonSchemaOf(Schema.toType(schema))
      expect(decoded.type).toBe("string")
      expect(typeof decoded.pattern).toBe("string")
    }
    check(TaxId)
    check(Cpf)
    check(Cnpj)
    const typePattern = new RegExp(jsonSchemaOf(Schema.toType(TaxId)).pattern as string)
    expect(typePattern.test("52998224725")).toBe(true)
    expect(typePattern.test("12ABC34501DE35")).toBe(true)
    expect(typePattern.test("529.982.247-25")).toBe(false)

    const body = jsonSchemaOf(Schema.Struct({ tax_id: TaxId, municipality_code: MunicipalityCode }))
    expect(JSON.stringify(body)).toContain("\"pattern\":\"^[0-9]{7}$\"")
  })

  it("MunicipalityCode is exactly 7 digits", () => {
    const decode = Schema.decodeUnknownResult(MunicipalityCode)
    expect(Result.getOrThrow(decode("3550308"))).toBe("3550308")
    for (const bad of ["355030", "35503080", "355030a", " 3550308", 3550308]) {
      expect(Result.isFailure(decode(bad)), String(bad)).toBe(true)
    }
    const schema = jsonSchemaOf(MunicipalityCode)
    expect(schema).toMatchObject({ type: "string", pattern: "^[0-9]{7}$" })
    expect(typeof schema.description).toBe("string")
  })
})
