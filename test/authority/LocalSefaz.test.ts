/**
 * The local SEFAZ, over real mutual TLS and SOAP 1.2, as a client of a state authority sees it:
 * status, authorization (with its protocol forming a valid nfeProc), duplicity, rejections, the
 * protocol lookup, a client without a certificate, and test mode's unavailable and timeout paths,
 * where a timed-out note is found by its key and never issued twice.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { request as httpsRequest } from "node:https"
import { processedNote } from "../../src/authority/sefaz/NfeProtocol.js"
import {
  authorizationRequest,
  lookupRequest,
  receiptRequest,
  statusRequest
} from "../../src/authority/sefaz/NfeProtocol.js"
import { loadVoidingSchemas, validateVoiding, voidingRequest } from "../../src/authority/sefaz/NfeVoiding.js"
import { buildNfe, type NfeInput } from "../../src/authority/sefaz/NfeXml.js"
import { validateNfe } from "../../src/authority/sefaz/NfeXsd.js"
import type { SefazService } from "../../src/authority/sefaz/SefazAddresses.js"
import { soapContent, soapRequest } from "../../src/authority/sefaz/SefazSoap.js"
import { signEnveloped } from "../../src/authority/xml/XmlSignature.js"
import { parseXml } from "../../src/authority/xml/XmlText.js"
import { type LocalSefaz, startLocalSefaz } from "../../tools/local-authority/LocalSefaz.js"
import { makePkcs12 } from "../support/certificates.js"
import { interstateSale, nfeInput } from "../support/NfeXml.js"

const certificate = makePkcs12({
  cn: "DISTRIBUIDORA PAULISTA:11222333000181",
  cnpjOid: "11222333000181",
  password: "x"
})
let sefaz: LocalSefaz

beforeAll(async () => {
  sefaz = await startLocalSefaz({ unavailableTimes: 2, timeoutAfterMs: 3_000 })
})
afterAll(() => sefaz.close())

interface Reply {
  readonly status: number
  readonly body: string
}

/** One SOAP call over mutual TLS (the client certificate unless `anonymous`), aborted after `timeoutMs`. */
const call = (service: SefazService, message: string, options: { anonymous?: boolean; timeoutMs?: number } = {}) =>
  new Promise<Reply>((resolve, reject) => {
    const soap = soapRequest(service, message)
    const request = httpsRequest(sefaz.addressOf(service), {
      method: "POST",
      ca: sefaz.caPem,
      ...(options.anonymous === true ? {} : { key: certificate.privateKeyPem, cert: certificate.certificatePem }),
      headers: { "content-type": soap.contentType },
      timeout: options.timeoutMs ?? 10_000
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on(
        "end",
        () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
      )
    })
    request.on("timeout", () => request.destroy(new Error("timeout")))
    request.on("error", reject)
    request.end(soap.body)
  })

const contentOf = (reply: Reply) => Result.getOrThrow(soapContent(reply.body))
const textsOf = (xml: string, name: string): Array<string> =>
  Array.from(Result.getOrThrow(parseXml(xml)).getElementsByTagNameNS("http://www.portalfiscal.inf.br/nfe", name))
    .map((element) => element.textContent ?? "")

const signedNote = (overrides: Partial<NfeInput>) =>
  signEnveloped(buildNfe(nfeInput(overrides)).xml, {
    element: "infNFe",
    privateKeyPem: certificate.privateKeyPem,
    certificatePem: certificate.certificatePem
  })

const submit = (note: string, options?: { timeoutMs?: number }) =>
  call("NfeAutorizacao", authorizationRequest("1", note), options)

/** The note's cStat (the second of retEnviNFe: the batch's, then the note's). */
const noteStatus = (reply: Reply) => textsOf(contentOf(reply), "cStat")[1]

