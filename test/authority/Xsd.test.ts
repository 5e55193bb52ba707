/**
 * The XSD validator over the official v1.01 schemas: the one facet patched in memory (the serie
 * look-ahead libxml2 cannot compile) still refuses what the official pattern refuses, the official
 * files stay untouched, failures read like libxml2's, and validation is fast once compiled.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { buildDps } from "../../src/authority/sefin/Dps.js"
import { loadSchemas, validateXml, xsdDirectory } from "../../src/authority/xml/Xsd.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { hasXmllint, patchedSchemaDir, realisticDpsInput, withXmllint, xmllintValidate } from "../support/NfseXml.js"

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
    expect(officialSimple).toContain("value=\"^(?!0{1,5}$)\\d{1,5}$\"")
    expect(patchedSimple).not.toContain("(?!")
    expect(patchedSimple).toContain("value=\"0{0,4}[1-9][0-9]{0,4}\"")
    // Only that facet differs.
    expect(patchedSimple.replace("value=\"0{0,4}[1-9][0-9]{0,4}\"", "value=\"^(?!0{1,5}$)\\d{1,5}$\"")).toBe(
      officialSimple
    )
    for (const name of official.filter((f) => f !== "tiposSimples_v1.01.xsd")) {
      expect(fs.readFileSync(path.join(dir, name))).toEqual(fs.readFileSync(path.join(xsdDirectory(), name)))
    }
  })

  // The service ships its own copy (a deployment has no ../shared); it must be the official one.
  const reference = path.join(import.meta.dirname, "../../../shared/reference/nfse-nacional/xsd-v1.01")
  it.skipIf(!fs.existsSync(reference))(
    "the schemas the service ships are byte-identical to the official package (needs ../shared)",
    () => {
      const shipped = fs.readdirSync(xsdDirectory()).filter((f) => f.endsWith(".xsd")).sort()
      expect(shipped).toEqual(fs.readdirSync(reference).filter((f) => f.endsWith(".xsd")).sort())
      for (const name of shipped) {
        expect(fs.readFileSync(path.join(xsdDirectory(), name)), name).toEqual(
          fs.readFileSync(path.join(reference, name))
        )
      }
    }
  )

  const accepted = ["1", "99999", "01", "900", "10000"]
  const refused = ["0", "00", "00000", "100000", "1a", "", " 1"]

  it("accepts series 1..99999 and refuses all zeros, six digits and non-digits", () => {
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
