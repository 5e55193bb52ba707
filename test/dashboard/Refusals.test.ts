/**
 * The dashboard's words for the contract (no browser needed): a text in both languages for every
 * error code src/domain/Errors.ts declares, fields named in the page's language with no English
 * left on the Portuguese page, and instants as wall times in Brasília with the zone said.
 */
import { Schema, SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import { dayStart, formatDate, formatDateTime, formatDay, formatMonth } from "../../dashboard/src/i18n.js"
import { fieldOf, issueText, problemText, refusalTexts } from "../../dashboard/src/refusals.js"
import * as Errors from "../../src/domain/Errors.js"
import { TAX_ID_MESSAGE } from "../../src/domain/TaxId.js"

/** The `code` literal of every error class the contract exports. */
const contractCodes = Object.values(Errors).flatMap((value) => {
  if (typeof value !== "function" || !Schema.isSchema(value) || !("fields" in value)) return []
  const code = (value.fields as Readonly<Record<string, Schema.Top | undefined>>)["code"]?.ast
  return code !== undefined && SchemaAST.isLiteral(code) && typeof code.literal === "string" ? [code.literal] : []
})

describe("refusals in the page's language", () => {
  it("finds the contract's error codes", () => {
    // Errors.ts declares 34 today; the walk must see them, or the next test proves nothing.
    expect(contractCodes.length).toBeGreaterThanOrEqual(34)
    expect(contractCodes).toEqual(expect.arrayContaining(["invalid_request", "registration_incomplete", "not_ready"]))
  })

  it("has a text in English and a different one in Portuguese for every code of the contract", () => {
    const en: Readonly<Record<string, string | undefined>> = refusalTexts.en
    const pt: Readonly<Record<string, string | undefined>> = refusalTexts.pt
    const untranslated = contractCodes.filter((code) => !en[code] || !pt[code] || en[code] === pt[code])
    expect(untranslated).toEqual([])
  })

  it("names a refused field in Portuguese and says what is wrong without the API's English or path", () => {
    const issue = { path: ["tenant", "tax_id"], message: TAX_ID_MESSAGE }
    const pt = issueText(issue, "pt")
    expect(pt).toBe("CNPJ ou CPF da empresa: não é um CNPJ ou CPF válido (confira os dígitos verificadores)")
    expect(issueText(issue, "en")).toBe(`Company tax id (CNPJ or CPF): ${TAX_ID_MESSAGE}`)
    // The registration's nested fields, by the longest ending the page names.
    expect(fieldOf(["registration", "address", "postal_code"])).toBe("address.postal_code")
    expect(issueText({ path: ["registration", "address", "postal_code"], message: "must be 8 digits" }, "pt"))
      .toBe("CEP: informe os 8 dígitos do CEP")
    expect(issueText({ path: ["events", 0], message: "Expected …" }, "pt")).toBe(
      "Eventos: escolha ao menos um evento da lista"
    )
  })

  it("says which value a conflict found taken, in Portuguese", () => {
    const taxId = { path: ["tenant", "tax_id"], message: "was proven by another tenant with its certificate" }
    expect(issueText(taxId, "pt", "conflict")).toBe(
      "CNPJ ou CPF da empresa: já foi comprovado por outra empresa com o certificado dela"
    )
    expect(issueText({ path: ["email"], message: "is already registered" }, "pt", "conflict")).toBe(
      "E-mail: já está cadastrado"
    )
    expect(issueText({ path: ["description"], message: "is taken" }, "pt", "conflict")).toBe(
      "Descrição: já está em uso"
    )
    expect(issueText(taxId, "en", "conflict")).toBe(
      "Company tax id (CNPJ or CPF): was proven by another tenant with its certificate"
    )
  })

  it("says a missing field is required, and an unknown field's problem without its English path", () => {
    expect(problemText({ path: ["password"], message: "Missing key" }, "pt")).toBe("obrigatório")
    expect(issueText({ path: ["password"], message: "Missing key" }, "en")).toBe("Password: required")
    expect(issueText({ path: ["ibs_cbs", "cst"], message: "must be 3 digits" }, "pt")).toBe("valor inválido")
    expect(issueText({ path: ["ibs_cbs", "cst"], message: "must be 3 digits" }, "en")).toBe(
      "ibs_cbs.cst: must be 3 digits"
    )
  })
})

describe("times in Brasília", () => {
  // 19:11 UTC is 16:11 in Brasília (UTC−3, no daylight saving since 2019).
  const instant = new Date("2026-11-27T19:11:00Z")

  it("shows an instant as its Brasília wall time with the zone named, in both languages", () => {
    expect(formatDateTime(instant, "pt")).toBe("27 de nov. de 2026, 16:11 (Brasília)")
    expect(formatDateTime(instant, "en")).toBe("27 Nov 2026, 16:11 (Brasília)")
    expect(formatDateTime("2026-11-27T19:11:00Z", "en")).toBe("27 Nov 2026, 16:11 (Brasília)")
    expect(formatDateTime(null, "pt")).toBe("—")
  })

  it("dates an instant by Brasília's calendar, and a calendar day by itself", () => {
    // 01:30 UTC on the 28th is still the 27th in Brasília.
    expect(formatDate(new Date("2026-11-28T01:30:00Z"), "pt")).toBe("27 de nov. de 2026")
    expect(formatDay("2026-11-28", "pt")).toBe("28 de nov. de 2026")
    expect(formatDay("2026-11-28", "en")).toBe("28 Nov 2026")
  })

  it("writes a quota month in words and starts a filter's day at Brasília's midnight", () => {
    expect(formatMonth("2026-11", "pt")).toBe("novembro de 2026")
    expect(formatMonth("2026-11", "en")).toBe("November 2026")
    expect(dayStart("2026-11-27")).toBe("2026-11-27T03:00:00.000Z")
  })
})
