/**
 * The protocol-faithful local authority over real mutual TLS, with plain node:https clients: it
 * refuses a client without a certificate, authorizes a signed DPS with the real answer shapes,
 * signs the NFS-e with its own certificate (chained to its CA), serves /dps, /nfse, events and the
 * DANFSe, and refuses what the real system refuses (tampered, unsigned, foreign-signed, XSD-invalid,
 * duplicate, wrong environment), plus the magic values of SPEC §7 and the disruption hooks.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpsRequest } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import { noteIbsCbsOf } from "../../src/authority/NoteIbsCbs.js"
import { statusRequest } from "../../src/authority/sefaz/NfeProtocol.js"
import { soapRequest } from "../../src/authority/sefaz/SefazSoap.js"
import { buildCancellationRequest } from "../../src/authority/sefin/CancellationEvent.js"
import { buildDps, type DpsInput } from "../../src/authority/sefin/Dps.js"
import { validateEventRequest } from "../../src/authority/sefin/EventRequest.js"
import { buildDpsIbsCbs } from "../../src/authority/sefin/IbsCbs.js"
import { type SignedElement, signEnveloped, verifyEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../../src/authority/xml/Xsd.js"
import { type LocalAuthority, startLocalAuthority } from "../../tools/local-authority/LocalAuthority.js"
import { makePkcs12, testCa, type TestPkcs12, testRoot } from "../support/certificates.js"

// libxml2 and the official schemas, loaded once for the file (as the adapter does at start-up).
beforeAll(() => loadSchemas())
import { realisticDpsInput } from "../support/NfseXml.js"

const ISSUER_CNPJ = realisticDpsInput.issuer.taxId
const issuer = makePkcs12({ cn: `EMPRESA TESTE LTDA:${ISSUER_CNPJ}`, cnpjOid: ISSUER_CNPJ, password: "x" })
const other = makePkcs12({
  cn: "OUTRA EMPRESA LTDA:44555666000199",
  cnpjOid: "44555666000199",
  password: "x",
  freshKey: true
})

const hasXmlsec1 = spawnSync("xmlsec1", ["--version"]).status === 0

interface Reply {
  readonly status: number
  readonly contentType: string
  readonly raw: Buffer
  readonly text: string
  /** Parsed JSON body; untyped on purpose, the tests assert its exact shape. */
  readonly json: any
}

/** One HTTPS call on a fresh connection, with the identity's certificate as the TLS client certificate. */
const call = (
  authority: LocalAuthority,
  options: {
    readonly method?: string
    readonly path: string
    readonly body?: string
    readonly identity?: TestPkcs12 | null
    readonly timeoutMs?: number
  }
): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const origin = new URL(authority.url).origin
    const identity = options.identity === undefined ? issuer : options.identity
    const req = httpsRequest(`${origin}${options.path}`, {
      method: options.method ?? (options.body === undefined ? "GET" : "POST"),
      ca: authority.caPem,
      ...(identity === null ? {} : { cert: identity.certificatePem, key: identity.privateKeyPem }),
      agent: false,
      headers: options.body === undefined ? {} : { "content-type": "application/json" }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const raw = Buffer.concat(chunks)
        const text = raw.toString("utf8")
        const contentType = String(res.headers["content-type"] ?? "")
        resolve({
          status: res.statusCode ?? 0,
          contentType,
          raw,
          text,
          json: contentType.startsWith("application/json") && text !== "" ? JSON.parse(text) : undefined
        })
      })
    })
    if (options.timeoutMs !== undefined) {
      req.setTimeout(options.timeoutMs, () => req.destroy(new Error("client timeout")))
    }
    req.on("error", reject)
    req.end(options.body)
  })