describe("the local SEFAZ over mutual TLS", () => {
  it("is in operation (107)", async () => {
    const reply = await call("NfeStatusServico", statusRequest("test", "35"))
    expect(reply.status).toBe(200)
    const answer = contentOf(reply)
    expect(validateNfe("retConsStatServ", answer)).toEqual(Result.void)
    expect(textsOf(answer, "cStat")).toEqual(["107"])
  })

  it("authorizes a note (100) with a protocol that forms a valid nfeProc, and finds it by its key", async () => {
    const note = signedNote({ number: 2001 })
    const reply = await submit(note)
    const answer = contentOf(reply)
    expect(validateNfe("retEnviNFe", answer)).toEqual(Result.void)
    expect(textsOf(answer, "cStat")).toEqual(["104", "100"])
    const protocol = answer.slice(answer.indexOf("<protNFe"), answer.indexOf("</protNFe>") + "</protNFe>".length)
    expect(textsOf(answer, "nProt")[0]).toMatch(/^135[0-9]{12}$/)
    expect(validateNfe("nfeProc", processedNote(note, protocol))).toEqual(Result.void)

    const key = textsOf(answer, "chNFe")[0]!
    const found = contentOf(await call("NfeConsultaProtocolo", lookupRequest("test", key)))
    expect(validateNfe("retConsSitNFe", found)).toEqual(Result.void)
    expect(textsOf(found, "cStat")).toEqual(["100", "100"])
    expect(textsOf(found, "nProt")).toEqual(textsOf(answer, "nProt"))
  })

  it("refuses the same note again (204) and another note taking its number (539)", async () => {
    const note = signedNote({ number: 2002 })
    expect(noteStatus(await submit(note))).toBe("100")
    expect(noteStatus(await submit(note))).toBe("204")
    expect(noteStatus(await submit(signedNote({ number: 2002, documentId: "doc_another" })))).toBe("539")
    expect(sefaz.notes().filter((n) => n.number === 2002)).toHaveLength(1)
  })

  it("answers 217 for a key it never authorized, and 225 for a batch its schema refuses", async () => {
    const unknown = contentOf(
      await call("NfeConsultaProtocolo", lookupRequest("test", buildNfe(nfeInput({ number: 9999 })).accessKey))
    )
    expect(textsOf(unknown, "cStat")).toEqual(["217"])
    const broken = contentOf(
      await submit(signedNote({ number: 2003 }).replace("<NCM>84212300</NCM>", "<NCM>8421</NCM>"))
    )
    expect(textsOf(broken, "cStat")).toEqual(["225"])
    expect(validateNfe("retEnviNFe", broken)).toEqual(Result.void)
  })

  it("rejects what the review refuses, with its code (a production note here: 252), and simulate:reject (999)", async () => {
    expect(noteStatus(await submit(signedNote({ number: 2004, environment: "live" })))).toBe("252")
    const rejected = await submit(
      signedNote({ number: 2005, request: { ...interstateSale, notes: "simulate:reject" } })
    )
    expect(noteStatus(rejected)).toBe("999")
  })

  it("voids a range (102) unless a number of it was used (241); the same range again is 563, one overlapping 256", async () => {
    await loadVoidingSchemas()
    const voiding = (from: number, to: number) =>
      signEnveloped(
        voidingRequest({
          environment: "test",
          stateCode: "35",
          issuerTaxId: "11222333000181",
          model: "55",
          series: 1,
          from,
          to,
          reason: "Numeros pulados pelo sistema de vendas",
          requestedAt: new Date()
        }),
        { element: "infInut", privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem }
      )
    const voidedStatus = async (from: number, to: number) => {
      const answer = contentOf(await call("NfeInutilizacao", voiding(from, to)))
      expect(validateVoiding("retInutNFe", answer)).toEqual(Result.void)
      return textsOf(answer, "cStat")[0]
    }
    expect(noteStatus(await submit(signedNote({ number: 2101 })))).toBe("100")
    expect(await voidedStatus(2100, 2102)).toBe("241")
    expect(await voidedStatus(2102, 2105)).toBe("102")
    expect(await voidedStatus(2102, 2105)).toBe("563")
    expect(await voidedStatus(2105, 2106)).toBe("256")
    expect(sefaz.voided().map((range) => [range.from, range.to])).toEqual([[2102, 2105]])
    const tampered = voiding(2110, 2110).replace("<nNFFin>2110<", "<nNFFin>2111<")
    expect(textsOf(contentOf(await call("NfeInutilizacao", tampered)), "cStat")[0]).toBe("297")
  })

  it("takes a simulate:async note's batch apart (103): its receipt answers 105, then 104 with the protocol; 106 unknown", async () => {
    const note = signedNote({ number: 2201, request: { ...interstateSale, notes: "simulate:async" } })
    const received = contentOf(await submit(note))
    expect(validateNfe("retEnviNFe", received)).toEqual(Result.void)
    expect(textsOf(received, "cStat")).toEqual(["103"])
    const [receipt] = textsOf(received, "nRec")
    const ask = async (nRec: string) => contentOf(await call("NfeRetAutorizacao", receiptRequest("test", nRec)))
    expect(textsOf(await ask(receipt!), "cStat")).toEqual(["105"])
    const processed = await ask(receipt!)
    expect(textsOf(processed, "cStat")).toEqual(["104", "100"])
    expect(textsOf(processed, "nProt")[0]).toMatch(/^135[0-9]{12}$/)
    expect(textsOf(await ask("350000000000000"), "cStat")).toEqual(["106"])
  })

  it("refuses a client without a certificate before reading it (403)", async () => {
    const reply = await call("NfeStatusServico", statusRequest("test", "35"), { anonymous: true })
    expect(reply.status).toBe(403)
  })

  it("simulate:unavailable answers 503 twice, then processes the note", async () => {
    const note = signedNote({ number: 2006, request: { ...interstateSale, notes: "simulate:unavailable" } })
    expect((await submit(note)).status).toBe(503)
    expect((await submit(note)).status).toBe(503)
    expect(noteStatus(await submit(note))).toBe("100")
  })

  it("simulate:timeout authorizes but holds the answer: the lookup finds the note, a retry is 204, one note", async () => {
    const note = signedNote({ number: 2007, request: { ...interstateSale, notes: "simulate:timeout" } })
    await expect(submit(note, { timeoutMs: 500 })).rejects.toThrow("timeout")
    const key =
      buildNfe(nfeInput({ number: 2007, request: { ...interstateSale, notes: "simulate:timeout" } })).accessKey
    const found = contentOf(await call("NfeConsultaProtocolo", lookupRequest("test", key)))
    expect(textsOf(found, "cStat")).toEqual(["100", "100"])
    expect(noteStatus(await submit(note))).toBe("204")
    expect(sefaz.notes().filter((n) => n.number === 2007)).toHaveLength(1)
  })
})
