/**
 * The national 50-digit access key, field by field, without a database: the simulator's tests
 * check the keys it issues; these pin the layout and the check digit on their own.
 */
import { describe, expect, it } from "@effect/vitest"
import { accessKeyCheckDigit, buildAccessKey, yearMonthOf } from "../../src/authority/sefin/AccessKey.js"

const parts = {
  municipalityCode: "3550308",
  issuerTaxId: "11.222.333/0001-81",
  nfseNumber: 123,
  yearMonth: "2611",
  randomCode: "987654321"
}

describe("access key", () => {
  it("lays out cMun, ambiente gerador, registration type and number, nNFSe, AAMM, random code, check digit", () => {
    const key = buildAccessKey(parts)
    expect(key).toMatch(/^[0-9]{50}$/)
    expect(key.slice(0, 7)).toBe("3550308")
    expect(key.slice(7, 8)).toBe("2")
    expect(key.slice(8, 9)).toBe("2")
    expect(key.slice(9, 23)).toBe("11222333000181")
    expect(key.slice(23, 36)).toBe("0000000000123")
    expect(key.slice(36, 40)).toBe("2611")
    expect(key.slice(40, 49)).toBe("987654321")
    expect(key.slice(49)).toBe(String(accessKeyCheckDigit(key.slice(0, 49))))
  })

  it("pads a CPF to 14 digits with registration type 1, and maps the letters of an alphanumeric CNPJ", () => {
    expect(buildAccessKey({ ...parts, issuerTaxId: "529.982.247-25" }).slice(8, 23)).toBe("100052998224725")
    // Letters valued charCode - 48, last decimal digit kept: A→7, B→8, C→9, D→0, E→1.
    expect(buildAccessKey({ ...parts, issuerTaxId: "12ABC34501DE35" }).slice(8, 23)).toBe("212789345010135")
  })

  it("computes the mod-11 check digit with weights 2..9 from the right; remainders 0 and 1 give 0", () => {
    // 1·3 + 2·2 = 7 → 11 - 7 = 4
    expect(accessKeyCheckDigit("12")).toBe(4)
    // 5·2 = 10 → 11 - 10 = 1
    expect(accessKeyCheckDigit("5")).toBe(1)
    // Sum 0 (remainder 0) and 6·2 = 12 (remainder 1) both give 0.
    expect(accessKeyCheckDigit("0")).toBe(0)
    expect(accessKeyCheckDigit("6")).toBe(0)
    // The weight wraps from 9 back to 2 at the ninth digit from the right.
    expect(accessKeyCheckDigit("100000000")).toBe(accessKeyCheckDigit("1"))
  })

  it("takes AAMM from the issue date, or from the fallback time when the date is not YYYY-MM-DD", () => {
    expect(yearMonthOf("2026-11-10", new Date("2030-01-01T00:00:00Z"))).toBe("2611")
    expect(yearMonthOf("", new Date("2027-03-05T00:00:00Z"))).toBe("2703")
  })
})
