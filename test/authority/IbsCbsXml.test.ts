/**
 * The IBS/CBS groups in the national XML: the DPS's `IBSCBS`, inserted where it belongs in a DPS
 * the existing builder makes (last child of infDPS), passes the official schema for every shape
 * of the group we write, and reads back to the same JSON; the NFS-e's `IBSCBS` from the
 * computation passes the NFSe schema inside a signed note and reads back to the same computation.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { noteIbsCbsOf } from "../../src/authority/NoteIbsCbs.js"
import { buildDps } from "../../src/authority/sefin/Dps.js"
import { readDps } from "../../src/authority/sefin/DpsRead.js"
import {
  buildDpsIbsCbs,
  buildNfseIbsCbs,
  formatPercent,
  readDpsIbsCbs,
  readNfseIbsCbs
} from "../../src/authority/sefin/IbsCbs.js"
import { buildNfse } from "../../src/authority/sefin/Nfse.js"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { nfseElement, parseXml } from "../../src/authority/xml/XmlText.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { decodeIbsCbs, type IbsCbs } from "../../src/domain/IbsCbs.js"
import { computeIbsCbs, computeIbsCbsForGroup } from "../../src/domain/IbsCbsAmounts.js"
import { ibsCbsFiguresOf } from "../../src/domain/IbsCbsFigures.js"
import { standInRatesFor } from "../../src/domain/IbsCbsRates.js"
import { NFSE_TAX_CLASSES } from "../../src/domain/IbsCbsTables.js"
import { makePkcs12 } from "../support/certificates.js"
import { hasXmllint, realisticDpsInput, sampleAccessKey, withXmllint, xmllintValidate } from "../support/NfseXml.js"

beforeAll(() => loadSchemas())

const issuer = makePkcs12({ cn: "EMPRESA TESTE LTDA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const authority = makePkcs12({ cn: "SEFIN LOCAL:00394460005887", cnpjOid: "00394460005887", password: "x" })

const decoded = (json: unknown): IbsCbs => {
  const result = decodeIbsCbs(json)
  if (Result.isFailure(result)) throw new Error(JSON.stringify(result.failure))
  return result.success
}

/** The groups we write, from the smallest to every optional part. */
const groups: ReadonlyArray<readonly [string, IbsCbs]> = [
  ["minimal, fully taxed", decoded({ operation_indicator: "100301", cst: "000", class_code: "000001" })],
  [
    "personal use, reduced rate (health, 60 %)",
    decoded({
      operation_indicator: "100301",
      personal_use: true,
      cst: "200",
      class_code: "200029"
    })
  ],
  [
    "destination by CNPJ, not personal use",
    decoded({
      operation_indicator: "100301",
      personal_use: false,
      destination: { tax_id: "45.997.418/0001-53", name: "Filial Recebedora Ltda", email: "fiscal@example.com.br" },
      cst: "000",
      class_code: "000001"
    })
  ],
  [
    "foreign destination by NIF, export (immunity)",
    decoded({
      operation_indicator: "100301",
      destination: { nif: "DE811907980", name: "Kunde GmbH" },
      cst: "410",
      class_code: "410004"
    })
  ],
  [
    "suspension with the regular taxation",
    decoded({
      operation_indicator: "100301",
      cst: "550",
      class_code: "550016",
      regular_taxation: { cst: "000", class_code: "000001" }
    })
  ],
  [
    "deferral with reduction",
    decoded({
      operation_indicator: "100301",
      cst: "515",
      class_code: "515001",
      deferral: { state_ibs_percent: "100", municipal_ibs_percent: "12.5", cbs_percent: "0" }
    })
  ]
]

const dpsWith = (group: IbsCbs) => {
  const dps = buildDps(realisticDpsInput).xml
  // The group is infDPS's last child, right after valores.
  return dps.replace("</valores></infDPS>", `</valores>${buildDpsIbsCbs(group)}</infDPS>`)
}

