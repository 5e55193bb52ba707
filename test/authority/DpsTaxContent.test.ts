/**
 * The DPS's tax content group by group, each checked against the official schema (libxml2 with the
 * shipped XSDs), read back as the local authority reads it, and, where the national rules forbid
 * it, refused by the local authority's value rules even when a DPS reaches it without our checks.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { buildDps, type DpsInput } from "../../src/authority/sefin/Dps.js"
import { readDps } from "../../src/authority/sefin/DpsRead.js"
import { buildDpsIbsCbs } from "../../src/authority/sefin/IbsCbs.js"
import { buildNfse } from "../../src/authority/sefin/Nfse.js"
import { nfseValues, noteFiguresOf } from "../../src/authority/sefin/NfseValues.js"
import { noteAmountsOf as noteAmountsOfXml } from "../../src/authority/TaxAuthority.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import type { IbsCbs } from "../../src/domain/IbsCbs.js"
import type { Amounts } from "../../src/domain/Money.js"
import { type PisCofinsRetention, retentionOfCode } from "../../src/domain/PisCofinsRetention.js"
import { computeTaxes } from "../../src/domain/TaxComputation.js"
import type { PIS_COFINS_CSTS } from "../../src/domain/TaxContent.js"
import { reformRefusals } from "../../tools/local-authority/ReformRules.js"
import { valueRefusals } from "../../tools/local-authority/ValueRules.js"
import { realisticDpsInput, sampleAccessKey } from "../support/NfseXml.js"

beforeAll(() => loadSchemas())

const amounts = (input: Parameters<typeof computeTaxes>[0]): Amounts => Result.getOrThrow(computeTaxes(input))

const valid = (input: Partial<DpsInput>) => {
  const { xml } = buildDps({ ...realisticDpsInput, ...input })
  expect(validateXml("DPS", xml), xml).toEqual(Result.void)
  const read = readDps(xml)
  if (Result.isFailure(read)) throw new Error(read.failure.message)
  return { xml, dps: read.success }
}

describe("DPS v1.01 tax content", () => {
  it("writes deductions by percentage and by documents, a municipal benefit, a suspension and cTribMun", () => {
    const byRate = valid({
      amounts: amounts({
        services: 100_000,
        deductionRate: "12.5",
        issRate: "2",
        issComputed: true,
        issWithheld: false
      }),
      tax: { deduction_rate: "12.5" }
    })
    expect(byRate.xml).toContain("<vDedRed><pDR>12.50</pDR></vDedRed>")
    expect(byRate.dps.amounts.deductionRate).toBe("12.50")

    const documents = [
      {
        nfe_key: "35261111222333000181550010000012341000012345",
        kind: "materials" as const,
        issued_on: "2026-11-02",
        deductible_amount: 40_000,
        amount: 30_000
      },
      {
        document_number: "Recibo 77",
        kind: "other" as const,
        description: "Locação de andaimes",
        issued_on: "2026-11-03",
        deductible_amount: 5_000,
        amount: 5_000
      }
    ]
    const byDocuments = valid({
      amounts: amounts({
        services: 100_000,
        deductionDocuments: [30_000, 5_000],
        issComputed: true,
        issWithheld: false
      }),
      tax: { deduction_documents: documents },
      service: { ...realisticDpsInput.service, municipalCode: "100" }
    })
    expect(byDocuments.xml).toContain(
      "<docDedRed><chNFe>35261111222333000181550010000012341000012345</chNFe><tpDedRed>2</tpDedRed>" +
        "<dtEmiDoc>2026-11-02</dtEmiDoc><vDedutivelRedutivel>400.00</vDedutivelRedutivel>" +
        "<vDeducaoReducao>300.00</vDeducaoReducao></docDedRed>"
    )
    expect(byDocuments.xml).toContain("<tpDedRed>99</tpDedRed><xDescOutDed>Locação de andaimes</xDescOutDed>")
    expect(byDocuments.xml).toContain("<cTribNac>010701</cTribNac><cTribMun>100</cTribMun>")
    expect(byDocuments.dps.amounts.deductionDocuments).toEqual(["300.00", "50.00"])

    const benefit = valid({
      amounts: amounts({
        services: 100_000,
        benefitReductionRate: "10",
        issRate: "2",
        issComputed: true,
        issWithheld: false
      }),
      tax: {
        iss: {
          suspension: { kind: "judicial", process_number: "0".repeat(29) + "1" },
          municipal_benefit: { id: "35503080100001", reduction_rate: "10" }
        }
      }
    })
    expect(benefit.xml).toContain(
      "<exigSusp><tpSusp>1</tpSusp><nProcesso>000000000000000000000000000001</nProcesso></exigSusp>" +
        "<BM><nBM>35503080100001</nBM><pRedBCBM>10.00</pRedBCBM></BM><tpRetISSQN>1</tpRetISSQN>"
    )
    // The authority's note: the benefit's reduction in reais, then base and ISS after it.
    expect(nfseValues(benefit.dps, "2.00")).toBe(
      "<valores><tpBM>2</tpBM><vCalcBM>100.00</vCalcBM><vBC>900.00</vBC><pAliqAplic>2.00</pAliqAplic>" +
        "<vISSQN>18.00</vISSQN><vLiq>1000.00</vLiq></valores>"
    )
  })

  it("writes approximate taxes as percentages, and a service provided abroad by its country", () => {
    const { dps, xml } = valid({
      tax: { approximate_taxes: { rates: { federal: "13.45", state: "0", municipal: "2" } } },
      service: { ...realisticDpsInput.service, countryCode: "AR" }
    })
    expect(xml).toContain(
      "<totTrib><pTotTrib><pTotTribFed>13.45</pTotTribFed><pTotTribEst>0.00</pTotTribEst>" +
        "<pTotTribMun>2.00</pTotTribMun></pTotTrib></totTrib>"
    )
    expect(xml).toContain("<locPrest><cPaisPrestacao>AR</cPaisPrestacao></locPrest>")
    expect(dps.service.countryCode).toBe("AR")
    expect(dps.amounts.totalTaxesKind).toBe("pTotTrib")
  })

  it("writes a taker without NIF by its reason, with a foreign address, and no taker at all", () => {
    const { dps, xml } = valid({
      taker: {
        no_nif_reason: "not_required",
        name: "John Smith",
        foreign_address: {
          country: "GB",
          postal_code: "SW1A 1AA",
          city: "London",
          region: "Greater London",
          street: "Downing Street",
          number: "10",
          district: "Westminster"
        }
      }
    })
    expect(xml).toContain(
      "<toma><cNaoNIF>2</cNaoNIF><xNome>John Smith</xNome><end><endExt><cPais>GB</cPais><cEndPost>SW1A 1AA</cEndPost>" +
        "<xCidade>London</xCidade><xEstProvReg>Greater London</xEstProvReg></endExt><xLgr>Downing Street</xLgr>"
    )
    expect(dps.taker?.idKind).toBe("cNaoNIF")
    const anonymous = valid({ taker: null })
    expect(anonymous.xml).not.toContain("<toma>")
    expect(anonymous.dps.taker).toBeUndefined()
  })

  it("a rate outside the Simples is refused by the local authority with E0617, as the national system does", () => {
    const { dps } = valid({})
    expect(valueRefusals(dps, "2.00")).toEqual([])
    const withRate = readDps(
      buildDps(realisticDpsInput).xml.replace(
        "<tpRetISSQN>1</tpRetISSQN>",
        "<tpRetISSQN>1</tpRetISSQN><pAliq>2.00</pAliq>"
      )
    )
    expect(valueRefusals(Result.getOrThrow(withRate), "2.00").map((r) => r.code)).toEqual(["E0617"])
  })

  it("the local authority refuses what our checks refuse before sending, with the national codes (Anexo I)", () => {
    const codes = (input: Partial<DpsInput>) => valueRefusals(valid(input).dps, "2.00").map((r) => r.code)
    // ISS withheld by a taker who is identified by NIF only (row 166).
    expect(codes({
      taker: { nif: "X1", name: "Foreign", foreign_address: realisticForeign },
      tax: { iss: { withheld_by: "taker" } }
    })).toEqual(["E0204"])
    // Withheld by an intermediary without one (row 204).
    expect(codes({ tax: { iss: { withheld_by: "intermediary" } } })).toEqual(["E0264"])
    // Immune without its kind (row 392); an export to a Brazilian taker without foreign-trade data
    // (rows 251 and 383).
    expect(codes({ tax: { iss: { taxation: "immune" } } })).toEqual(["E0592"])
    expect(codes({ tax: { iss: { taxation: "export" } } })).toEqual(["E0330", "E0529"])
    // indTotTrib from a provider outside the Simples.
    const noTotals = readDps(
      buildDps(realisticDpsInput).xml.replace(/<totTrib>.*<\/totTrib>/, "<totTrib><indTotTrib>0</indTotTrib></totTrib>")
    )
    expect(valueRefusals(Result.getOrThrow(noTotals), "2.00").map((r) => r.code)).toEqual(["E0713"])
    // Retentions above the services' value: the net value would be negative (row 61).
    expect(codes({ tax: { federal: { irrf_withheld: 200_000 } } })).toEqual(["E1508"])
  })

  it("a discount or deduction above the services' value is refused with the code of the value named (Anexo I)", () => {
    // A valid DPS whose vServ is then lowered below what it takes off, as a careless writer might send.
    const shrunk = (input: Parameters<typeof computeTaxes>[0], extra: Partial<DpsInput> = {}) => {
      const { xml } = valid({ amounts: amounts(input), ...extra })
      const read = readDps(xml.replace(/<vServ>[^<]*<\/vServ>/, "<vServ>1.00</vServ>"))
      return valueRefusals(Result.getOrThrow(read), "2.00").map((r) => r.code)
    }
    const plain = { services: 100_000, issRate: "2", issComputed: true, issWithheld: false }
    expect(shrunk({ ...plain, unconditionalDiscount: 10_000 })).toEqual(["E0431"])
    expect(shrunk({ ...plain, conditionalDiscount: 10_000 })).toEqual(["E0432"])
    expect(shrunk({ ...plain, deductions: 10_000 })).toEqual(["E0476"])
  })

  it("the figures the simulator tells with its note are the ones a reader gets back from the XML", () => {
    const cases: ReadonlyArray<Partial<DpsInput>> = [
      {},
      { tax: { iss: { withheld_by: "taker" } } },
      { tax: { iss: { taxation: "immune", immunity: "temples" } } },
      { tax: { federal: { irrf_withheld: 1_500, csll_withheld: 1_000 } } },
      {
        amounts: amounts({
          services: 100_000,
          unconditionalDiscount: 3_000,
          conditionalDiscount: 2_000,
          benefitReductionAmount: 1_000,
          issRate: "2.00",
          issComputed: true,
          issWithheld: true
        }),
        tax: {
          iss: { withheld_by: "intermediary", municipal_benefit: { id: "35503080000012", reduction_amount: 1_000 } },
          federal: { pis_cofins: { cst: "01", pis_amount: 650, retention: { pis: true, cofins: false, csll: false } } }
        },
        intermediary: { tax_id: "60701190000104", name: "Agência Intermediária Ltda" }
      },
      { issuer: { ...realisticDpsInput.issuer, simplesNacional: "me_epp" } },
      { issuer: { ...realisticDpsInput.issuer, simplesNacional: "mei" } }
    ]
    for (const input of cases) {
      const { dps, xml } = valid(input)
      const nfse = buildNfse({
        signedDpsXml: xml,
        dps,
        accessKey: sampleAccessKey,
        nfseNumber: 1,
        processedAt: new Date("2026-11-10T14:00:00Z"),
        tpAmb: 2,
        issRate: "2.00"
      })
      expect(noteFiguresOf(dps, "2.00"), JSON.stringify(input)).toEqual(noteAmountsOfXml(nfse))
    }
  })

  it("writes each tpRetPisCofins of the shipped schema and any of its CSTs; the note's retentions leave PIS/COFINS out", () => {
    const federal = (retention: PisCofinsRetention, cst: (typeof PIS_COFINS_CSTS)[number] = "01") => ({
      pis_cofins: {
        cst,
        base: 95_000,
        pis_rate: "0.65",
        cofins_rate: "3.00",
        pis_amount: 618,
        cofins_amount: 2_850,
        retention
      },
      inss_withheld: 11_000,
      irrf_withheld: 1_500,
      csll_withheld: 1_000
    })
    // R$ 1.000,00, unconditional discount 50,00, ISS 2 % of 950,00 = 19,00 withheld by the taker.
    const computed = amounts({
      services: 100_000,
      unconditionalDiscount: 5_000,
      issRate: "2.00",
      issComputed: true,
      issWithheld: true,
      federal: { inss: 11_000, irrf: 1_500, csll: 1_000 }
    })
    for (const code of ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]) {
      const retention = retentionOfCode(code)!
      const { xml } = valid({ amounts: computed, tax: { iss: { withheld_by: "taker" }, federal: federal(retention) } })
      expect(xml, code).toContain(`<vCofins>28.50</vCofins><tpRetPisCofins>${code}</tpRetPisCofins></piscofins>`)
    }
    for (const cst of ["49", "99"] as const) {
      expect(valid({ tax: { federal: federal({ pis: false, cofins: false }, cst) } }).xml).toContain(
        `<CST>${cst}</CST>`
      )
    }
    // The deprecated boolean still writes 1.
    const legacy = { pis_cofins: { cst: "01" as const, pis_amount: 618, withheld: true } }
    expect(valid({ tax: { federal: legacy } }).xml).toContain("<vPis>6.18</vPis><tpRetPisCofins>1</tpRetPisCofins>")

    const { dps, xml } = valid({
      amounts: computed,
      tax: { iss: { withheld_by: "taker" }, federal: federal({ pis: true, cofins: true, csll: true }) }
    })
    const nfse = buildNfse({
      signedDpsXml: xml,
      dps,
      accessKey: sampleAccessKey,
      nfseNumber: 1,
      processedAt: new Date("2026-11-10T14:00:00Z"),
      tpAmb: 2,
      issRate: "2.00"
    })
    // vTotalRet = 110,00 + 15,00 + 10,00 + 19,00 = 154,00; vLiq = 1.000 - 50 - 154 = 796,00.
    expect(nfse).toContain("<vISSQN>19.00</vISSQN><vTotalRet>154.00</vTotalRet><vLiq>796.00</vLiq></valores>")
    expect(noteAmountsOfXml(nfse)).toEqual({
      unconditional_discount: 5_000,
      conditional_discount: 0,
      deductions: 0,
      benefit_reduction: 0,
      base: 95_000,
      iss_rate: "2.00",
      iss_amount: 1_900,
      iss_withheld: 1_900,
      federal_withheld: 13_500,
      total_withheld: 15_400,
      net: 79_600
    })
    expect(noteFiguresOf(dps, "2.00")).toEqual(noteAmountsOfXml(nfse))
  })

  it("the local authority refuses an IBS/CBS group the official tables refuse, or before 2026 (E0850), not a later year", () => {
    const reform = (ibsCbs: IbsCbs, competence = realisticDpsInput.competence) =>
      reformRefusals(valid({ competence, ibsCbsXml: buildDpsIbsCbs(ibsCbs) }).dps, "2.00").map((r) => r.code)
    const group: IbsCbs = { operation_indicator: "100301", cst: "000", class_code: "000001" }
    expect(reform(group)).toEqual([])
    // A class of another CST, and one the table does not allow on an NFS-e.
    expect(reform({ ...group, class_code: "200029" })).toEqual(["E0958"])
    expect(reform({ ...group, class_code: "000999" })).toEqual(["E0969"])
    // 2025 had no IBS/CBS: the national rule E0850.
    expect(reform(group, "2025-12-01")).toEqual(["E0850"])
    // 2027's CBS rate is not published yet, yet the authority knows it: a valid group passes.
    expect(reform(group, "2027-01-04")).toEqual([])
    expect(reform(group, "2031-07-01")).toEqual([])
  })
})

const realisticForeign = {
  country: "US",
  postal_code: "10001",
  city: "New York",
  region: "NY",
  street: "5th Avenue",
  number: "1",
  district: "Manhattan"
}
