/**
 * A schema refusal of the DPS lands on the request field the element came from, told apart by
 * where the element is: `email` is the taker's, the intermediary's or the provider's (from the
 * registration) depending on its parent. Real DPSs, validated by the
 * same libxml2 schema set the adapter uses.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { buildDps, type DpsInput } from "../../src/authority/sefin/Dps.js"
import { dpsRefusalOf, oneTagPerLine } from "../../src/authority/sefin/DpsRefusals.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import type { Party } from "../../src/domain/TaxContent.js"
import { realisticDpsInput } from "../support/NfseXml.js"

/** The refused paths of a DPS, as the adapter finds them (validation of the one-tag-per-line form). */
const refusedPaths = (input: DpsInput): ReadonlyArray<string> => {
  const xml = oneTagPerLine(buildDps(input).xml)
  const result = validateXml("DPS", xml)
  return Result.isFailure(result) ? result.failure.messages.map((m) => dpsRefusalOf(m, xml).path.join(".")) : []
}

const taker = realisticDpsInput.taker as Party

const intermediary: Party = {
  tax_id: "11444777000161",
  name: "Agência Intermediária Ltda",
  address: { ...taker.address!, street: "Rua do Ouvidor" }
}

describe("schema refusals of a DPS, on the request's fields", () => {
  beforeAll(() => loadSchemas())

  it("a valid DPS with taker and intermediary has none", () => {
    expect(refusedPaths({ ...realisticDpsInput, intermediary })).toEqual([])
  })

  it("an intermediary's e-mail the schema refuses is intermediary.email, not the taker's", () => {
    // The API's e-mail check is a loose shape; the schema's TSEmail takes Latin-1 only.
    const email = "contato@łódź.example"
    expect(refusedPaths({ ...realisticDpsInput, intermediary: { ...intermediary, email } }))
      .toEqual(["intermediary.email"])
    // The same element of the taker stays the taker's.
    expect(refusedPaths({ ...realisticDpsInput, taker: { ...taker, email }, intermediary })).toEqual(["taker.email"])
    // A name takes any text up to 255 characters (TSNomeRazaoSocial): not a schema refusal.
    expect(refusedPaths({ ...realisticDpsInput, intermediary: { ...intermediary, name: "Agência 🚀 Ltda" } }))
      .toEqual([])
  })

  it("an intermediary's address line is the intermediary's", () => {
    const address = { ...intermediary.address!, street: "Rua do Ouvidor 🚀" }
    expect(refusedPaths({ ...realisticDpsInput, intermediary: { ...intermediary, address } }))
      .toEqual(["intermediary.address.street"])
  })

  it("an address line is the national or the foreign address's, as the party has it", () => {
    const foreign: Party = {
      nif: "PT123456789",
      name: "Intermediário Lda",
      foreign_address: {
        country: "PT",
        postal_code: "1100-148",
        city: "Lisboa",
        region: "Lisboa",
        street: "Rua Augusta 🚀",
        number: "10",
        district: "Baixa"
      }
    }
    expect(refusedPaths({ ...realisticDpsInput, intermediary: foreign })).toEqual([
      "intermediary.foreign_address.street"
    ])
    expect(
      refusedPaths({ ...realisticDpsInput, taker: { ...taker, address: { ...taker.address!, district: "Centro 🚀" } } })
    )
      .toEqual(["taker.address.district"])
  })

  it("the provider's e-mail (prest/email) is the registration's, not the taker's", () => {
    const input = { ...realisticDpsInput, issuer: { ...realisticDpsInput.issuer, email: "contato@łódź.example" } }
    expect(refusedPaths(input)).toEqual(["registration.email"])
  })

  it("places elements one field writes wherever they are; cLocEmi is the registration's municipality", () => {
    const refusal = dpsRefusalOf("line 1: Element 'cLocEmi': [facet 'pattern'] The value '35' is not accepted.")
    expect(refusal.path).toEqual(["registration", "address", "municipality_code"])
    expect(dpsRefusalOf("line 1: Element 'xMotivo': [facet 'minLength'] too short").path).toEqual(["reason"])
  })

  it("puts each start tag on a line of its own, and never a newline inside an element written empty", () => {
    expect(oneTagPerLine("<DPS><infDPS><xCpl></xCpl><a/><b>1</b></infDPS></DPS>")).toBe(
      "<DPS>\n<infDPS>\n<xCpl></xCpl>\n<a/>\n<b>1</b></infDPS></DPS>"
    )
  })

  it("a missing child is placed inside the parent libxml2 names", () => {
    const xml = oneTagPerLine("<DPS><infDPS><interm><CNPJ>1</CNPJ></interm></infDPS></DPS>")
    const line = xml.split("\n").indexOf("<interm>") + 1
    const refusal = dpsRefusalOf(
      `line ${line}: Element 'interm': Missing child element(s). Expected is ( xNome ).`,
      xml
    )
    expect(refusal).toEqual({
      path: ["intermediary", "name"],
      message: "intermediary.name is required by the national NFS-e system."
    })
  })

  it("an element of no request field keeps the schema's words", () => {
    const refusal = dpsRefusalOf("line 3: Element 'dhEmi': not a valid value")
    expect(refusal.path).toEqual([])
    expect(refusal.message).toContain("dhEmi")
  })
})
