/**
 * `tpRetPisCofins` as the schema package of 27/07/2026 defines it (0–9, NT 007), and what it does
 * to a note's amounts: nothing. vTotalRet = vRetCP + vRetIRRF + vRetCSLL + the ISS withheld, and
 * vPis/vCofins are the provider's contributions due (tiposComplexos_v1.01.xsd, TCValoresNFSe and
 * TCTribOutrosPisCofins).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { readFileSync } from "node:fs"
import { NewDocument } from "../../src/documents/Api.js"
import { taxContentOf } from "../../src/documents/TaxRules.js"
import { b2bWithRetentionsExample } from "../../src/domain/DocumentExamples.js"
import {
  declaredRetention,
  type PisCofinsRetention,
  retentionCode,
  retentionOfCode
} from "../../src/domain/PisCofinsRetention.js"
import { PIS_COFINS_CSTS } from "../../src/domain/TaxContent.js"

const decode = Schema.decodeUnknownSync(NewDocument)
const contentOf = (body: unknown) => taxContentOf(decode(body), "not_opted", "2026-11-10")

/** The example with its `pis_cofins` group replaced (or removed when undefined). */
const withPisCofins = (pisCofins: object | undefined, federal: object = {}) => {
  const { pis_cofins: _, ...rest } = b2bWithRetentionsExample.federal
  return {
    ...b2bWithRetentionsExample,
    federal: { ...rest, ...federal, ...(pisCofins === undefined ? {} : { pis_cofins: pisCofins }) }
  }
}

const issuesOf = (body: unknown) => {
  const result = contentOf(body)
  if (Result.isSuccess(result)) throw new Error("expected a refusal")
  return (result.failure.issues ?? []).map((issue) => `${issue.path.join(".")}: ${issue.message}`)
}

describe("tpRetPisCofins: the schema's ten codes", () => {
  it("each combination has the code the schema documents, and each code reads back as it", () => {
    const expected: ReadonlyArray<readonly [PisCofinsRetention, string]> = [
      [{ pis: false, cofins: false, csll: false }, "0"],
      [{ pis: true, cofins: true }, "1"],
      [{ pis: false, cofins: false }, "2"],
      [{ pis: true, cofins: true, csll: true }, "3"],
      [{ pis: true, cofins: true, csll: false }, "4"],
      [{ pis: true, cofins: false, csll: false }, "5"],
      [{ pis: false, cofins: true, csll: false }, "6"],
      [{ pis: false, cofins: true, csll: true }, "7"],
      [{ pis: false, cofins: false, csll: true }, "8"],
      [{ pis: true, cofins: false, csll: true }, "9"]
    ]
    for (const [retention, code] of expected) {
      expect(retentionCode(retention), code).toBe(code)
      expect(retentionOfCode(code)).toEqual(retention)
    }
    // Only PIS or only COFINS, the CSLL unsaid: the schema has no code for it.
    expect(retentionCode({ pis: true, cofins: false })).toBeUndefined()
    expect(retentionCode({ pis: false, cofins: true })).toBeUndefined()
    expect(retentionOfCode("10")).toBeUndefined()
  })

  it("the codes and the CSTs are exactly the shipped schema's enumerations", () => {
    const simple = readFileSync(new URL("../../schemas/nfse-v1.01/tiposSimples_v1.01.xsd", import.meta.url), "utf8")
    const enumeration = (type: string) => {
      const body = new RegExp(`<xs:simpleType name="${type}">([\\s\\S]*?)</xs:simpleType>`).exec(simple)![1]!
      return [...body.matchAll(/<xs:enumeration value="([^"]+)"\/>/g)].map((match) => match[1])
    }
    const codes = enumeration("TSTipoRetPISCofins")
    expect(codes).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"])
    for (const code of codes) expect(retentionCode(retentionOfCode(code!)!)).toBe(code)
    expect([...PIS_COFINS_CSTS]).toEqual(enumeration("TSTipoCST"))
  })

  it("the deprecated boolean `withheld` is codes 1 and 2", () => {
    expect(retentionCode(declaredRetention({ withheld: true })!)).toBe("1")
    expect(retentionCode(declaredRetention({ withheld: false })!)).toBe("2")
    expect(declaredRetention({})).toBeUndefined()
  })
})

