/**
 * The SEFIN transport against a local HTTPS server that requires a client certificate and answers
 * with the real system's recorded bodies (../shared/reference/nfse-nacional/samples/): mutual TLS
 * with verification on, one agent per credential, the three error shapes, what counts as "not
 * found" and what is only transient, and the timeout that aborts the socket.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Option, Redacted } from "effect"
import forge from "node-forge"
import { generateKeyPairSync, randomBytes, X509Certificate } from "node:crypto"
import { readFileSync } from "node:fs"
import https from "node:https"
import type { AddressInfo } from "node:net"
import type { TLSSocket } from "node:tls"
import { gunzipSync, gzipSync } from "node:zlib"
import { makeSefinClient, type SefinEndpoints } from "../../src/authority/sefin/SefinClient.js"
import { readSefinErrors } from "../../src/authority/sefin/SefinErrors.js"
import type { ClientIdentity } from "../../src/authority/sefin/SefinTransport.js"
import { makePkcs12, testRoot } from "../support/certificates.js"

// ---- the real answers ------------------------------------------------------------------------

interface RecordedAnswer {
  readonly what: string
  readonly status?: number
  readonly body: Record<string, unknown>
}
const recorded: ReadonlyArray<RecordedAnswer> = JSON.parse(
  readFileSync(new URL("../../../shared/reference/nfse-nacional/samples/real-responses.json", import.meta.url), "utf8")
)
const sample = (startsWith: string, index = 0): RecordedAnswer => {
  const found = recorded.filter((r) => r.what.startsWith(startsWith))[index]
  if (found === undefined) throw new Error(`no recorded answer "${startsWith}" #${index}`)
  return found
}

// ---- certificates: the tenants' (ICP-Brasil-like, from the test CA) and the server's own CA --------

const tenant = makePkcs12({ cn: "EMPRESA TESTE LTDA:11222333000181", cnpjOid: "11222333000181", password: "x" })
const renewed = makePkcs12({
  cn: "EMPRESA TESTE LTDA:11222333000181",
  cnpjOid: "11222333000181",
  password: "x",
  freshKey: true
})

const identity = (p12: typeof tenant, credentialId = "cred_test"): ClientIdentity => ({
  credentialId,
  certificatePem: p12.certificatePem,
  privateKeyPem: Redacted.make(p12.privateKeyPem)
})
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256

const rsa = () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  })
  return {
    keyPem: privateKey,
    forgeKey: forge.pki.privateKeyFromPem(privateKey),
    publicKey: forge.pki.publicKeyFromPem(publicKey)
  }
}

/** A CA standing for the authority's TLS chain and a server certificate it issues for 127.0.0.1. */
const serverPki = () => {
  const caKeys = rsa()
  const serverKeys = rsa()
  const make = (publicKey: forge.pki.PublicKey, cn: string, extensions: Array<Record<string, unknown>>) => {
    const cert = forge.pki.createCertificate()
    cert.publicKey = publicKey
    cert.serialNumber = `1${randomBytes(8).toString("hex")}`
    cert.validity.notBefore = new Date(Date.now() - 3_600_000)
    cert.validity.notAfter = new Date(Date.now() + 86_400_000)
    cert.setSubject([{ name: "commonName", value: cn }])
    cert.setIssuer([{ name: "commonName", value: "SEFIN TESTE CA" }])
    cert.setExtensions(extensions)
    cert.sign(caKeys.forgeKey, forge.md.sha256.create())
    return forge.pki.certificateToPem(cert)
  }
  const caPem = make(caKeys.publicKey, "SEFIN TESTE CA", [
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true }
  ])
  const certPem = make(serverKeys.publicKey, "127.0.0.1", [
    { name: "basicConstraints", cA: false },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }, { type: 2, value: "localhost" }] }
  ])
  return { caPem, certPem, keyPem: serverKeys.keyPem }
}

// ---- the local server ------------------------------------------------------------------------

interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
  /** SHA-256 fingerprint of the client certificate of the TLS connection, as Node prints it. */
  readonly clientFingerprint: string | null
  readonly connection: number
}

type Reply =
  | { readonly status: number; readonly json?: unknown; readonly body?: string | Buffer; readonly contentType?: string }
  | "hang"
  | "reset"

const pki = serverPki()
const seen: Array<Seen> = []
let replyWith: (request: Seen) => Reply = () => ({ status: 500, json: {} })
let connections = 0
const connectionClosed = new Map<number, Promise<void>>()
let server: https.Server
let endpoints: SefinEndpoints

