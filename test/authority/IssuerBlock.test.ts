/**
 * The provider's block of the DPS (`prest`) and of the NFS-e (`emit`) as the registration fills
 * them (issue 27): IM, phone and e-mail in the schema's order, regTrib from the declared regime,
 * nothing invented when nothing is declared, and both documents valid against the official XSDs.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { dpsInputOf } from "../../src/authority/sefin/DocumentDps.js"
import { buildDps, type DpsInput } from "../../src/authority/sefin/Dps.js"
import { readDps } from "../../src/authority/sefin/DpsRead.js"
import { buildNfse, readNfse } from "../../src/authority/sefin/Nfse.js"
import type { SubmissionDocument } from "../../src/authority/TaxAuthority.js"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { plainAmounts } from "../support/amounts.js"
import { makePkcs12 } from "../support/certificates.js"
import { realisticDpsInput, sampleAccessKey } from "../support/NfseXml.js"
import { completeRegistration } from "../support/registration.js"

const signer = makePkcs12({ cn: "SEFIN LOCAL:00394460005887", cnpjOid: "00394460005887", password: "x" })
const sign = (xml: string, element: "infDPS" | "infNFSe") =>
  signEnveloped(xml, { element, privateKeyPem: signer.privateKeyPem, certificatePem: signer.certificatePem })

const withIssuer = (issuer: Partial<DpsInput["issuer"]>): DpsInput => ({
  ...realisticDpsInput,
  issuer: { ...realisticDpsInput.issuer, ...issuer }
})

const prestOf = (xml: string) => /<prest>.*<\/prest>/.exec(xml)?.[0] ?? ""

const submission: SubmissionDocument = {
  environment: "test",
  issuer: {
    taxId: "11222333000181",
    name: "Empresa",
    simplesNacional: "me_epp",
    municipalityCode: "3550308",
    registration: {
      ...completeRegistration,
      municipal_registration: "51034401",
      simples_nacional_apportionment: "outside_simples",
      special_regime: "cooperative"
    }
  },
  series: "1",
  number: 3,
  issueDate: "2026-11-10",
  createdAt: new Date("2026-11-10T14:00:00Z"),
  taker: { tax_id: "52998224725", name: "Maria" },
  service: { code: "010101", nbs_code: "115013000", description: "Consultoria", municipality_code: "3304557" },
  intermediary: null,
  tax: {},
  amounts: plainAmounts(10_000, "2.00"),
  notes: null
}

describe("the issuer block from the provider's registration", () => {
  beforeAll(() => loadSchemas())

  it("prest carries IM, fone and email in the schema's order and the DPS validates", () => {
    const xml =
      buildDps(withIssuer({ municipalRegistration: "51034401", phone: "1133334444", email: "a@b.com.br" })).xml
    expect(prestOf(xml)).toBe(
      "<prest><CNPJ>11222333000181</CNPJ><IM>51034401</IM><fone>1133334444</fone><email>a@b.com.br</email>" +
        "<regTrib><opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib></regTrib></prest>"
    )
    expect(validateXml("DPS", xml)).toEqual(Result.void)
  })

  it("without a declared IM, phone or e-mail none is written", () => {
    const xml = buildDps(realisticDpsInput).xml
    expect(prestOf(xml)).toBe(
      "<prest><CNPJ>11222333000181</CNPJ><regTrib><opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib></regTrib></prest>"
    )
  })

  it("a document's DPS: cLocEmi is the issuer's municipality, not the service's; regTrib from the registration", () => {
    const xml = buildDps(dpsInputOf(submission, "test")).xml
    const dps = Result.getOrThrow(readDps(xml))
    expect(dps.municipalityCode).toBe("3550308")
    expect(dps.service.municipalityCode).toBe("3304557")
    expect(dps.id.startsWith("DPS3550308")).toBe(true)
    expect(dps.issuer).toEqual({
      taxId: "11222333000181",
      simplesNacional: "3",
      municipalRegistration: "51034401",
      phone: completeRegistration.phone,
      email: completeRegistration.email
    })
    expect(xml).toContain(
      "<regTrib><opSimpNac>3</opSimpNac><regApTribSN>3</regApTribSN><regEspTrib>1</regEspTrib></regTrib>"
    )
    expect(validateXml("DPS", xml)).toEqual(Result.void)
  })

  it("emit: IM and contact from the DPS, name, trade name and address from the register; valid once signed", () => {
    const signedDpsXml = sign(buildDps(dpsInputOf(submission, "test")).xml, "infDPS")
    const address = completeRegistration.address!
    const nfse = buildNfse({
      signedDpsXml,
      dps: Result.getOrThrow(readDps(signedDpsXml)),
      accessKey: sampleAccessKey,
      nfseNumber: 9,
      processedAt: new Date("2026-11-10T14:00:05Z"),
      tpAmb: 2,
      issuerName: completeRegistration.legal_name!,
      issuerTradeName: completeRegistration.trade_name!,
      issuerAddress: {
        street: address.street,
        number: address.number,
        district: address.district,
        municipalityCode: address.municipality_code,
        state: address.state,
        postalCode: address.postal_code
      }
    })
    const emit = /<emit>.*<\/emit>/.exec(nfse)?.[0]
    expect(emit).toBe(
      "<emit><CNPJ>11222333000181</CNPJ><IM>51034401</IM><xNome>Prestadora de Servicos de Teste Ltda</xNome>" +
        "<xFant>Prestadora Teste</xFant><enderNac><xLgr>Avenida Paulista</xLgr><nro>1000</nro>" +
        "<xBairro>Bela Vista</xBairro><cMun>3550308</cMun><UF>SP</UF><CEP>01310100</CEP></enderNac>" +
        "<fone>1133334444</fone><email>fiscal@prestadora.example.com</email></emit>"
    )
    expect(validateXml("NFSe", sign(nfse, "infNFSe"))).toEqual(Result.void)
    expect(Result.getOrThrow(readNfse(nfse)).issuer.tradeName).toBe("Prestadora Teste")
  })
})