describe("tpRetPisCofins in a document", () => {
  it("the contract's B2B example: vTotalRet and vLiq by the shipped schema's formulas", () => {
    // Base 9.900,00, ISS 2 % = 198,00 withheld; vTotalRet = 1.100 + 150 + 100 + 198 = 1.548,00;
    // vLiq = 10.000 - 100 - 1.548 = 8.352,00. PIS 65,00 and COFINS 300,00 are not in either.
    const content = Result.getOrThrow(contentOf(b2bWithRetentionsExample))
    expect(content.amounts).toMatchObject({
      base: 990_000,
      iss_amount: 19_800,
      iss_withheld: 19_800,
      federal_withheld: 135_000,
      total_withheld: 154_800,
      net: 835_200
    })
  })

  it("whatever the retention declared and the PIS/COFINS due, the amounts are those without the group", () => {
    const without = Result.getOrThrow(contentOf(withPisCofins(undefined))).amounts
    const retention = fc.constantFrom(...["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"].map(retentionOfCode))
    fc.assert(fc.property(
      retention,
      fc.integer({ min: 0, max: 500_000 }),
      fc.integer({ min: 0, max: 500_000 }),
      fc.constantFrom(...PIS_COFINS_CSTS),
      (declared, pis, cofins, cst) => {
        // The CSLL amount agrees with the CSLL answer (a refused combination is another test).
        const csll = declared!.csll === false ? { csll_withheld: 0 } : {}
        const body = withPisCofins({ cst, pis_amount: pis, cofins_amount: cofins, retention: declared }, csll)
        const amounts = Result.getOrThrow(contentOf(body)).amounts
        const reference = declared!.csll === false
          ? Result.getOrThrow(contentOf(withPisCofins(undefined, csll))).amounts
          : without
        expect(amounts).toEqual(reference)
      }
    ))
  })

  it("refuses, on our field, what no code says or what the note's own CSLL contradicts", () => {
    const pisOnly = withPisCofins({ cst: "01", retention: { pis: true, cofins: false } })
    expect(issuesOf(pisOnly)).toEqual([expect.stringMatching(/^federal\.pis_cofins\.retention\.csll: .*required/)])
    const both = withPisCofins({ cst: "01", withheld: true, retention: { pis: true, cofins: true } })
    expect(issuesOf(both)).toEqual([expect.stringMatching(/^federal\.pis_cofins\.withheld: .*not both/)])
    // CSLL said not withheld, while csll_withheld is 100,00 (the example's).
    const contradicted = withPisCofins({ cst: "01", retention: { pis: true, cofins: true, csll: false } })
    expect(issuesOf(contradicted)).toEqual([expect.stringMatching(/^federal\.pis_cofins\.retention\.csll: .*false/)])
    // CSLL said withheld, and no amount of it.
    const missing = withPisCofins({ cst: "01", retention: { pis: false, cofins: false, csll: true } }, {
      csll_withheld: 0
    })
    expect(issuesOf(missing)).toEqual([expect.stringMatching(/^federal\.csll_withheld: .*required/)])
    // A withholding needs a taker, the retention flags too.
    const { taker: _, ...noTaker } = withPisCofins({ cst: "01", retention: { pis: true, cofins: true } }, {
      inss_withheld: 0,
      irrf_withheld: 0,
      csll_withheld: 0
    })
    const { inss_withheld: _i, irrf_withheld: _r, csll_withheld: _c, ...federal } = noTaker.federal
    expect(issuesOf({ ...noTaker, iss: {}, federal })).toEqual([
      expect.stringMatching(/^taker: .*federal taxes are withheld/)
    ])
  })

  it("a CST of the schema beyond 00–09 is accepted; one outside it is a 400 at the field", () => {
    for (const cst of ["49", "50", "67", "75", "98", "99"]) {
      expect(Result.isSuccess(contentOf(withPisCofins({ cst }))), cst).toBe(true)
    }
    for (const cst of ["10", "48", "57", "76", "97", "1"]) {
      expect(() => decode(withPisCofins({ cst })), cst).toThrow(/cst/)
    }
  })
})
