/**
 * The NFC-e's consumer QR code, version 3 of the national manual: online it is the key, the version
 * and the environment at the state's address; offline it adds the day, the total and the buyer,
 * signed with the note's certificate (verified here with the certificate's public key). Either way
 * the signed note with its supplement passes the official schema, whose patterns check the URL.
 */
import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { createVerify, X509Certificate } from "node:crypto"
import { consumerSupplement, withConsumerSupplement } from "../../src/authority/sefaz/ConsumerQrCode.js"
import { NFCE_ADDRESSES } from "../../src/authority/sefaz/NfceAddresses.js"
import { buildNfe } from "../../src/authority/sefaz/NfeXml.js"
import { loadNfeSchemas, validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import { signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { makePkcs12 } from "../support/certificates.js"
import { BRAZILIAN_STATES, counterSale, nfeInput } from "../support/NfeXml.js"

beforeAll(() => loadNfeSchemas())

const certificate = makePkcs12({
  cn: "DISTRIBUIDORA PAULISTA:11222333000181",
  cnpjOid: "11222333000181",
  password: "x"
})
const sign = (xml: string) =>
  signEnveloped(xml, {
    element: "infNFe",
    privateKeyPem: certificate.privateKeyPem,
    certificatePem: certificate.certificatePem
  })

describe("the consumer QR code (version 3)", () => {
  const online = buildNfe(nfeInput({ request: counterSale }))

  it("online: the state's address with the key, version 3 and the environment; schema-valid once signed", () => {
    const supplement = consumerSupplement({ accessKey: online.accessKey, environment: "test", state: "SP" })
    expect(supplement).toEqual({
      qrCode: `https://www.homologacao.nfce.fazenda.sp.gov.br/qrcode?p=${online.accessKey}|3|2`,
      urlChave: "https://www.homologacao.nfce.fazenda.sp.gov.br/NFCeConsultaPublica"
    })
    const note = sign(withConsumerSupplement(online.xml, supplement))
    expect(note.indexOf("<infNFeSupl>")).toBeGreaterThan(note.indexOf("</infNFe>"))
    expect(note.indexOf("<infNFeSupl>")).toBeLessThan(note.indexOf("<Signature"))
    expect(validateNfe("NFe", note)).toEqual(Result.void)
    expect(Result.isSuccess(verifyEnveloped(note, "infNFe"))).toBe(true)
  })

  it("offline: the day, total and buyer, signed RSA-SHA1 by the note's certificate; schema-valid", () => {
    const contingency = { since: new Date("2026-11-10T14:00:00Z"), reason: "Sem conexão com a SEFAZ desde as 11h" }
    const issuedAt = new Date("2026-11-10T14:30:15Z")
    const built = buildNfe(
      nfeInput({ request: { ...counterSale, recipient: { tax_id: "52998224725" } }, contingency, issuedAt })
    )
    const supplement = consumerSupplement({
      accessKey: built.accessKey,
      environment: "test",
      state: "SP",
      offline: {
        issuedAt,
        total: built.figures.totals.total,
        recipient: { taxId: "529.982.247-25" },
        privateKeyPem: certificate.privateKeyPem
      }
    })
    const parameters = supplement.qrCode.slice(supplement.qrCode.indexOf("?p=") + 3).split("|")
    expect(parameters.slice(0, 7)).toEqual([built.accessKey, "3", "2", "10", "243.69", "2", "52998224725"])
    const signed = parameters.slice(0, 7).join("|")
    const verified = createVerify("RSA-SHA1").update(signed).verify(
      new X509Certificate(certificate.certificatePem).publicKey,
      parameters[7]!,
      "base64"
    )
    expect(verified).toBe(true)
    expect(validateNfe("NFe", sign(withConsumerSupplement(built.xml, supplement)))).toEqual(Result.void)
  })

  it("offline without a buyer leaves both of the buyer's places empty", () => {
    const built = buildNfe(
      nfeInput({ request: counterSale, contingency: { since: new Date(), reason: "Sem conexão com a SEFAZ" } })
    )
    const supplement = consumerSupplement({
      accessKey: built.accessKey,
      environment: "live",
      state: "RS",
      offline: {
        issuedAt: new Date("2026-11-03T12:00:00Z"),
        total: 24369,
        recipient: null,
        privateKeyPem: certificate.privateKeyPem
      }
    })
    expect(supplement.qrCode).toMatch(
      new RegExp(
        `^https://www\\.sefaz\\.rs\\.gov\\.br/NFCE/NFCE-COM\\.aspx\\?p=${built.accessKey}\\|3\\|1\\|03\\|243\\.69\\|\\|\\|[A-Za-z0-9+/]+=*$`
      )
    )
  })

  it("knows the addresses of every state, within the schema's lengths", () => {
    expect(Object.keys(NFCE_ADDRESSES).sort()).toEqual(BRAZILIAN_STATES)
    for (const [state, addresses] of Object.entries(NFCE_ADDRESSES)) {
      for (const environment of ["live", "test"] as const) {
        expect(addresses.qrCode[environment], state).toMatch(/^https?:\/\//)
        expect(addresses.query[environment].length, state).toBeGreaterThanOrEqual(21)
        expect(addresses.query[environment].length, state).toBeLessThanOrEqual(85)
      }
    }
  })
})
