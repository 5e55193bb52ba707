/**
 * The XMLDSig of national NFS-e documents: what we sign verifies with our verifier and with an
 * independent one (xmlsec1), in the shape the national system wants; what real signers send
 * (inclusive C14N + RSA-SHA1) verifies too; tampering, wrapping and key substitution do not.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { DOMParser } from "@xmldom/xmldom"
import { Result } from "effect"
import { spawnSync } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildDps } from "../../src/authority/sefin/Dps.js"
import { type SignedElement, signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { makePkcs12, testRoot } from "../support/certificates.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { realisticDpsInput } from "../support/NfseXml.js"

const hasXmlsec1 = spawnSync("xmlsec1", ["--version"]).status === 0
/** The test's title, saying why it is skipped when xmlsec1 (the independent verifier) is missing. */
const withXmlsec1 = (title: string) =>
  hasXmlsec1
    ? title
    : `${title} [skipped: xmlsec1 (Debian package xmlsec1), the independent XMLDSig verifier, is not installed]`

const issuer = makePkcs12({ cn: "EMPRESA TESTE LTDA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const other = makePkcs12({
  cn: "OUTRA EMPRESA LTDA:44555666000199",
  cnpjOid: "44555666000199",
  password: "x",
  freshKey: true
})

const DPS_ID = "DPS355030821122233300018100001000000000000042"
// The shape of a DPS v1.01 (the builder is tested on its own): text with accents and escapes.
const dpsXml = `<?xml version="1.0" encoding="UTF-8"?>` +
  `<DPS xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infDPS Id="${DPS_ID}">` +
  `<tpAmb>2</tpAmb><dhEmi>2026-01-22T14:40:00-03:00</dhEmi><verAplic>etd-1.0</verAplic><serie>1</serie>` +
  `<nDPS>42</nDPS><dCompet>2026-01-22</dCompet><tpEmit>1</tpEmit><cLocEmi>3550308</cLocEmi>` +
  `<prest><CNPJ>11222333000181</CNPJ></prest><toma><CPF>52998224725</CPF><xNome>José da Silva &amp; Filhos</xNome></toma>` +
  `<serv><cServ><cTribNac>010101</cTribNac><xDescServ>Consultoria em tecnologia — análise</xDescServ></cServ></serv>` +
  `<valores><vServPrest><vServ>1500.00</vServ></vServPrest></valores></infDPS></DPS>`

const PED_REG_ID = "PRE35503082112223330001810000000000000000001234567891101101"
const pedRegXml = `<?xml version="1.0" encoding="UTF-8"?>` +
  `<pedRegEvento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infPedReg Id="${PED_REG_ID}">` +
  `<tpAmb>2</tpAmb><verAplic>etd-1.0</verAplic><dhEvento>2026-01-22T15:00:00-03:00</dhEvento>` +
  `<CNPJAutor>11222333000181</CNPJAutor><chNFSe>35503082112223330001810000000000000000001234567891</chNFSe>` +
  `<e101101><xDesc>Cancelamento de NFS-e</xDesc><cMotivo>1</cMotivo>` +
  `<xMotivo>Erro na emissão</xMotivo></e101101></infPedReg></pedRegEvento>`

const sign = (xml: string, element: SignedElement = "infDPS", who = issuer, withComments = false) =>
  signEnveloped(xml, { element, privateKeyPem: who.privateKeyPem, certificatePem: who.certificatePem, withComments })

const expectInvalid = (xml: string, element: SignedElement, pattern?: RegExp) => {
  const result = verifyEnveloped(xml, element)
  expect(Result.isFailure(result)).toBe(true)
  if (Result.isFailure(result)) {
    expect(result.failure._tag).toBe("SignatureInvalid")
    if (pattern !== undefined) expect(result.failure.message).toMatch(pattern)
  }
}