/** The status service of a local SEFAZ, asked over mutual TLS with the test issuer's certificate. */
const sefazStatus = (url: string, caPem: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const envelope = soapRequest("NfeStatusServico", statusRequest("test", "35"))
    const req = httpsRequest(url, {
      method: "POST",
      ca: caPem,
      cert: issuer.certificatePem,
      key: issuer.privateKeyPem,
      agent: false,
      headers: { "content-type": envelope.contentType }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    })
    req.on("error", reject)
    req.end(envelope.body)
  })

const gzB64 = (xml: string) => gzipSync(Buffer.from(xml, "utf8")).toString("base64")
const gunzipB64 = (b64: string) => gunzipSync(Buffer.from(b64, "base64")).toString("utf8")

const sign = (xml: string, element: SignedElement, who: TestPkcs12 = issuer) =>
  signEnveloped(xml, { element, privateKeyPem: who.privateKeyPem, certificatePem: who.certificatePem })

// Every test takes DPS numbers of its own, so the one authority per file never sees a duplicate by accident.
let nextNumber = 1000
const dpsInput = (overrides: Partial<DpsInput> = {}): DpsInput => ({
  ...realisticDpsInput,
  emittedAt: new Date(Date.now() - 60_000),
  number: nextNumber++,
  ...overrides
})

const signedDps = (overrides: Partial<DpsInput> = {}, who: TestPkcs12 = issuer) => {
  const dps = buildDps(dpsInput(overrides))
  return { id: dps.id, xml: sign(dps.xml, "infDPS", who) }
}

const submit = (authority: LocalAuthority, xml: string, identity: TestPkcs12 | null = issuer) =>
  call(authority, { path: "/SefinNacional/nfse", body: JSON.stringify({ dpsXmlGZipB64: gzB64(xml) }), identity })

const cancel = (
  authority: LocalAuthority,
  accessKey: string,
  who: TestPkcs12 = issuer,
  identity: TestPkcs12 = issuer,
  alter: (signedXml: string, unsignedXml: string) => string = (signedXml) => signedXml
) => {
  const request = buildCancellationRequest({
    tpAmb: 2,
    requestedAt: new Date(Date.now() - 1_000),
    issuerTaxId: ISSUER_CNPJ,
    accessKey,
    reasonCode: 1,
    reason: "Erro na emissão da nota fiscal"
  })
  return call(authority, {
    path: `/SefinNacional/nfse/${accessKey}/eventos`,
    body: JSON.stringify({
      pedidoRegistroEventoXmlGZipB64: gzB64(alter(sign(request.xml, "infPedReg", who), request.xml))
    }),
    identity
  })
}

const PROCESSING_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}-03:00$/

const expectSubmitRefused = (reply: Reply, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(reply.json.tipoAmbiente).toBe(2)
  expect(reply.json.versaoAplicativo).toMatch(/^SefinNacional_/)
  expect(reply.json.dataHoraProcessamento).toMatch(PROCESSING_TIME)
  expect(reply.json.erros).toHaveLength(1)
  expect(reply.json.erros[0].Codigo).toBe(code)
  expect(typeof reply.json.erros[0].Descricao).toBe("string")
}

let authority: LocalAuthority
beforeAll(async () => {
  authority = await startLocalAuthority({ timeoutAfter: "300 millis", unavailableTimes: 2 })
})
afterAll(() => authority.close())

