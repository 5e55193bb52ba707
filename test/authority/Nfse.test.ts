/**
 * The NFS-e v1.01: readNfse reads a real production note (Manaus, January 2026) and ours alike;
 * buildNfse (the local authority's side) wraps the signed DPS into a note that, once signed as the
 * national system signs, the official schema accepts (our validator and xmllint), with both
 * signatures still verifying.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import * as fs from "node:fs"
import { buildDps, type DpsInput } from "../../src/authority/sefin/Dps.js"
import { readDps } from "../../src/authority/sefin/DpsRead.js"
import { buildNfse, type BuildNfseInput, readNfse, stateOfMunicipality } from "../../src/authority/sefin/Nfse.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { makePkcs12 } from "../support/certificates.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { plainAmounts } from "../support/amounts.js"
import { hasXmllint, realisticDpsInput, sampleAccessKey, withXmllint, xmllintValidate } from "../support/NfseXml.js"

const realSample = fs.readFileSync(
  new URL(
    "../../../shared/reference/nfse-nacional/samples/real-nfse-manaus-prod-2026-01.redacted.xml",
    import.meta.url
  ),
  "utf8"
)

const issuer = makePkcs12({ cn: "EMPRESA TESTE LTDA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const authority = makePkcs12({
  cn: "SEFIN LOCAL:00394460005887",
  cnpjOid: "00394460005887",
  password: "x",
  freshKey: true
})

const signedDps = (input: DpsInput = realisticDpsInput) =>
  signEnveloped(buildDps(input).xml, {
    element: "infDPS",
    privateKeyPem: issuer.privateKeyPem,
    certificatePem: issuer.certificatePem
  })

const unsignedNfse = (dpsInput: DpsInput = realisticDpsInput, overrides: Partial<BuildNfseInput> = {}) => {
  const signedDpsXml = signedDps(dpsInput)
  const dps = readDps(signedDpsXml)
  if (Result.isFailure(dps)) throw new Error(dps.failure.message)
  return buildNfse({
    signedDpsXml,
    dps: dps.success,
    accessKey: sampleAccessKey,
    nfseNumber: 1234,
    dfseNumber: 7_654_321,
    processedAt: new Date("2026-11-10T14:30:17.250Z"),
    tpAmb: 2,
    issuerName: "Empresa Teste Ltda",
    issuerAddress: {
      street: "Rua Funchal",
      number: "418",
      complement: "Andar 35",
      district: "Vila Olímpia",
      municipalityCode: "3550308",
      state: "SP",
      postalCode: "04551060"
    },
    issuerEmail: "fiscal@empresa-teste.example",
    municipalityNames: { "3550308": "São Paulo" },
    nationalServiceName: "Suporte técnico em informática, inclusive instalação, configuração e manutenção de programas",
    issRate: "2.00",
    ...overrides
  })
}

const signedNfse = (xml: string) =>
  signEnveloped(xml, {
    element: "infNFSe",
    privateKeyPem: authority.privateKeyPem,
    certificatePem: authority.certificatePem,
    withComments: true
  })

const read = (xml: string) => {
  const parsed = readNfse(xml)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  return parsed.success
}

describe("NFS-e v1.01", () => {
  it("reads the real production note from Manaus", () => {
    expect(read(realSample)).toEqual({
      accessKey: "13026032242713924000185000000000003226012551995400",
      nfseNumber: "32",
      dfseNumber: "1463612",
      processedAt: "2026-01-15T19:43:39-03:00",
      tpAmb: 1,
      status: "100",
      issuer: {
        taxId: "42713924000185",
        name: "PRESTADOR (REDACTED)",
        municipalRegistration: "51034401",
        municipalityName: "Manaus",
        address: {
          street: "LOGRADOURO (REDACTED)",
          number: "0",
          district: "CACHOEIRINHA",
          municipalityCode: "1302603",
          state: "AM",
          postalCode: "69065030"
        },
        email: "redacted@example.invalid",
        phone: "00000000000"
      },
      taker: { taxId: "00000000000", name: "TOMADOR (REDACTED)" },
      service: {
        code: "040303",
        codeDescription:
          "Clínicas, sanatórios, manicômios, casas de saúde, prontos-socorros, ambulatórios e congêneres.",
        description: "CONSULTA(S) MÉDICA(S) REALIZADA(S) (REDACTED)",
        nbsCode: "123012200",
        municipalityCode: "1302603",
        municipalityName: "Manaus"
      },
      amounts: { services: "500.00", net: "500.00" },
      dps: {
        id: "DPS130260324271392400018500900000000000000063",
        series: "900",
        number: 63,
        emittedAt: "2026-01-15T19:43:39-03:00",
        competence: "2026-01-15",
        // The DPS's own values, as the note embeds them: not withheld, nothing federal.
        amounts: {
          services: "500.00",
          issTaxation: "1",
          issRetention: "1",
          deductionDocuments: [],
          totalTaxesKind: "pTotTribSN"
        }
      },
      // A 2026 note without the reform group.
      ibsCbs: null
    })
  })

  it("finds the real note valid against NFSe_v1.01.xsd", () => {
    expect(validateXml("NFSe", realSample)).toEqual(Result.void)
  })

  it("builds a note around the signed DPS that the schema accepts once signed, both signatures holding", () => {
    const xml = signedNfse(unsignedNfse())
    expect(validateXml("NFSe", xml)).toEqual(Result.void)
    expect(xml).toContain(
      `<NFSe versao="1.01" xmlns="http://www.sped.fazenda.gov.br/nfse"><infNFSe Id="NFS${sampleAccessKey}">` +
        "<xLocEmi>São Paulo</xLocEmi><xLocPrestacao>São Paulo</xLocPrestacao><nNFSe>1234</nNFSe>" +
        "<cLocIncid>3550308</cLocIncid><xLocIncid>São Paulo</xLocIncid>"
    )
    expect(xml).toContain(
      "<ambGer>2</ambGer><tpEmis>1</tpEmis><procEmi>1</procEmi><cStat>100</cStat>" +
        "<dhProc>2026-11-10T11:30:17-03:00</dhProc><nDFSe>7654321</nDFSe>"
    )
    expect(xml).toContain(
      "<valores><vBC>1500.00</vBC><pAliqAplic>2.00</pAliqAplic><vISSQN>30.00</vISSQN><vLiq>1500.00</vLiq></valores>"
    )
    // The DPS is embedded byte for byte, so the issuer's signature still verifies inside the note.
    expect(xml).toContain(signedDps().replace(/^<\?xml[^>]*>/, ""))
    expect(Result.isSuccess(verifyEnveloped(xml, "infNFSe"))).toBe(true)
    const embeddedDps = /<DPS .*<\/DPS>/.exec(xml)![0]
    expect(Result.isSuccess(verifyEnveloped(embeddedDps, "infDPS"))).toBe(true)
  })

  it.skipIf(!hasXmllint)(withXmllint("is accepted by xmllint once signed, as is the real note"), () => {
    for (const xml of [signedNfse(unsignedNfse()), realSample]) {
      const run = xmllintValidate("NFSe_v1.01.xsd", xml)
      expect(run.ok, run.output).toBe(true)
    }
  })

  it("is refused by the schema unsigned: NFSe_v1.01.xsd requires the Signature", () => {
    const result = validateXml("NFSe", unsignedNfse())
    expect(Result.isFailure(result) ? result.failure.messages.join("\n") : "").toContain("Signature")
  })

  it("reads back what it built", () => {
    expect(read(signedNfse(unsignedNfse()))).toEqual({
      accessKey: sampleAccessKey,
      nfseNumber: "1234",
      dfseNumber: "7654321",
      processedAt: "2026-11-10T11:30:17-03:00",
      tpAmb: 2,
      status: "100",
      issuer: {
        taxId: "11222333000181",
        name: "Empresa Teste Ltda",
        municipalityName: "São Paulo",
        address: {
          street: "Rua Funchal",
          number: "418",
          complement: "Andar 35",
          district: "Vila Olímpia",
          municipalityCode: "3550308",
          state: "SP",
          postalCode: "04551060"
        },
        email: "fiscal@empresa-teste.example"
      },
      taker: {
        taxId: "45997418000153",
        name: "Comércio de Peças Ação & Cia Ltda",
        email: "financeiro@example.com.br",
        address: {
          street: "Avenida Rio Branco",
          number: "156",
          complement: "Sala 1203",
          district: "Centro",
          municipalityCode: "3304557",
          postalCode: "20040901"
        }
      },
      service: {
        code: "010701",
        codeDescription: "Suporte técnico em informática, inclusive instalação, configuração e manutenção de programas",
        description: realisticDpsInput.service.description,
        nbsCode: "115022000",
        municipalityCode: "3550308",
        municipalityName: "São Paulo"
      },
      amounts: { services: "1500.00", base: "1500.00", issRate: "2.00", issAmount: "30.00", net: "1500.00" },
      dps: {
        id: buildDps(realisticDpsInput).id,
        series: "1",
        number: 42,
        emittedAt: "2026-11-10T11:30:15-03:00",
        competence: "2026-11-10",
        amounts: expect.objectContaining({ services: "1500.00", issRetention: "1" })
      },
      notes: "Pedido de compra 2026/0457",
      ibsCbs: null
    })
  })

  it("computes base and ISS after deductions, and carries only the net value for the Simples Nacional", () => {
    const deducted = signedNfse(unsignedNfse({
      ...realisticDpsInput,
      amounts: plainAmounts(100_000_00, "3.5", 1_234_56)
    }, { issRate: "3.5" }))
    expect(validateXml("NFSe", deducted)).toEqual(Result.void)
    expect(deducted).toContain(
      "<valores><vCalcDR>1234.56</vCalcDR><vBC>98765.44</vBC><pAliqAplic>3.50</pAliqAplic><vISSQN>3456.79</vISSQN><vLiq>100000.00</vLiq></valores>"
    )
    expect(read(deducted).amounts).toEqual({
      services: "100000.00",
      deductions: "1234.56",
      base: "98765.44",
      issRate: "3.50",
      issAmount: "3456.79",
      net: "100000.00"
    })

    const simples = signedNfse(
      unsignedNfse({ ...realisticDpsInput, issuer: { ...realisticDpsInput.issuer, simplesNacional: "me_epp" } })
    )
    expect(validateXml("NFSe", simples)).toEqual(Result.void)
    expect(simples).toContain("<valores><vLiq>1500.00</vLiq></valores>")
    // Not withheld, an ME/EPP informs no rate: the note has none either.
    expect(read(simples).amounts).toEqual({ services: "1500.00", net: "1500.00" })
  })

  it("says what it does not know instead of inventing the issuer's name and address", () => {
    const xml = signedNfse(unsignedNfse(realisticDpsInput, {
      issuerName: undefined,
      issuerAddress: undefined,
      issuerEmail: undefined,
      municipalityNames: undefined,
      nationalServiceName: undefined
    }))
    expect(validateXml("NFSe", xml)).toEqual(Result.void)
    expect(xml).toContain(
      "<emit><CNPJ>11222333000181</CNPJ><xNome>Não informado</xNome><enderNac><xLgr>Não informado</xLgr><nro>S/N</nro>" +
        "<xBairro>Não informado</xBairro><cMun>3550308</cMun><UF>SP</UF><CEP>00000000</CEP></enderNac></emit>"
    )
    // The IBGE table names the municipalities when the authority is given no names of its own.
    expect(xml).toContain("<xLocEmi>São Paulo</xLocEmi>")
    expect(xml).toContain("<xLocIncid>São Paulo</xLocIncid>")
    expect(xml).toContain("<xTribNac>Código de tributação nacional 010701</xTribNac>")
    expect(stateOfMunicipality("1302603")).toBe("AM")
    expect(stateOfMunicipality("5300108")).toBe("DF")
  })

  it("refuses to build a note of the other environment than its DPS", () => {
    expect(() => unsignedNfse(realisticDpsInput, { tpAmb: 1 })).toThrow(/environment 1 for a DPS of environment 2/)
  })

  it("refuses to read what is not an NFS-e", () => {
    for (
      const xml of [
        "<NFSe",
        buildDps(realisticDpsInput).xml,
        realSample.replace(/<DPS .*<\/DPS>/, ""),
        realSample.replace(/Id="NFS\d+"/, "Id=\"NFS123\"")
      ]
    ) {
      const result = readNfse(xml)
      expect(Result.isFailure(result) && result.failure._tag).toBe("NfseUnreadable")
    }
  })
})