const scratch = mkdtempSync(join(tmpdir(), "etd-xmldsig-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
let fileCounter = 0
const file = (name: string, content: string): string => {
  const path = join(scratch, `${fileCounter++}-${name}`)
  writeFileSync(path, content)
  return path
}

const NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
const xmlsec1 = (args: ReadonlyArray<string>) => {
  const run = spawnSync("xmlsec1", args, { encoding: "utf8" })
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}
/** xmlsec1's verdict, trusting only the test hierarchy, with `Id` declared an ID attribute of `element`. */
const xmlsecVerify = (xml: string, element: SignedElement) =>
  xmlsec1([
    "--verify",
    "--id-attr:Id",
    `${NFSE_NS}:${element}`,
    "--trusted-pem",
    file("ca.pem", issuer.caCertificatePem),
    "--trusted-pem",
    file("root.pem", testRoot().certPem),
    file("signed.xml", xml)
  ])

const derBase64 = (pem: string) => new X509Certificate(pem).raw.toString("base64")

describe("signEnveloped", () => {
  it("signs infDPS so that our verifier accepts it and names the signer's certificate and CNPJ", () => {
    const signed = sign(dpsXml)
    const result = verifyEnveloped(signed, "infDPS")
    expect(Result.isSuccess(result)).toBe(true)
    if (Result.isSuccess(result)) {
      expect(derBase64(result.success.certificatePem)).toBe(derBase64(issuer.certificatePem))
      expect(result.success.taxId).toBe("11222333000181")
    }
  })

  it.skipIf(!hasXmlsec1)(
    withXmlsec1(
      "is verified by xmlsec1, trusting the test CA, for a DPS and a pedRegEvento (and xmlsec1 refuses a tampered one)"
    ),
    () => {
      const dps = xmlsecVerify(sign(dpsXml), "infDPS")
      expect(dps.output).toMatch(/^OK$/m)
      expect(dps.ok).toBe(true)
      const pedReg = xmlsecVerify(sign(pedRegXml, "infPedReg"), "infPedReg")
      expect(pedReg.output).toMatch(/^OK$/m)
      expect(pedReg.ok).toBe(true)
      // The check means something: the same verifier refuses a changed amount.
      expect(xmlsecVerify(sign(dpsXml).replace("1500.00", "15.00"), "infDPS").ok).toBe(false)
    }
  )

  it.skipIf(!hasXmlsec1)(
    withXmlsec1(
      "signs with exclusive C14N with comments when asked (as the authority signs an NFS-e), verified by xmlsec1 and by us"
    ),
    () => {
      const signed = sign(dpsXml, "infDPS", issuer, true)
      expect(signed).toContain(
        `<CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#WithComments"/>`
      )
      expect(Result.isSuccess(verifyEnveloped(signed, "infDPS"))).toBe(true)
      expect(xmlsecVerify(signed, "infDPS").ok).toBe(true)
    }
  )

  it.skipIf(!hasXmlsec1)(
    withXmlsec1("signs a DPS from buildDps that stays valid against the official XSD and verifies with us and xmlsec1"),
    () => {
      const dps = buildDps(realisticDpsInput)
      const signed = sign(dps.xml)
      expect(Result.isSuccess(validateXml("DPS", signed))).toBe(true)
      expect(Result.isSuccess(verifyEnveloped(signed, "infDPS"))).toBe(true)
      const independent = xmlsecVerify(signed, "infDPS")
      expect(independent.ok, independent.output).toBe(true)
      expect(signed).toContain(`<Reference URI="#${dps.id}">`)
    }
  )

  it("writes one unprefixed Signature as the last child of the root, RSA-SHA256 over exclusive C14N, the certificate in KeyInfo", () => {
    const signed = sign(dpsXml)
    expect(signed.startsWith(`<?xml version="1.0" encoding="UTF-8"?><DPS `)).toBe(true)
    const root = new DOMParser().parseFromString(signed, "text/xml").documentElement!
    const children = Array.from(root.childNodes).filter((n) => n.nodeType === n.ELEMENT_NODE)
    expect(children.map((n) => n.nodeName)).toEqual(["infDPS", "Signature"])
    const signature = children[1]!
    expect(signature.prefix).toBeNull()
    expect(signature.namespaceURI).toBe("http://www.w3.org/2000/09/xmldsig#")
    expect(signed).not.toMatch(/<ds:|xmlns:ds=/)
    expect(signed).toContain(`<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>`)
    expect(signed).toContain(`<CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>`)
    expect(signed).toContain(`<SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>`)
    expect(signed).toContain(
      `<Reference URI="#${DPS_ID}"><Transforms>` +
        `<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>` +
        `<Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></Transforms>` +
        `<DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>`
    )
    expect(signed).toContain(
      `<KeyInfo><X509Data><X509Certificate>${
        derBase64(issuer.certificatePem)
      }</X509Certificate></X509Data></KeyInfo></Signature></DPS>`
    )
    expect(signed).not.toContain("BEGIN CERTIFICATE")
    // The signed part is the input, untouched.
    expect(signed).toContain(dpsXml.slice(dpsXml.indexOf("<infDPS"), dpsXml.indexOf("</DPS>")))
  })

  it("never writes the private key into the document", () => {
    const signed = sign(dpsXml)
    expect(signed).not.toContain("PRIVATE KEY")
    const keyLines = issuer.privateKeyPem.split("\n").filter((line) => line.length >= 16 && !line.startsWith("-----"))
    expect(keyLines.length).toBeGreaterThan(10)
    for (const line of keyLines) expect(signed).not.toContain(line)
  })

  it("refuses a key that is not the certificate's, a missing element, and a document already signed", () => {
    expect(() =>
      signEnveloped(dpsXml, {
        element: "infDPS",
        privateKeyPem: other.privateKeyPem,
        certificatePem: issuer.certificatePem
      })
    )
      .toThrow(/does not belong to the certificate/)
    expect(() => sign(dpsXml, "infPedReg")).toThrow(/root element is not pedRegEvento/)
    expect(() => sign(dpsXml.replace(` Id="${DPS_ID}"`, ""))).toThrow(/infDPS has no Id/)
    expect(() => sign(sign(dpsXml))).toThrow(/already signed/)
  })
})

describe("verifyEnveloped", () => {
  it("refuses any changed text of infDPS, one text node at a time, and a changed Id", () => {
    const signed = sign(dpsXml)
    const start = signed.indexOf("<infDPS")
    const end = signed.indexOf("</infDPS>")
    const texts = [...signed.slice(start, end).matchAll(/>([^<]+)</g)]
    // Every leaf of the sample, from tpAmb to vServ.
    expect(texts.length).toBe(14)
    for (const text of texts) {
      const at = start + text.index + 1
      const changed = signed.slice(0, at) + (signed[at] === "9" ? "8" : "9") + signed.slice(at + 1)
      expectInvalid(changed, "infDPS", /does not match: the signed content was changed/)
    }
    expectInvalid(
      signed.replace(`Id="${DPS_ID}"`, `Id="${DPS_ID.slice(0, -1)}3"`),
      "infDPS",
      /does not point at infDPS/
    )
    expectInvalid(
      signed.replace(`versao="1.01"><infDPS`, `versao="1.01"><infDPS tpAmb="1"`),
      "infDPS",
      /signed content was changed/
    )
  })

  it("refuses signature wrapping: a second infDPS, the signed infDPS hidden elsewhere with a Reference to it, a duplicate Id", () => {
    const signed = sign(dpsXml)
    const signedInf = signed.slice(signed.indexOf("<infDPS"), signed.indexOf("</infDPS>") + "</infDPS>".length)
    const forgedInf = signedInf.replace("1500.00", "1.00")

    // A forged infDPS next to the genuine one.
    expectInvalid(signed.replace(signedInf, forgedInf + signedInf), "infDPS", /exactly one infDPS, found 2/)

    // The genuine infDPS moved into an element the reader ignores, the root's infDPS forged with
    // another Id; the Reference still points at the genuine one.
    const otherId = `${DPS_ID.slice(0, -1)}3`
    const hidden = signed
      .replace(signedInf, forgedInf.replace(DPS_ID, otherId))
      .replace("</Signature>", `<Object>${signedInf}</Object></Signature>`)
    expectInvalid(hidden, "infDPS", /does not point at infDPS/)

    // Same, but the Reference redirected to the forged element (its digest no longer matches), and
    // a copy of the genuine element with the same Id as the forged one.
    expectInvalid(hidden.replace(`URI="#${DPS_ID}"`, `URI="#${otherId}"`), "infDPS")
    const duplicateId = signed.replace("</Signature>", `<Object><x Id="${DPS_ID}"/></Object></Signature>`)
    expectInvalid(duplicateId, "infDPS", /appears on 2 elements/)

    // Two signatures, and a second Reference.
    const signature = signed.slice(signed.indexOf("<Signature"), signed.indexOf("</DPS>"))
    expectInvalid(signed.replace("</DPS>", `${signature}</DPS>`), "infDPS", /exactly one Signature, found 2/)
    const reference = signature.slice(
      signature.indexOf("<Reference"),
      signature.indexOf("</Reference>") + "</Reference>".length
    )
    expectInvalid(
      signed.replace("</Reference>", `</Reference>${reference}`),
      "infDPS",
      /exactly one Reference, found 2/
    )
  })

  it("refuses a substituted certificate (another taxpayer's) and a signature value not made by the certificate's key", () => {
    const signed = sign(dpsXml)
    expectInvalid(
      signed.replace(derBase64(issuer.certificatePem), derBase64(other.certificatePem)),
      "infDPS",
      /signature value does not verify with the certificate in KeyInfo/
    )
    const byOther = sign(dpsXml, "infDPS", other)
    const value = /<SignatureValue>([^<]+)<\/SignatureValue>/.exec(byOther)![1]!
    expectInvalid(
      signed.replace(/<SignatureValue>[^<]+<\/SignatureValue>/, `<SignatureValue>${value}</SignatureValue>`),
      "infDPS",
      /does not verify/
    )
  })

  it("refuses a wrong document type, an unsigned document, malformed XML and a DOCTYPE", () => {
    const signed = sign(dpsXml)
    expectInvalid(signed, "infPedReg", /root element is not pedRegEvento/)
    expectInvalid(dpsXml, "infDPS", /exactly one Signature, found 0/)
    expectInvalid(signed.slice(0, -3), "infDPS", /not well-formed/)
    expectInvalid(
      signed.replace(`<DPS `, `<!DOCTYPE DPS [<!ATTLIST infDPS Id ID #IMPLIED>]><DPS `),
      "infDPS",
      /DOCTYPE/
    )
  })

  it("verifies a pedRegEvento signed over infPedReg, and refuses it tampered", () => {
    const signed = sign(pedRegXml, "infPedReg")
    const result = verifyEnveloped(signed, "infPedReg")
    expect(Result.isSuccess(result) && result.success.taxId).toBe("11222333000181")
    expectInvalid(
      signed.replace("<cMotivo>1</cMotivo>", "<cMotivo>2</cMotivo>"),
      "infPedReg",
      /signed content was changed/
    )
  })

  it.skipIf(!hasXmlsec1)(
    withXmlsec1(
      "verifies an NFS-e signed over infNFSe that embeds a signed DPS (two signatures in one document), also by xmlsec1"
    ),
    () => {
      const signedDps = sign(dpsXml).replace(/^<\?xml[^>]*\?>/, "")
      const nfseXml = `<?xml version="1.0" encoding="UTF-8"?><NFSe xmlns="${NFSE_NS}" versao="1.01">` +
        `<infNFSe Id="NFS35503082112223330001810000000000000000001234567891"><nNFSe>1</nNFSe>${signedDps}</infNFSe></NFSe>`
      const signed = sign(nfseXml, "infNFSe", other, true)
      const result = verifyEnveloped(signed, "infNFSe")
      expect(Result.isSuccess(result) && result.success.taxId).toBe("44555666000199")
      // The embedded DPS is part of what the authority signed.
      expectInvalid(signed.replace("1500.00", "15.00"), "infNFSe", /signed content was changed/)
      const independent = xmlsec1([
        "--verify",
        "--id-attr:Id",
        `${NFSE_NS}:infNFSe`,
        "--node-xpath",
        "/*/*[local-name()='Signature']",
        "--trusted-pem",
        file("ca.pem", other.caCertificatePem),
        "--trusted-pem",
        file("root.pem", testRoot().certPem),
        file("nfse.xml", signed)
      ])
      expect(independent.ok, independent.output).toBe(true)
    }
  )

  it.skipIf(!hasXmlsec1)(
    withXmlsec1(
      "accepts inclusive C14N + RSA-SHA1 as signed by xmlsec1 (older signers in real traffic), and refuses it tampered"
    ),
    () => {
      const template = dpsXml.replace(
        "</DPS>",
        `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>` +
          `<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>` +
          `<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>` +
          `<Reference URI="#${DPS_ID}"><Transforms>` +
          `<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>` +
          `<Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms>` +
          `<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue/></Reference></SignedInfo>` +
          `<SignatureValue/><KeyInfo><X509Data/></KeyInfo></Signature></DPS>`
      )
      const output = join(scratch, `${fileCounter++}-xmlsec-signed.xml`)
      const run = xmlsec1([
        "--sign",
        "--id-attr:Id",
        `${NFSE_NS}:infDPS`,
        "--privkey-pem",
        `${file("key.pem", issuer.privateKeyPem)},${file("cert.pem", issuer.certificatePem)}`,
        "--output",
        output,
        file("template.xml", template)
      ])
      expect(run.ok, run.output).toBe(true)
      const signed = readFileSync(output, "utf8")
      // xmlsec1 wraps base64 at 64 columns; real documents come that way too.
      expect(signed).toMatch(/<X509Certificate>[A-Za-z0-9+/=]{64}\n/)
      const result = verifyEnveloped(signed, "infDPS")
      expect(Result.isSuccess(result), Result.isFailure(result) ? result.failure.message : "").toBe(true)
      if (Result.isSuccess(result)) expect(result.success.taxId).toBe("11222333000181")
      expectInvalid(signed.replace("José", "Josué"), "infDPS", /signed content was changed/)
    }
  )

  it("refuses algorithms outside what real traffic uses (HMAC, an XSLT transform)", () => {
    const signed = sign(dpsXml)
    expectInvalid(
      signed.replace(
        "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        "http://www.w3.org/2000/09/xmldsig#hmac-sha1"
      ),
      "infDPS",
      /signature method not accepted/
    )
    expectInvalid(
      signed.replace(
        `<Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>`,
        `<Transform Algorithm="http://www.w3.org/TR/1999/REC-xslt-19991116"/>`
      ),
      "infDPS",
      /transform not accepted/
    )
  })
})