describe("LocalAuthority transport", () => {
  it("listens on loopback with a server certificate its CA issued for 127.0.0.1", () => {
    expect(authority.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/SefinNacional$/)
    expect(authority.danfseUrl).toBe(authority.url.replace("/SefinNacional", "/danfse"))
    const ca = new X509Certificate(authority.caPem)
    expect(ca.ca).toBe(true)
    expect(new X509Certificate(authority.signingCertificatePem).verify(ca.publicKey)).toBe(true)
  })

  it("refuses a request without a client certificate, in the route's own error shape", async () => {
    const before = authority.submissions().length
    const posted = await submit(authority, signedDps().xml, null)
    expect(posted.status).toBe(403)
    expect(posted.json.erros[0].Codigo).toBe("E0003")
    const queried = await call(authority, { path: `/SefinNacional/dps/${signedDps().id}`, identity: null })
    expect(queried.status).toBe(403)
    expect(queried.json.erro.codigo).toBe("E0003")
    expect(authority.submissions()).toHaveLength(before)
    expect(authority.received.at(-1)?.clientCertificatePem).toBeNull()
  })

  it("answers a path outside the API (no /SefinNacional) with the HTML 404 page", async () => {
    const reply = await call(authority, { path: `/nfse/${"1".repeat(50)}` })
    expect(reply.status).toBe(404)
    expect(reply.contentType).toMatch(/^text\/html/)
    expect(reply.text).toContain("404 - File or directory not found.")
    const wrongMethod = await call(authority, { method: "DELETE", path: "/SefinNacional/nfse" })
    expect(wrongMethod.status).toBe(404)
    expect(wrongMethod.contentType).toMatch(/^text\/html/)
  })

  it("records what it received, with the decoded DPS and the client certificate", async () => {
    const dps = signedDps()
    await submit(authority, dps.xml)
    const last = authority.received.at(-1)!
    expect(last.method).toBe("POST")
    expect(last.path).toBe("/SefinNacional/nfse")
    expect(last.operation).toBe("submitDps")
    expect(last.xml).toBe(dps.xml)
    expect(last.clientTaxId).toBe(ISSUER_CNPJ)
    expect(new X509Certificate(last.clientCertificatePem!).fingerprint256).toBe(
      new X509Certificate(issuer.certificatePem).fingerprint256
    )
  })
})