beforeAll(async () => {
  server = https.createServer({
    key: pki.keyPem,
    cert: pki.certPem,
    // The tenants' hierarchy, as the real system trusts ICP-Brasil's: a connection without one of its
    // certificates fails. The client sends its certificate alone, so the issuing CA is listed too.
    ca: [tenant.caCertificatePem, testRoot().certPem],
    requestCert: true,
    rejectUnauthorized: true
  })
  server.on("secureConnection", (socket: TLSSocket) => {
    const id = ++connections
    ;(socket as TLSSocket & { connectionId?: number }).connectionId = id
    connectionClosed.set(id, new Promise((resolve) => socket.on("close", () => resolve())))
  })
  server.on("request", (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const socket = req.socket as TLSSocket & { connectionId?: number }
      const peer = socket.getPeerCertificate()
      const request: Seen = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        clientFingerprint: peer.fingerprint256 ?? null,
        connection: socket.connectionId ?? 0
      }
      seen.push(request)
      const reply = replyWith(request)
      if (reply === "hang") return
      if (reply === "reset") {
        socket.destroy()
        return
      }
      const body = reply.json !== undefined ? JSON.stringify(reply.json) : reply.body ?? ""
      res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json; charset=utf-8" })
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  endpoints = {
    sefinUrl: `https://127.0.0.1:${port}/SefinNacional`,
    danfseUrl: `https://127.0.0.1:${port}/danfse`,
    ca: pki.caPem
  }
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

beforeEach(() => {
  seen.length = 0
  replyWith = () => ({ status: 500, json: {} })
})

const gz64 = (text: string) => gzipSync(Buffer.from(text, "utf8")).toString("base64")
const ACCESS_KEY = "31062002205065736000161000000000009326011037881815"
const DPS_ID = "DPS310620021122233300018100001000000000000042"
const SIGNED_DPS =
  `<?xml version="1.0" encoding="UTF-8"?><DPS xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infDPS Id="${DPS_ID}"><tpAmb>2</tpAmb></infDPS><Signature xmlns="http://www.w3.org/2000/09/xmldsig#"/></DPS>`
const NFSE_XML =
  `<?xml version="1.0" encoding="UTF-8"?><NFSe xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infNFSe Id="NFS${ACCESS_KEY}"><nNFSe>93</nNFSe><xLocEmi>Ipatinga – MG</xLocEmi></infNFSe></NFSe>`

/** The recorded 201 of produção restrita, with a real gzip of our NFS-e in place of the shortened one. */
const submitted = () => ({ ...sample("POST /nfse 201, produção restrita").body, nfseXmlGZipB64: gz64(NFSE_XML) })

const client = (options: { timeoutMs?: number; endpoints?: Partial<SefinEndpoints> } = {}) =>
  makeSefinClient({ endpoints: { ...endpoints, ...options.endpoints }, timeout: options.timeoutMs ?? 10_000 })

/** Runs `effect` and returns its failure (the test fails if it succeeds). */
const failureOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(effect)
    if (Exit.isSuccess(exit)) throw new Error("expected a failure")
    const error = exit.cause.reasons.find((r) => r._tag === "Fail")
    if (error === undefined || error._tag !== "Fail") {
      throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
    }
    return error.error
  })

/** Nothing of ours travels in an error: certificate, key, or the XML we sent. */
const expectNoSecrets = (error: unknown) => {
  const text = JSON.stringify(error) + String((error as { message?: string }).message)
  expect(text).not.toContain("BEGIN")
  expect(text).not.toContain(tenant.privateKeyPem.split("\n")[1]!)
  expect(text).not.toContain(new X509Certificate(tenant.certificatePem).raw.toString("base64").slice(0, 40))
  expect(text).not.toContain("<DPS")
}

describe("SefinClient over mutual TLS", () => {
  it.live("sends the signed DPS gzipped and base64'd in {dpsXmlGZipB64} with the tenant's certificate, and unpacks the NFS-e", () =>
    Effect.gen(function*() {
      replyWith = () => ({ status: 201, json: submitted() })
      const sefin = yield* client()
      const result = yield* sefin.submitDps(identity(tenant), SIGNED_DPS)

      expect(result).toEqual({
        accessKey: ACCESS_KEY,
        nfseXml: NFSE_XML,
        processedAt: "2026-01-22T14:42:34.4777475-03:00",
        alerts: []
      })
      expect(seen).toHaveLength(1)
      const request = seen[0]!
      expect(request.method).toBe("POST")
      expect(request.path).toBe("/SefinNacional/nfse")
      expect(request.headers["content-type"]).toMatch(/^application\/json/)
      expect(request.clientFingerprint).toBe(fingerprint(tenant.certificatePem))
      const body = JSON.parse(request.body)
      expect(Object.keys(body)).toEqual(["dpsXmlGZipB64"])
      expect(gunzipSync(Buffer.from(body.dpsXmlGZipB64, "base64")).toString("utf8")).toBe(SIGNED_DPS)
    }))

  it.live("refuses a server whose CA it was not given (verification stays on), and nothing reaches the server", () =>
    Effect.gen(function*() {
      replyWith = () => ({ status: 201, json: submitted() })
      const untrusting = yield* client({ endpoints: { ca: undefined } })
      const error = yield* failureOf(untrusting.submitDps(identity(tenant), SIGNED_DPS))
      expect(error._tag).toBe("SefinUnavailable")
      expect(error.message).toMatch(
        /^TLS with SEFIN failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/
      )
      // Flagged for the operator, naming what to configure, without Node's command-line hints.
      expect(error._tag === "SefinUnavailable" && error.tls).toBe(true)
      expect(error.message).toContain("_CA_FILE")
      expect(error.message).not.toContain("--use-system-ca")
      expectNoSecrets(error)

      // Trusting another CA instead does not help either: the extra bundle adds to Node's roots.
      const otherCa = serverPki().caPem
      const wrongCa = yield* client({ endpoints: { ca: otherCa } })
      expect((yield* failureOf(wrongCa.findDps(identity(tenant), DPS_ID)))._tag).toBe("SefinUnavailable")
      expect(seen).toHaveLength(0)

      // With the server's CA through `ca`, the same call works.
      const trusting = yield* client()
      expect((yield* trusting.submitDps(identity(tenant), SIGNED_DPS)).accessKey).toBe(ACCESS_KEY)
      expect(seen).toHaveLength(1)
    }))

  it("the test server itself refuses a client without a certificate", async () => {
    const { port } = server.address() as AddressInfo
    const outcome = await new Promise<string>((resolve) => {
      const req = https.request(
        { host: "127.0.0.1", port, path: "/SefinNacional/dps/x", ca: pki.caPem },
        (res) => resolve(`answered ${res.statusCode}`)
      )
      req.on("error", (error) => resolve(`error ${(error as NodeJS.ErrnoException).code ?? error.message}`))
      req.end()
    })
    expect(outcome).toMatch(/^error /)
    expect(seen).toHaveLength(0)
  })

  it.live("keeps one connection per credential, and a replaced certificate gets a new agent the server sees (the old one is closed)", () =>
    Effect.gen(function*() {
      replyWith = () => ({ status: 200, json: sample("GET /dps/{id} 200").body })
      const sefin = yield* client()
      yield* sefin.findDps(identity(tenant), DPS_ID)
      yield* sefin.findDps(identity(tenant), DPS_ID)
      expect(seen.map((s) => s.connection)).toEqual([seen[0]!.connection, seen[0]!.connection])
      expect(seen.every((s) => s.clientFingerprint === fingerprint(tenant.certificatePem))).toBe(true)

      // Same credential id, renewed certificate and key.
      yield* sefin.findDps(identity(renewed), DPS_ID)
      expect(seen[2]!.clientFingerprint).toBe(fingerprint(renewed.certificatePem))
      expect(seen[2]!.connection).not.toBe(seen[0]!.connection)
      yield* Effect.promise(() => connectionClosed.get(seen[0]!.connection)!)

      // Another credential has its own agent alongside.
      yield* sefin.findDps(identity(tenant, "cred_other"), DPS_ID)
      expect(seen[3]!.clientFingerprint).toBe(fingerprint(tenant.certificatePem))
      expect(seen[3]!.connection).not.toBe(seen[2]!.connection)
    }))

  it.live("closing the scope destroys the agents: the kept-alive connection ends", () =>
    Effect.gen(function*() {
      replyWith = () => ({ status: 200, json: sample("GET /dps/{id} 200").body })
      yield* Effect.scoped(Effect.gen(function*() {
        const sefin = yield* client()
        yield* sefin.findDps(identity(tenant), DPS_ID)
      }))
      yield* Effect.promise(() => connectionClosed.get(seen[0]!.connection)!)
    }))
})

describe("SefinClient answers", () => {
  it.live("reads the three real error shapes: erros[] PascalCase (POST /nfse), erro{} (queries), erro[] (events)", () =>
    Effect.gen(function*() {
      const sefin = yield* client()
      const refusal = (
        answer: RecordedAnswer,
        call: Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>
      ) =>
        Effect.gen(function*() {
          replyWith = () => ({ status: answer.status ?? 400, json: answer.body })
          const error = yield* failureOf(call)
          expectNoSecrets(error)
          return error
        })

      const malformed = yield* refusal(
        sample("POST /nfse 400, production"),
        sefin.submitDps(identity(tenant), SIGNED_DPS)
      )
      expect(malformed).toMatchObject({
        _tag: "SefinRefused",
        status: 400,
        errors: [{ code: "E1226", message: "Estrutura descompactada mal formada." }]
      })

      const withIdDps = yield* refusal(
        sample("POST /nfse 400, produção restrita"),
        sefin.submitDps(identity(tenant), SIGNED_DPS)
      )
      expect(withIdDps).toMatchObject({
        _tag: "SefinRefused",
        status: 400,
        dpsId: "DPS355030820616996600013300001000000000000900"
      })
      expect(withIdDps).toHaveProperty(["errors", 0, "code"], "E0120")

      const uncatalogued = yield* refusal(
        sample("POST /nfse 400, homologation"),
        sefin.submitDps(identity(tenant), SIGNED_DPS)
      )
      expect(uncatalogued).toMatchObject({
        errors: [{ code: "RNG9999", message: "Erro não catalogado.", complement: "Ocorreu um erro inesperado." }]
      })

      const wrongKey = yield* refusal(
        { ...sample("GET /nfse/emitidas"), status: 400 },
        sefin.getNfse(identity(tenant), "123")
      )
      expect(wrongKey).toMatchObject({ _tag: "SefinRefused", status: 400, errors: [{ code: "E2406" }] })

      const deadline = yield* refusal(
        sample("POST /nfse/{chave}/eventos 400, production, 2026-07-26"),
        sefin.registerEvent(identity(tenant), ACCESS_KEY, "<pedRegEvento/>")
      )
      expect(deadline).toMatchObject({ _tag: "SefinRefused", status: 400, errors: [{ code: "E0822" }] })
      expect(deadline.message).toMatch(/^SEFIN refused the request \(400\): E0822 O prazo para o cancelamento/)

      const again = yield* refusal(
        sample("POST /nfse/{chave}/eventos 400, second"),
        sefin.registerEvent(identity(tenant), ACCESS_KEY, "<pedRegEvento/>")
      )
      expect(again).toMatchObject({ _tag: "SefinRefused", errors: [{ code: "E0840" }] })
    }))

  it("readSefinErrors takes every entry of every shape, keys in any case", () => {
    expect(
      readSefinErrors({ erros: [{ Codigo: "E1", Descricao: "a" }, { codigo: "E2", descricao: "b", complemento: "c" }] })
    )
      .toEqual([{ code: "E1", message: "a" }, { code: "E2", message: "b", complement: "c" }])
    expect(readSefinErrors({ erro: { codigo: "E2404", descricao: "x" } })).toEqual([{ code: "E2404", message: "x" }])
    expect(readSefinErrors({ erro: [{ codigo: "E0840", descricao: "y" }] })).toEqual([{ code: "E0840", message: "y" }])
    expect(readSefinErrors({ chaveAcesso: ACCESS_KEY })).toEqual([])
    expect(readSefinErrors("<html>")).toEqual([])
  })

  it.live("findDps: 200 gives the access key; a JSON E2404 is None; an HTML 404 is transient, never 'not found'", () =>
    Effect.gen(function*() {
      const sefin = yield* client()
      replyWith = () => ({ status: 200, json: { ...sample("GET /dps/{id} 200").body, chaveAcesso: ACCESS_KEY } })
      expect(yield* sefin.findDps(identity(tenant), DPS_ID)).toEqual(Option.some({ accessKey: ACCESS_KEY }))
      expect(seen[0]).toMatchObject({ method: "GET", path: `/SefinNacional/dps/${DPS_ID}` })

      replyWith = () => ({ status: 404, json: sample("GET /dps/{id} 404").body })
      expect(yield* sefin.findDps(identity(tenant), DPS_ID)).toEqual(Option.none())

      replyWith = () => ({
        status: 404,
        contentType: "text/html",
        body: "<!DOCTYPE html><html><body><h1>404 - Not Found</h1></body></html>"
      })
      const html = yield* failureOf(sefin.findDps(identity(tenant), DPS_ID))
      expect(html).toMatchObject({ _tag: "SefinUnavailable", status: 404 })
      expect(html.message).toBe("SEFIN answered GET /dps/{id} with 404 and a non-JSON answer")

      // E2401 is the answer of the other query: on /dps it proves nothing, so it is a refusal, not None.
      replyWith = () => ({ status: 404, json: sample("GET /nfse/{chave} 404").body })
      expect((yield* failureOf(sefin.findDps(identity(tenant), DPS_ID)))._tag).toBe("SefinRefused")
    }))

  it.live("getNfse: 200 unpacks the XML; a JSON E2401 is None; an HTML 404 is transient", () =>
    Effect.gen(function*() {
      const sefin = yield* client()
      replyWith = () => ({
        status: 200,
        json: {
          tipoAmbiente: 2,
          versaoAplicativo: "SefinNacional_1.6.0",
          dataHoraProcessamento: "2026-01-22T14:42:35.1-03:00",
          chaveAcesso: ACCESS_KEY,
          nfseXmlGZipB64: gz64(NFSE_XML)
        }
      })
      expect(yield* sefin.getNfse(identity(tenant), ACCESS_KEY)).toEqual(Option.some({ nfseXml: NFSE_XML }))
      expect(seen[0]).toMatchObject({ method: "GET", path: `/SefinNacional/nfse/${ACCESS_KEY}` })

      replyWith = () => ({ status: 404, json: sample("GET /nfse/{chave} 404").body })
      expect(yield* sefin.getNfse(identity(tenant), ACCESS_KEY)).toEqual(Option.none())

      replyWith = () => ({ status: 404, contentType: "text/html", body: "<html>Not Found</html>" })
      expect(yield* failureOf(sefin.getNfse(identity(tenant), ACCESS_KEY))).toMatchObject({
        _tag: "SefinUnavailable",
        status: 404
      })
    }))

  it.live("registerEvent posts {pedidoRegistroEventoXmlGZipB64} to /nfse/{chave}/eventos and unpacks eventoXmlGZipB64", () =>
    Effect.gen(function*() {
      const pedido =
        `<pedRegEvento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infPedReg Id="PRE${ACCESS_KEY}101101"/></pedRegEvento>`
      const evento =
        `<evento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infEvento Id="EVT${ACCESS_KEY}101101001"/></evento>`
      replyWith = () => ({
        status: 201,
        json: {
          tipoAmbiente: 2,
          versaoAplicativo: "SefinNacional_1.6.0",
          dataHoraProcessamento: "2026-01-22T15:00:00.1234567-03:00",
          eventoXmlGZipB64: gz64(evento)
        }
      })
      const sefin = yield* client()
      expect(yield* sefin.registerEvent(identity(tenant), ACCESS_KEY, pedido)).toEqual({ eventXml: evento })
      expect(seen[0]).toMatchObject({ method: "POST", path: `/SefinNacional/nfse/${ACCESS_KEY}/eventos` })
      const body = JSON.parse(seen[0]!.body)
      expect(Object.keys(body)).toEqual(["pedidoRegistroEventoXmlGZipB64"])
      expect(gunzipSync(Buffer.from(body.pedidoRegistroEventoXmlGZipB64, "base64")).toString("utf8")).toBe(pedido)
    }))

  it.live("getDanfse returns the PDF from {danfseUrl}/{chave}, and anything but a PDF is transient", () =>
    Effect.gen(function*() {
      const pdf = Buffer.from("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n", "latin1")
      replyWith = () => ({ status: 200, contentType: "application/pdf", body: pdf })
      const sefin = yield* client()
      const bytes = yield* sefin.getDanfse(identity(tenant), ACCESS_KEY)
      expect(Buffer.from(bytes).equals(pdf)).toBe(true)
      expect(seen[0]).toMatchObject({ method: "GET", path: `/danfse/${ACCESS_KEY}` })
      expect(seen[0]!.headers["accept"]).toBe("application/pdf")

      replyWith = () => ({ status: 200, contentType: "text/html", body: "<html>manutenção</html>" })
      expect(yield* failureOf(sefin.getDanfse(identity(tenant), ACCESS_KEY))).toMatchObject({
        _tag: "SefinUnavailable",
        status: 200
      })
    }))

  it.live("5xx (even with an error list), 429, and a 2xx that is not the expected JSON are transient", () =>
    Effect.gen(function*() {
      const sefin = yield* client()
      replyWith = () => ({ status: 500, json: sample("POST /nfse 400, homologation").body })
      const server500 = yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))
      expect(server500).toMatchObject({
        _tag: "SefinUnavailable",
        status: 500,
        message: "SEFIN answered POST /nfse with 500 (RNG9999)"
      })

      replyWith = () => ({ status: 503, contentType: "text/html", body: "<html>Service Unavailable</html>" })
      expect(yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))).toMatchObject({
        _tag: "SefinUnavailable",
        status: 503
      })

      replyWith = () => ({ status: 429, json: { erro: { codigo: "E9999", descricao: "muitas requisições" } } })
      expect(yield* failureOf(sefin.findDps(identity(tenant), DPS_ID))).toMatchObject({
        _tag: "SefinUnavailable",
        status: 429
      })

      replyWith = () => ({ status: 201, json: { chaveAcesso: ACCESS_KEY } })
      expect(yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))).toMatchObject({
        _tag: "SefinUnavailable",
        status: 201
      })

      // The recorded 201 itself carries a shortened gzip: it does not unpack, and that is not a success.
      replyWith = () => ({ status: 201, json: sample("POST /nfse 201, produção restrita").body })
      expect(yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))).toMatchObject({
        _tag: "SefinUnavailable",
        message: "SEFIN answered with an NFS-e that does not unpack (gzip + base64)"
      })
    }))

  it.live("a body or an unpacked NFS-e far larger than any real one is refused, not held: a gzip bomb is transient", () =>
    Effect.gen(function*() {
      const sefin = yield* client()
      // 3 MiB of JSON: past the 2 MiB bound of a JSON answer.
      replyWith = () => ({
        status: 201,
        contentType: "application/json",
        body: `{"padding":"${"x".repeat(3 * 1024 * 1024)}"}`
      })
      expect(yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))).toMatchObject({
        _tag: "SefinUnavailable",
        message: "SEFIN's answer is too large"
      })
      // 8 MiB of zeros gzip to ~8 KiB: small on the wire, refused once unpacking passes 2 MiB.
      const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024)).toString("base64")
      replyWith = () => ({ status: 201, json: { ...submitted(), nfseXmlGZipB64: bomb } })
      expect(yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))).toMatchObject({
        _tag: "SefinUnavailable",
        message: "SEFIN answered with an NFS-e that does not unpack (gzip + base64)"
      })
    }))

  it.live("connection refused and connection reset are transient", () =>
    Effect.gen(function*() {
      const closedPort = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = https.createServer()
          probe.listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as AddressInfo
            probe.close(() => resolve(port))
          })
        })
      )
      const nowhere = yield* client({ endpoints: { sefinUrl: `https://127.0.0.1:${closedPort}/SefinNacional` } })
      const refused = yield* failureOf(nowhere.submitDps(identity(tenant), SIGNED_DPS))
      expect(refused).toMatchObject({ _tag: "SefinUnavailable" })
      expect(refused.message).toMatch(/^SEFIN refused the connection \(ECONNREFUSED/)

      replyWith = () => "reset"
      const sefin = yield* client()
      const reset = yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))
      expect(reset).toMatchObject({ _tag: "SefinUnavailable" })
      expect(reset.message).toMatch(/^the connection to SEFIN was (reset|cut)/)
      expectNoSecrets(reset)
    }))

  it.live("a hung server gives SefinTimeout within the timeout, and the socket is aborted", () =>
    Effect.gen(function*() {
      replyWith = () => "hang"
      const sefin = yield* client({ timeoutMs: 400 })
      const started = Date.now()
      const error = yield* failureOf(sefin.submitDps(identity(tenant), SIGNED_DPS))
      const elapsed = Date.now() - started
      expect(error).toMatchObject({ _tag: "SefinTimeout", message: "SEFIN did not answer POST /nfse within 400 ms" })
      expect(elapsed).toBeGreaterThanOrEqual(390)
      expect(elapsed).toBeLessThan(1_500)
      // The server had the request, and sees its connection closed by the client.
      expect(seen).toHaveLength(1)
      yield* Effect.promise(() => connectionClosed.get(seen[0]!.connection)!).pipe(Effect.timeout(2_000))
    }))
})