describe("the DPS's IBSCBS group", () => {
  it("is written after valores, in schema order, and the DPS stays valid, for every shape", () => {
    for (const [name, group] of groups) {
      const xml = dpsWith(group)
      expect(xml, name).toContain(`</valores><IBSCBS><finNFSe>0</finNFSe>`)
      expect(validateXml("DPS", xml), name).toEqual(Result.void)
    }
    expect(buildDpsIbsCbs(groups[2]![1])).toBe(
      "<IBSCBS><finNFSe>0</finNFSe><indFinal>0</indFinal><cIndOp>100301</cIndOp><indDest>1</indDest>" +
        "<dest><CNPJ>45997418000153</CNPJ><xNome>Filial Recebedora Ltda</xNome><email>fiscal@example.com.br</email></dest>" +
        "<valores><trib><gIBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib></gIBSCBS></trib></valores></IBSCBS>"
    )
    expect(buildDpsIbsCbs(groups[5]![1])).toContain(
      "<gDif><pDifUF>100.00</pDifUF><pDifMun>12.50</pDifMun><pDifCBS>0.00</pDifCBS></gDif>"
    )
  })

  it("is still a DPS the existing reader reads, and reads back to the same JSON", () => {
    for (const [name, group] of groups) {
      const xml = dpsWith(group)
      expect(Result.isSuccess(readDps(xml)), name).toBe(true)
      const infDps = nfseElement(Result.getOrThrow(parseXml(xml)).documentElement!, "infDPS")!
      const back = readDpsIbsCbs(infDps)
      const expected = {
        ...group,
        ...(group.destination?.tax_id === undefined
          ? {}
          : { destination: { ...group.destination, tax_id: group.destination.tax_id.replace(/\D/gu, "") } })
      }
      expect(back, name).toEqual(Result.succeed(expected))
    }
    const plain = nfseElement(Result.getOrThrow(parseXml(buildDps(realisticDpsInput).xml)).documentElement!, "infDPS")!
    expect(readDpsIbsCbs(plain)).toEqual(Result.succeed(undefined))
  })

  it.skipIf(!hasXmllint)(withXmllint("xmllint accepts the DPS with each group"), () => {
    for (const [name, group] of groups) {
      const run = xmllintValidate("DPS_v1.01.xsd", dpsWith(group))
      expect(run.ok, `${name}: ${run.output}`).toBe(true)
    }
  })

  it("a group out of order or with an element the published schema lacks (indZFMALC) is refused", () => {
    const group = buildDpsIbsCbs(groups[0]![1])
    const misplaced = buildDps(realisticDpsInput).xml.replace("<valores>", `${group}<valores>`)
    expect(Result.isFailure(validateXml("DPS", misplaced))).toBe(true)
    const withZfm = dpsWith(groups[0]![1]).replace("<indDest>", "<indZFMALC>1</indZFMALC><indDest>")
    const result = validateXml("DPS", withZfm)
    expect(Result.isFailure(result) ? result.failure.messages.join("\n") : "").toContain("indZFMALC")
  })
})

const nfseWith = (group: IbsCbs, fragment: string) => {
  const signedDpsXml = signEnveloped(dpsWith(group), {
    element: "infDPS",
    privateKeyPem: issuer.privateKeyPem,
    certificatePem: issuer.certificatePem
  })
  const dps = Result.getOrThrow(readDps(signedDpsXml))
  const nfse = buildNfse({
    signedDpsXml,
    dps,
    accessKey: sampleAccessKey,
    nfseNumber: 1234,
    dfseNumber: 7_654_321,
    processedAt: new Date("2026-11-10T14:30:17.250Z"),
    tpAmb: 2,
    issuerName: "Empresa Teste Ltda",
    municipalityNames: { "3550308": "São Paulo" },
    nationalServiceName: "Suporte técnico em informática",
    issRate: "2.00"
  })
  // The authority's group is in infNFSe right before the embedded DPS (buildNfse computes its own
  // from the DPS's values); the one under test takes its place.
  expect(nfse).toMatch(/<\/valores><IBSCBS><cLocalidadeIncid>3550308<\/cLocalidadeIncid>.*<\/IBSCBS><DPS /)
  const withGroup = nfse.replace(/<IBSCBS><cLocalidadeIncid>.*?<\/IBSCBS>(?=<DPS )/, fragment)
  return signEnveloped(withGroup, {
    element: "infNFSe",
    privateKeyPem: authority.privateKeyPem,
    certificatePem: authority.certificatePem,
    withComments: true
  })
}