describe("LocalAuthority happy path", () => {
  it("authorizes a signed DPS, serves it by DPS id and access key, cancels it once and renders its DANFSe", async () => {
    const dps = signedDps()
    const created = await submit(authority, dps.xml)
    expect(created.status).toBe(201)
    expect(Object.keys(created.json)).toEqual([
      "tipoAmbiente",
      "versaoAplicativo",
      "dataHoraProcessamento",
      "idDps",
      "chaveAcesso",
      "nfseXmlGZipB64",
      "alertas"
    ])
    const accessKey: string = created.json.chaveAcesso
    expect(accessKey).toMatch(/^[0-9]{50}$/)
    expect(created.json.idDps).toBe(`NFS${accessKey}`)
    expect(created.json.alertas).toBeNull()
    expect(created.json.tipoAmbiente).toBe(2)
    expect(created.json.dataHoraProcessamento).toMatch(PROCESSING_TIME)

    // The NFS-e: schema-valid, signed by the authority's certificate (issued by its CA), embedding the signed DPS.
    const nfseXml = gunzipB64(created.json.nfseXmlGZipB64)
    expect(Result.isSuccess(validateXml("NFSe", nfseXml))).toBe(true)
    const verified = verifyEnveloped(nfseXml, "infNFSe")
    expect(Result.isSuccess(verified)).toBe(true)
    if (Result.isSuccess(verified)) {
      const signer = new X509Certificate(verified.success.certificatePem)
      expect(signer.fingerprint256).toBe(new X509Certificate(authority.signingCertificatePem).fingerprint256)
      expect(signer.verify(new X509Certificate(authority.caPem).publicKey)).toBe(true)
    }
    expect(nfseXml).toContain(`Id="NFS${accessKey}"`)
    const dpsSignatureValue = /<SignatureValue>([^<]+)<\/SignatureValue>/.exec(dps.xml)![1]!
    expect(nfseXml).toContain(dpsSignatureValue)
    expect(nfseXml).toContain(`Id="${dps.id}"`)

    const found = await call(authority, { path: `/SefinNacional/dps/${dps.id}` })
    expect(found.status).toBe(200)
    expect(found.json).toEqual({
      tipoAmbiente: 2,
      versaoAplicativo: expect.stringMatching(/^SefinNacional_/),
      dataHoraProcessamento: expect.stringMatching(PROCESSING_TIME),
      chaveAcesso: accessKey
    })
    const head = await call(authority, { method: "HEAD", path: `/SefinNacional/dps/${dps.id}` })
    expect(head.status).toBe(200)
    expect(head.raw.length).toBe(0)

    const fetched = await call(authority, { path: `/SefinNacional/nfse/${accessKey}` })
    expect(fetched.status).toBe(200)
    expect(fetched.json.chaveAcesso).toBe(accessKey)
    expect(gunzipB64(fetched.json.nfseXmlGZipB64)).toBe(nfseXml)

    const cancelled = await cancel(authority, accessKey)
    expect(cancelled.status).toBe(201)
    expect(Object.keys(cancelled.json)).toEqual([
      "tipoAmbiente",
      "versaoAplicativo",
      "dataHoraProcessamento",
      "eventoXmlGZipB64"
    ])
    const eventXml = gunzipB64(cancelled.json.eventoXmlGZipB64)
    // Production's request form, embedded: valid as the published schema's one-sequence equivalent.
    expect(Result.isSuccess(validateEventRequest(eventXml, "evento"))).toBe(true)
    expect(Result.isSuccess(verifyEnveloped(eventXml, "infEvento"))).toBe(true)
    expect(eventXml).toContain(accessKey)
    const record = authority.submissions().find((s) => s.accessKey === accessKey)!
    expect(record.dpsId).toBe(dps.id)
    expect(record.cancellation?.eventXml).toBe(eventXml)

    const again = await cancel(authority, accessKey)
    expect(again.status).toBe(400)
    expect(again.json.erro).toEqual([{ codigo: "E0840", descricao: expect.stringContaining("já está vinculado") }])

    const pdf = await call(authority, { path: `/danfse/${accessKey}` })
    expect(pdf.status).toBe(200)
    expect(pdf.contentType).toBe("application/pdf")
    expect(pdf.raw.subarray(0, 5).toString("latin1")).toBe("%PDF-")
  })

  it.skipIf(!hasXmlsec1)(
    "the NFS-e signature verifies with xmlsec1 trusting only the authority's CA [needs xmlsec1, the independent XMLDSig verifier]",
    async () => {
      const created = await submit(authority, signedDps().xml)
      expect(created.status).toBe(201)
      const dir = mkdtempSync(join(tmpdir(), "local-authority-xmlsec-"))
      try {
        writeFileSync(join(dir, "nfse.xml"), gunzipB64(created.json.nfseXmlGZipB64))
        writeFileSync(join(dir, "ca.pem"), authority.caPem)
        const run = spawnSync("xmlsec1", [
          "--verify",
          "--trusted-pem",
          join(dir, "ca.pem"),
          "--id-attr:Id",
          "infNFSe",
          "--node-xpath",
          "/*/*[local-name()='Signature']",
          join(dir, "nfse.xml")
        ], { encoding: "utf8" })
        expect(run.status, run.stderr).toBe(0)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  )
})

describe("LocalAuthority refusals", () => {
  it("authorizes an IBS/CBS group of 2027 (rates the Senate has not fixed) and refuses one of 2025 (E0850)", async () => {
    const ibsCbsXml = buildDpsIbsCbs({ operation_indicator: "100301", cst: "000", class_code: "000001" })
    const created = await submit(authority, signedDps({ competence: "2027-01-15", ibsCbsXml }).xml)
    expect(created.status, JSON.stringify(created.json)).toBe(201)
    const nfseXml = gunzipB64(created.json.nfseXmlGZipB64)
    expect(Result.isSuccess(validateXml("NFSe", nfseXml))).toBe(true)
    expect(nfseXml).toContain("<dCompet>2027-01-15</dCompet>")
    // The IBS of 2027 by LC 214 art. 344; the CBS at the latest published rate (this stand-in's choice).
    expect(noteIbsCbsOf(nfseXml)).toMatchObject({ state_ibs_rate: "0.05", municipal_ibs_rate: "0.05" })
    expectSubmitRefused(await submit(authority, signedDps({ competence: "2025-12-01", ibsCbsXml }).xml), 400, "E0850")
  })

  it("refuses a DPS changed after it was signed (E0714)", async () => {
    const dps = signedDps()
    const tampered = dps.xml.replace("<vServ>1500.00</vServ>", "<vServ>15.00</vServ>")
    expect(tampered).not.toBe(dps.xml)
    const reply = await submit(authority, tampered)
    expectSubmitRefused(reply, 400, "E0714")
    expect(reply.json.idDPS).toBe(dps.id)
  })

  it("refuses an unsigned DPS (E0717, Anexo I row 472)", async () => {
    const reply = await submit(authority, buildDps(dpsInput()).xml)
    expectSubmitRefused(reply, 400, "E0717")
  })

  it("refuses an event request changed after it was signed (E1980) or unsigned (E1989), as Anexo II says", async () => {
    const created = await submit(authority, signedDps().xml)
    const accessKey: string = created.json.chaveAcesso
    const tampered = await cancel(
      authority,
      accessKey,
      issuer,
      issuer,
      (signed) => signed.replace("Erro na emissão da nota fiscal", "Erro na emissão da nota")
    )
    expect(tampered.status).toBe(400)
    expect(tampered.json.erro[0].codigo).toBe("E1980")
    const unsigned = await cancel(authority, accessKey, issuer, issuer, (_signed, unsignedXml) => unsignedXml)
    expect(unsigned.status).toBe(400)
    expect(unsigned.json.erro[0].codigo).toBe("E1989")
    expect(authority.submissions().find((s) => s.accessKey === accessKey)?.cancellation).toBeNull()
  })

  it("refuses a DPS signed with another CNPJ's certificate (400 E0718), and one sent over another CNPJ's TLS certificate (403 E0718)", async () => {
    const foreignSigned = await submit(authority, signedDps({}, other).xml)
    expectSubmitRefused(foreignSigned, 400, "E0718")
    const foreignTransport = await submit(authority, signedDps().xml, other)
    expectSubmitRefused(foreignTransport, 403, "E0718")
  })

  it("refuses an XSD-invalid DPS with libxml2's messages (E1235)", async () => {
    // Series 90000 and up are outside the published TSSerieDPS pattern (package of 27/07/2026).
    const dps = signedDps({ series: "90000" })
    const reply = await submit(authority, dps.xml)
    expectSubmitRefused(reply, 400, "E1235")
    expect(reply.json.erros[0].Descricao).toBe("Falha no esquema XML do DF-e.")
    expect(reply.json.erros[0].Complemento).toMatch(/serie/)
  })

  it("refuses a second DPS with the same id (E0014, with idDPS)", async () => {
    const dps = signedDps()
    expect((await submit(authority, dps.xml)).status).toBe(201)
    const reply = await submit(authority, dps.xml)
    expectSubmitRefused(reply, 400, "E0014")
    expect(reply.json.idDPS).toBe(dps.id)
  })

  it("refuses a DPS for the other environment (E0006)", async () => {
    const reply = await submit(authority, signedDps({ tpAmb: 1 }).xml)
    expectSubmitRefused(reply, 400, "E0006")
  })

  it("refuses what does not gunzip (E1226) and a body that is not the JSON the endpoint binds (model-binding 400)", async () => {
    const notGzip = await call(authority, {
      path: "/SefinNacional/nfse",
      body: JSON.stringify({ dpsXmlGZipB64: Buffer.from("<DPS/>").toString("base64") })
    })
    expectSubmitRefused(notGzip, 400, "E1226")
    expect(notGzip.json.idDPS).toBeUndefined()
    const notJson = await call(authority, { path: "/SefinNacional/nfse", body: "dpsXmlGZipB64=abc" })
    expect(notJson.status).toBe(400)
    expect(notJson.json.erros).toBeUndefined()
    expect(notJson.json.title).toBe("One or more validation errors occurred.")
  })

  it("answers queries with one erro object: E2404 (tipoAmbiente 0, as captured), E2401, E2406, and E2403 for another taxpayer's DPS", async () => {
    const unknownDps = signedDps().id
    const notFound = await call(authority, { path: `/SefinNacional/dps/${unknownDps}` })
    expect(notFound.status).toBe(404)
    expect(notFound.json).toEqual({
      tipoAmbiente: 0,
      dataHoraProcessamento: expect.stringMatching(PROCESSING_TIME),
      erro: { codigo: "E2404", descricao: "Não foi gerada uma NFS-e com o identificador de DPS informado" }
    })
    const foreign = await call(authority, { path: `/SefinNacional/dps/${unknownDps}`, identity: other })
    expect(foreign.status).toBe(403)
    expect(foreign.json.erro.codigo).toBe("E2403")
    const noKey = await call(authority, { path: `/SefinNacional/nfse/${"3".repeat(50)}` })
    expect(noKey.status).toBe(404)
    expect(noKey.json.erro).toEqual({ codigo: "E2401", descricao: "Chave de acesso não encontrada." })
    const badKey = await call(authority, { path: "/SefinNacional/nfse/123" })
    expect(badKey.status).toBe(400)
    expect(badKey.json.erro.codigo).toBe("E2406")
  })

  it("keeps another taxpayer from reading or cancelling a note (403 E2403, E1991 for another signer)", async () => {
    const created = await submit(authority, signedDps().xml)
    const accessKey: string = created.json.chaveAcesso
    const read = await call(authority, { path: `/SefinNacional/nfse/${accessKey}`, identity: other })
    expect(read.status).toBe(403)
    expect(read.json.erro.codigo).toBe("E2403")
    const foreignSigner = await cancel(authority, accessKey, other, issuer)
    expect(foreignSigner.status).toBe(400)
    expect(foreignSigner.json.erro[0].codigo).toBe("E1991")
    const foreignClient = await cancel(authority, accessKey, issuer, other)
    expect(foreignClient.status).toBe(401)
    expect(foreignClient.json.erro[0].codigo).toBe("E2403")
    expect(authority.submissions().find((s) => s.accessKey === accessKey)?.cancellation).toBeNull()
  })
})

describe("LocalAuthority substitution and analysis refusals (Anexo I and II codes)", () => {
  const substitute = (accessKey: string, overrides: Partial<DpsInput> = {}, who: TestPkcs12 = issuer) =>
    signedDps(
      { substitution: { accessKey, reasonCode: "99", reason: "Correção do valor do serviço" }, ...overrides },
      who
    )

  it("refuses a substitute for an unknown note (E0044), another issuer's (E0042) or a cancelled one (E0046)", async () => {
    const created = await submit(authority, signedDps().xml)
    const accessKey: string = created.json.chaveAcesso
    const unknown = `${accessKey.slice(0, 40)}${
      accessKey.slice(40) === "9".repeat(10) ? "0".repeat(10) : "9".repeat(10)
    }`
    expectSubmitRefused(await submit(authority, substitute(unknown).xml), 400, "E0044")
    const otherIssuer = { ...realisticDpsInput.issuer, taxId: "44555666000199" }
    expectSubmitRefused(
      await submit(authority, substitute(accessKey, { issuer: otherIssuer }, other).xml, other),
      400,
      "E0042"
    )
    expect((await cancel(authority, accessKey)).status).toBe(201)
    expectSubmitRefused(await submit(authority, substitute(accessKey).xml), 400, "E0046")
  })

  it("refuses an analysis request (e101103) for a note already cancelled with E0848", async () => {
    const created = await submit(authority, signedDps().xml)
    const accessKey: string = created.json.chaveAcesso
    expect((await cancel(authority, accessKey)).status).toBe(201)
    const analysis = buildCancellationRequest({
      tpAmb: 2,
      requestedAt: new Date(Date.now() - 1_000),
      issuerTaxId: ISSUER_CNPJ,
      accessKey,
      reasonCode: 1,
      reason: "Erro na emissão da nota fiscal",
      analysis: true
    })
    const refused = await call(authority, {
      path: `/SefinNacional/nfse/${accessKey}/eventos`,
      body: JSON.stringify({ pedidoRegistroEventoXmlGZipB64: gzB64(sign(analysis.xml, "infPedReg", issuer)) }),
      identity: issuer
    })
    expect(refused.status).toBe(400)
    expect(refused.json.erro[0].codigo).toBe("E0848")
    expect(refused.json.erro[0].descricao).toContain("o evento de Cancelamento de NFS-e já está vinculado")
  })
})

describe("LocalAuthority magic values (SPEC §7, in the DPS notes)", () => {
  it("simulate:reject is refused with E0310", async () => {
    const reply = await submit(authority, signedDps({ notes: "pedido 12 simulate:reject" }).xml)
    expectSubmitRefused(reply, 400, "E0310")
  })

  it("simulate:unavailable answers 503 for the first unavailableTimes submits, then authorizes", async () => {
    const dps = signedDps({ notes: "simulate:unavailable" })
    const first = await submit(authority, dps.xml)
    const second = await submit(authority, dps.xml)
    const third = await submit(authority, dps.xml)
    expect([first.status, second.status, third.status]).toEqual([503, 503, 201])
  })

  it("simulate:timeout authorizes first and holds the answer back for timeoutAfter", async () => {
    const dps = signedDps({ notes: "simulate:timeout" })
    await expect(submit(authority, dps.xml).then(() => "answered")).resolves.toBe("answered")
    const impatient = signedDps({ notes: "simulate:timeout" })
    await expect(call(authority, {
      path: "/SefinNacional/nfse",
      body: JSON.stringify({ dpsXmlGZipB64: gzB64(impatient.xml) }),
      timeoutMs: 100
    })).rejects.toThrow(/client timeout/)
    const found = await call(authority, { path: `/SefinNacional/dps/${impatient.id}` })
    expect(found.status).toBe(200)
    expect(found.json.chaveAcesso).toMatch(/^[0-9]{50}$/)
  })

  it("simulate:cancel-reject has its cancellation refused (E0822)", async () => {
    const created = await submit(authority, signedDps({ notes: "simulate:cancel-reject" }).xml)
    expect(created.status).toBe(201)
    const reply = await cancel(authority, created.json.chaveAcesso)
    expect(reply.status).toBe(400)
    expect(reply.json.erro[0].codigo).toBe("E0822")
  })
})

describe("LocalAuthority disruptions", () => {
  it("disruptNext: 503 and dropped connections without processing, hangs with or without processing", async () => {
    const counted = authority.counts().submitDps
    authority.disruptNext(1, "unavailable", ["submitDps"])
    const unavailable = signedDps()
    const answered = await submit(authority, unavailable.xml)
    expect(answered.status).toBe(503)
    expect(answered.contentType).toMatch(/^text\/html/)

    authority.disruptNext(1, "reset")
    await expect(submit(authority, unavailable.xml)).rejects.toThrow()

    authority.disruptNext(1, "hang")
    await expect(call(authority, {
      path: "/SefinNacional/nfse",
      body: JSON.stringify({ dpsXmlGZipB64: gzB64(unavailable.xml) }),
      timeoutMs: 150
    })).rejects.toThrow(/client timeout/)
    expect((await call(authority, { path: `/SefinNacional/dps/${unavailable.id}` })).status).toBe(404)

    authority.disruptNext(1, "hang-after-processing", ["submitDps"])
    await expect(call(authority, {
      path: "/SefinNacional/nfse",
      body: JSON.stringify({ dpsXmlGZipB64: gzB64(unavailable.xml) }),
      timeoutMs: 150
    })).rejects.toThrow(/client timeout/)
    expect((await call(authority, { path: `/SefinNacional/dps/${unavailable.id}` })).status).toBe(200)
    expect(authority.counts().submitDps).toBe(counted + 4)
  })

  it("one instance stands for one environment: a production authority takes tpAmb 1 and answers tipoAmbiente 1", async () => {
    const production = await startLocalAuthority({ environment: 1 })
    try {
      const created = await submit(production, signedDps({ tpAmb: 1 }).xml)
      expect(created.status).toBe(201)
      expect(created.json.tipoAmbiente).toBe(1)
      const refused = await submit(production, signedDps({ tpAmb: 2 }).xml)
      expect(refused.json.erros[0].Codigo).toBe("E0006")
    } finally {
      await production.close()
    }
  })
})

describe("npm run authority:local (tools/local-authority/main.ts)", () => {
  it("prints its URLs and the service's environment lines, writes its CA, serves, and stops on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "local-authority-main-"))
    const caFile = join(dir, "ca.pem")
    // The test hierarchy, as the service's CREDENTIALS_EXTRA_CA_FILE: client certificates under it are taken.
    const extraCaFile = join(dir, "extra-cas.pem")
    writeFileSync(extraCaFile, `${testRoot().certPem}${testCa().certPem}`)
    const stranger = makePkcs12({
      cn: `EMPRESA TESTE LTDA:${ISSUER_CNPJ}`,
      cnpjOid: ISSUER_CNPJ,
      password: "x",
      selfSigned: true
    })
    const child = spawn(process.execPath, ["--import", "tsx", "tools/local-authority/main.ts"], {
      env: {
        ...process.env,
        LOCAL_AUTHORITY_PORT: "0",
        LOCAL_AUTHORITY_CA_FILE: caFile,
        CREDENTIALS_EXTRA_CA_FILE: extraCaFile
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      let output = ""
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
          if (output.includes("Stop with Ctrl-C.")) resolve()
        })
        child.once("exit", (code) => reject(new Error(`exited early with ${code}`)))
      })
      const url = /^TAX_AUTHORITY_SANDBOX_URL=(.+)$/m.exec(output)![1]!
      expect(output).toMatch(/^TAX_AUTHORITY_SANDBOX_TARGET=sefin$/m)
      expect(output).toMatch(
        new RegExp(`^TAX_AUTHORITY_SANDBOX_DANFSE_URL=${url.replace("/SefinNacional", "/danfse")}$`, "m")
      )
      expect(output).toContain(`TAX_AUTHORITY_SANDBOX_CA_FILE=${caFile}`)
      const caPem = readFileSync(caFile, "utf8")
      const served = await call({ ...authority, url, caPem }, { path: `/SefinNacional/dps/${signedDps().id}` })
      expect(served.status).toBe(404)
      expect(served.json.erro.codigo).toBe("E2404")
      // A certificate under neither ICP-Brasil nor the configured CAs is refused, as the real system does.
      const refused = await call({ ...authority, url, caPem }, {
        path: `/SefinNacional/dps/${signedDps().id}`,
        identity: stranger
      })
      expect(refused.status).toBe(403)

      // The local SEFAZ beside it, with the same CA: its status service answers in operation (107).
      expect(output).toMatch(/^TAX_AUTHORITY_SANDBOX_GOODS_TARGET=sefaz$/m)
      const sefazUrl = /^TAX_AUTHORITY_SANDBOX_SEFAZ_URL=(.+)$/m.exec(output)![1]!
      const status = await sefazStatus(`${sefazUrl}/ws/NFeStatusServico4.asmx`, caPem)
      expect(status).toContain("<cStat>107</cStat>")

      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
