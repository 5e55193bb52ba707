import { describe, expect, it } from "@effect/vitest"
import table from "../../src/domain/ibge/municipalities.json" with { type: "json" }
import { municipalityCount, municipalityOf } from "../../src/domain/Municipalities.js"

/** IBGE's state codes (the first two digits of every municipality code) and their UF. */
const STATES: Record<string, string> = {
  "11": "RO",
  "12": "AC",
  "13": "AM",
  "14": "RR",
  "15": "PA",
  "16": "AP",
  "17": "TO",
  "21": "MA",
  "22": "PI",
  "23": "CE",
  "24": "RN",
  "25": "PB",
  "26": "PE",
  "27": "AL",
  "28": "SE",
  "29": "BA",
  "31": "MG",
  "32": "ES",
  "33": "RJ",
  "35": "SP",
  "41": "PR",
  "42": "SC",
  "43": "RS",
  "50": "MS",
  "51": "MT",
  "52": "GO",
  "53": "DF"
}

describe("IBGE municipalities", () => {
  it("names known codes with their state", () => {
    expect(municipalityOf("3550308")).toEqual({ name: "São Paulo", state: "SP" })
    expect(municipalityOf("1302603")).toEqual({ name: "Manaus", state: "AM" })
    expect(municipalityOf("5300108")).toEqual({ name: "Brasília", state: "DF" })
    expect(municipalityOf("3304557")).toEqual({ name: "Rio de Janeiro", state: "RJ" })
    expect(municipalityOf("4314902")).toEqual({ name: "Porto Alegre", state: "RS" })
    expect(municipalityOf("1100015")).toEqual({ name: "Alta Floresta D'Oeste", state: "RO" })
    expect(municipalityOf("2605459")).toEqual({ name: "Fernando de Noronha", state: "PE" })
    // Installed in 2025: the table is IBGE's current list, not an older one.
    expect(municipalityOf("5101837")).toEqual({ name: "Boa Esperança do Norte", state: "MT" })
  })

  it("knows nothing of codes IBGE does not list", () => {
    expect(municipalityOf("3550307")).toBeUndefined()
    expect(municipalityOf("9999999")).toBeUndefined()
    expect(municipalityOf("")).toBeUndefined()
  })

  it("lists every municipality once, each code under its own state", () => {
    expect(municipalityCount()).toBe(5571)
    expect(table).toHaveLength(5571)
    const codes = new Set<string>()
    for (const row of table) {
      const [code, state, name] = row.split(";")
      expect(code).toMatch(/^\d{7}$/)
      expect(STATES[code!.slice(0, 2)], row).toBe(state)
      expect(name!.trim(), row).toBe(name)
      expect(name!.length).toBeGreaterThan(1)
      codes.add(code!)
    }
    expect(codes.size).toBe(5571)
    // 26 states and the Federal District each have municipalities.
    expect(new Set(table.map((row) => row.split(";")[1]))).toHaveLength(27)
  })
})