describe("the NFS-e's IBSCBS group", () => {
  const amounts = {
    competence: "2026-11-10",
    services: 150_000,
    unconditionalDiscount: 0,
    reimbursements: 0,
    iss: 3_000,
    pis: 975,
    cofins: 4_500,
    netValue: 150_000
  }

  it("is valid inside a signed note for a taxed, a reduced, an immune and a deferred class, and reads back", () => {
    for (const [name, group] of groups) {
      const computation = Result.getOrThrow(computeIbsCbsForGroup(group, amounts))
      const fragment = buildNfseIbsCbs({ localityCode: "3550308", localityName: "São Paulo", computation })
      const xml = nfseWith(group, fragment)
      expect(validateXml("NFSe", xml), name).toEqual(Result.void)
      if (group.deferral !== undefined) {
        expect(fragment, name).toMatch(/<gIBSUFTot><vDifUF>[0-9.]+<\/vDifUF><vIBSUF>0.00<\/vIBSUF>/)
      }
      const infNfse = nfseElement(Result.getOrThrow(parseXml(xml)).documentElement!, "infNFSe")!
      expect(readNfseIbsCbs(infNfse), name).toEqual(
        Result.succeed({ localityCode: "3550308", localityName: "São Paulo", computation })
      )
    }
  })

  it("writes the 2026 test rates and the base net of ISS, PIS and COFINS", () => {
    const computation = Result.getOrThrow(computeIbsCbs({ ...amounts, taxClass: NFSE_TAX_CLASSES.get("000001")! }))
    // 1500.00 − 30.00 − 9.75 − 45.00 = 1415.25; CBS 0.9 % = 12.74 (12.73725); IBS 0.1 % = 1.42 (1.41525)
    expect(buildNfseIbsCbs({ localityCode: "3550308", localityName: "São Paulo", computation })).toBe(
      "<IBSCBS><cLocalidadeIncid>3550308</cLocalidadeIncid><xLocalidadeIncid>São Paulo</xLocalidadeIncid>" +
        "<valores><vBC>1415.25</vBC><uf><pIBSUF>0.10</pIBSUF><pAliqEfetUF>0.10</pAliqEfetUF></uf>" +
        "<mun><pIBSMun>0.00</pIBSMun><pAliqEfetMun>0.00</pAliqEfetMun></mun>" +
        "<fed><pCBS>0.90</pCBS><pAliqEfetCBS>0.90</pAliqEfetCBS></fed></valores>" +
        "<totCIBS><vTotNF>1500.00</vTotNF><gIBS><vIBSTot>1.42</vIBSTot><gIBSUFTot><vIBSUF>1.42</vIBSUF></gIBSUFTot>" +
        "<gIBSMunTot><vIBSMun>0.00</vIBSMun></gIBSMunTot></gIBS><gCBS><vCBS>12.74</vCBS></gCBS></totCIBS></IBSCBS>"
    )
    expect(formatPercent(6000)).toBe("60.00")
  })

  it("the document's figures are read back from the note: vBC, effective rates, vCBS, vIBSUF, vIBSMun, vIBSTot, vTotNF", () => {
    const [, group] = groups[0]!
    const computation = Result.getOrThrow(computeIbsCbsForGroup(group, amounts))
    const xml = nfseWith(group, buildNfseIbsCbs({ localityCode: "3550308", localityName: "São Paulo", computation }))
    expect(noteIbsCbsOf(xml)).toEqual({
      base: 141_525,
      cbs_rate: "0.90",
      state_ibs_rate: "0.10",
      municipal_ibs_rate: "0.00",
      cbs: 1_274,
      state_ibs: 142,
      municipal_ibs: 0,
      ibs_total: 142,
      note_total: 150_000
    })
    expect(noteIbsCbsOf(xml)).toEqual(ibsCbsFiguresOf(computation))
    // A note without the group, or no note at all: nothing, never made-up figures.
    expect(noteIbsCbsOf(nfseWith(group, ""))).toBeUndefined()
    expect(noteIbsCbsOf("<IBSCBS>")).toBeUndefined()
  })

  it("a stand-in's 2027 note: the IBS at 0.05 % + 0.05 %, the total with the taxes on top, valid", () => {
    const [, group] = groups[0]!
    const later = { ...amounts, competence: "2027-02-01" }
    const computation = Result.getOrThrow(computeIbsCbsForGroup(group, later, standInRatesFor))
    const xml = nfseWith(group, buildNfseIbsCbs({ localityCode: "3550308", localityName: "São Paulo", computation }))
    expect(validateXml("NFSe", xml)).toEqual(Result.void)
    // 1500.00 − 30.00 ISS (PIS/COFINS no longer deducted) = 1470.00: IBS 0.74 + 0.74 (0.735 each, half-even).
    expect(noteIbsCbsOf(xml)).toMatchObject({
      base: 147_000,
      state_ibs_rate: "0.05",
      municipal_ibs_rate: "0.05",
      state_ibs: 74,
      municipal_ibs: 74,
      ibs_total: 148,
      note_total: 150_000 + computation.cbs.amount + 148
    })
  })

  it.skipIf(!hasXmllint)(withXmllint("xmllint accepts the note with the group"), () => {
    const computation = Result.getOrThrow(computeIbsCbs({ ...amounts, taxClass: NFSE_TAX_CLASSES.get("200029")! }))
    const fragment = buildNfseIbsCbs({ localityCode: "3550308", localityName: "São Paulo", computation })
    expect(fragment).toContain("<pRedAliqCBS>60.00</pRedAliqCBS><pAliqEfetCBS>0.36</pAliqEfetCBS>")
    const run = xmllintValidate("NFSe_v1.01.xsd", nfseWith(groups[1]![1], fragment))
    expect(run.ok, run.output).toBe(true)
  })
})
