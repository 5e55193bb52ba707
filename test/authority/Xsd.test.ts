/**
 * The XSD validator over the official v1.01 schemas (package of 27/07/2026): the one facet narrowed in
 * memory (the serie pattern, so a serie of zeros stays refused) refuses what the published pattern
 * refuses and no more than the all-zero series, the shipped files are the published ones (SHA-256),
 * failures read like libxml2's, and validation is fast once compiled.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildDps } from "../../src/authority/sefin/Dps.js"
import { loadSchemas, validateXml, xsdDirectory } from "../../src/authority/xml/Xsd.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { hasXmllint, patchedSchemaDir, realisticDpsInput, withXmllint, xmllintValidate } from "../support/NfseXml.js"

const PUBLISHED_SERIE = "value=\"[0-9]{1,4}|[0-8][0-9]{4}\""
const PATCHED_SERIE = "value=\"0{0,4}[1-9][0-9]{0,3}|[1-8][0-9]{4}\""

const dpsWithSeries = (series: string) => buildDps({ ...realisticDpsInput, series }).xml

const messagesOf = (result: Result.Result<void, { readonly messages: ReadonlyArray<string> }>): ReadonlyArray<string> =>
  Result.isFailure(result) ? result.failure.messages : []

describe("XSD validation (official v1.01 schemas, serie facet patched)", () => {
  it("writes the patched schema set and leaves the official files untouched", () => {
    const dir = patchedSchemaDir()
    const official = fs.readdirSync(xsdDirectory()).filter((f) => f.endsWith(".xsd")).sort()
    expect(fs.readdirSync(dir).sort()).toEqual(official)
    const officialSimple = fs.readFileSync(path.join(xsdDirectory(), "tiposSimples_v1.01.xsd"), "utf8")
    const patchedSimple = fs.readFileSync(path.join(dir, "tiposSimples_v1.01.xsd"), "utf8")
    expect(officialSimple).toContain(PUBLISHED_SERIE)
    expect(patchedSimple).not.toContain(PUBLISHED_SERIE)
    expect(patchedSimple).toContain(PATCHED_SERIE)
    // Only that facet differs.
    expect(patchedSimple.replace(PATCHED_SERIE, PUBLISHED_SERIE)).toBe(officialSimple)
    for (const name of official.filter((f) => f !== "tiposSimples_v1.01.xsd")) {
      expect(fs.readFileSync(path.join(dir, name))).toEqual(fs.readFileSync(path.join(xsdDirectory(), name)))
    }
  })

  // The service ships its own copy (a deployment has no access to the portal); every file must be
  // the published one, as listed with its SHA-256 in schemas/nfse-v1.01/SHA256SUMS.
  it("the schemas the service ships are byte-identical to the published package (SHA256SUMS)", () => {
    const sums = fs.readFileSync(path.join(xsdDirectory(), "SHA256SUMS"), "utf8").trim().split("\n")
      .map((line) => line.split(/\s+/)).map(([sum, name]) => [name!, sum!] as const)
    const shipped = fs.readdirSync(xsdDirectory()).filter((f) => f.endsWith(".xsd")).sort()
    expect(sums.map(([name]) => name).sort()).toEqual(shipped)
    for (const [name, sum] of sums) {
      const actual = crypto.createHash("sha256").update(fs.readFileSync(path.join(xsdDirectory(), name))).digest("hex")
      expect(actual, name).toBe(sum)
    }
  })

  const accepted = ["1", "9999", "01", "900", "10000", "89999", "09999", "00001"]
  // "90000".."99999" are refused by the published pattern itself; all zeros only by our narrowing.
  const refused = ["0", "00", "00000", "90000", "99999", "100000", "1a", "", " 1"]

  it("accepts series 1..89999 and refuses all zeros, 90000 and up, six digits and non-digits", () => {
    for (const series of accepted) {
      expect(validateXml("DPS", dpsWithSeries(series)), series).toEqual(Result.void)
    }
    for (const series of refused) {
      const messages = messagesOf(validateXml("DPS", dpsWithSeries(series)))
      expect(messages.length, `series ${JSON.stringify(series)}`).toBeGreaterThan(0)
      expect(messages.join("\n")).toContain("serie")
    }
  })

  it.skipIf(!hasXmllint)(withXmllint("xmllint agrees on the same series with the written patched schemas"), () => {
    for (const series of accepted) {
      const run = xmllintValidate("DPS_v1.01.xsd", dpsWithSeries(series))
      expect(run.ok, `${series}: ${run.output}`).toBe(true)
    }
    for (const series of refused) {
      const run = xmllintValidate("DPS_v1.01.xsd", dpsWithSeries(series))
      expect(run.ok, `${JSON.stringify(series)} should be refused`).toBe(false)
      expect(run.output).toContain("serie")
    }
  })

  it("reports malformed XML, a wrong root element and missing children as SchemaViolation", () => {
    const malformed = validateXml("DPS", "<DPS><infDPS></DPS>")
    expect(Result.isFailure(malformed) && malformed.failure._tag).toBe("SchemaViolation")
    expect(Result.isFailure(malformed) && malformed.failure.schema).toBe("DPS")
    expect(messagesOf(malformed).length).toBeGreaterThan(0)

    expect(messagesOf(validateXml("DPS", "")).length).toBeGreaterThan(0)

    const wrongRoot = messagesOf(
      validateXml("NFSe", dpsWithSeries("1"))
    )
    expect(wrongRoot.join("\n")).toMatch(/No matching global declaration|DPS/)

    const missing = messagesOf(
      validateXml("pedRegEvento", "<pedRegEvento versao=\"1.01\" xmlns=\"http://www.sped.fazenda.gov.br/nfse\"/>")
    )
    expect(missing[0]).toMatch(
      /^line 1: Element 'pedRegEvento': Missing child element\(s\)\. Expected is \( infPedReg \)\.$/
    )
  })

  it("keeps at most 20 messages", () => {
    const items = Array.from({ length: 40 }, (_, i) => `<xItemPed>${"x".repeat(61)}${i}</xItemPed>`).join("")
    const xml = dpsWithSeries("1").replace("</cServ>", `</cServ><infoCompl><gItemPed>${items}</gItemPed></infoCompl>`)
      .replace(/<infoCompl><xInfComp>[^<]*<\/xInfComp><\/infoCompl>/, "")
    const messages = messagesOf(validateXml("DPS", xml))
    expect(messages.length).toBe(20)
  })

  it("validates a DPS in well under 10 ms once the schema is compiled", () => {
    const xml = dpsWithSeries("1")
    const firstStart = performance.now()
    expect(validateXml("DPS", xml)).toEqual(Result.void)
    const first = performance.now() - firstStart
    const runs = 200
    const start = performance.now()
    for (let i = 0; i < runs; i++) validateXml("DPS", xml)
    const average = (performance.now() - start) / runs
    console.log(
      `XSD: first DPS validation (may include compiling) ${first.toFixed(1)} ms, then ${average.toFixed(3)} ms per DPS`
    )
    expect(average).toBeLessThan(10)
  })
})
