/**
 * A protocol-faithful local SEFIN Nacional (and ADN DANFSe) for tests and local runs (SPEC §7):
 * an HTTPS server on loopback, with its own throw-away CA, that requires a client
 * certificate and answers the national API's routes as the real system does. What it checks and
 * decides lives in LocalSefin.ts; this module is the transport around it plus the hooks tests need
 * (what was received, what was authorized, call counts, and disruptions: the next calls answering
 * 503, hanging, or dropping the connection).
 *
 * Routes (anything else: the real servers' HTML 404 page):
 * - `POST /SefinNacional/nfse`, `GET|HEAD /SefinNacional/dps/{id}`, `GET /SefinNacional/nfse/{chave}`,
 *   `POST /SefinNacional/nfse/{chave}/eventos`, `GET /SefinNacional/nfse/{chave}/eventos/{tipo}/{seq}`,
 *   `GET /danfse/{chave}`.
 *
 * The TLS client certificate is requested, and checked against `clientRoots` when they are given
 * (`npm run authority:local` gives the ICP-Brasil roots and CREDENTIALS_EXTRA_CA_FILE's, as the real
 * system accepts only ICP-Brasil certificates); without them any certificate is taken. A request
 * without a client certificate, with one outside its validity, or with one that does not chain to
 * `clientRoots`, is refused (403) before it is looked at.
 *
 * One instance stands for ONE environment (`environment`, tpAmb: 1 production, 2 produção restrita;
 * default 2), as each real environment is a separate system. State is in memory and dies with it.
 */
import { Duration, Effect, type Scope } from "effect"
import forge from "node-forge"
import { X509Certificate } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer, type Server } from "node:https"
import type { Socket } from "node:net"
import type { TLSSocket } from "node:tls"
import type { EventForm } from "../../src/authority/sefin/EventRequest.js"
import { loadSchemas } from "../../src/authority/xml/Xsd.js"
import { extractTaxId } from "../../src/credentials/CertificateTaxId.js"
import { listenOn, mutualTlsOptions } from "./Listening.js"
import { localAuthorityKeys } from "./LocalAuthorityKeys.js"
import { type Answer, type AuthorizedNfse, makeLocalSefin, type RegisteredTaxpayer } from "./LocalSefin.js"
import {
  currentTicks,
  type EnvironmentCode,
  eventRefused,
  LocalAuthorityCodes,
  NOT_FOUND_PAGE,
  processingTimestamp,
  queryRefused,
  refusal,
  submitRefused,
  UNAVAILABLE_PAGE
} from "./SefinAnswers.js"

export { MagicValues } from "../../src/authority/TaxAuthority.js"
export type { AuthorizedNfse, Cancellation, RegisteredTaxpayer } from "./LocalSefin.js"
export { LocalAuthorityCodes } from "./SefinAnswers.js"

export type Operation = "submitDps" | "findDps" | "getNfse" | "registerEvent" | "findEvent" | "getDanfse"

/**
 * What the next disrupted calls do instead of a normal answer:
 * - `unavailable`: 503 (a gateway's HTML page), nothing processed;
 * - `hang`: no answer at all until the authority is closed, nothing processed;
 * - `hang-after-processing`: processed (a DPS is authorized), but the answer never comes;
 * - `reset`: the connection is dropped without an answer, nothing processed.
 */
export type Disruption = "unavailable" | "hang" | "hang-after-processing" | "reset"

export interface LocalAuthorityOptions {
  /** Default 0: a free port the system picks. */
  readonly port?: number | undefined
  /** Default 127.0.0.1. */
  readonly host?: string | undefined
  /** The tpAmb this instance stands for. Default 2 (produção restrita). */
  readonly environment?: EnvironmentCode | undefined
  /** How long a `simulate:timeout` submission's answer is held back after it is authorized. Default 30 s. */
  readonly timeoutAfter?: Duration.Input | undefined
  /** How many submits of a `simulate:unavailable` DPS answer 503 before it is authorized. Default 2. */
  readonly unavailableTimes?: number | undefined
  /** The municipalities' ISS rate, applied when a DPS informs none. Default "2.00". */
  readonly issRate?: string | undefined
  /** Issuers' names and addresses by normalized CNPJ/CPF, as the real system's register (CNC) has them. */
  readonly taxpayers?: Readonly<Record<string, RegisteredTaxpayer>> | undefined
  /** Municipality names by IBGE code, printed in the NFS-e. */
  readonly municipalityNames?: Readonly<Record<string, string>> | undefined
  /** Largest request body accepted. Default 4 MiB. */
  readonly maxBodyBytes?: number | undefined
  /**
   * The certificates (PEM; roots, and the intermediates clients do not send) a client certificate
   * must chain to. Default: none, any client certificate is taken.
   */
  readonly clientRoots?: ReadonlyArray<string> | undefined
  /**
   * The event request form it takes (src/authority/sefin/EventRequest.ts); the other is refused
   * with E1235 naming `nPedRegEvento`. Default `without_sequence`, the form production takes.
   */
  readonly eventForm?: EventForm | undefined
  /** How long after authorization the issuer may cancel a note itself, then E0822. Default: no deadline. */
  readonly cancellationDeadline?: Duration.Input | undefined
}

export interface ReceivedRequest {
  readonly at: Date
  readonly method: string
  /** Path and query as sent. */
  readonly path: string
  /** null for a path outside the API. */
  readonly operation: Operation | null
  /** The raw body (JSON text for the POSTs). */
  readonly body: string
  readonly clientCertificatePem: string | null
  /** CNPJ/CPF of the client certificate, normalized, when it carries one. */
  readonly clientTaxId: string | null
  /** The DPS or pedRegEvento XML the body carried, once gunzipped; null when it did not decode. */
  readonly xml: string | null
}

export interface LocalAuthority {
  /** Base URL of the SEFIN API: https://127.0.0.1:PORT/SefinNacional */
  readonly url: string
  /** Base URL of the DANFSe API: https://127.0.0.1:PORT/danfse */
  readonly danfseUrl: string
  readonly port: number
  readonly environment: EnvironmentCode
  /** The CA that issued the server certificate (what a client must trust) and the signing certificate. */
  readonly caPem: string
  /** The certificate the authority signs NFS-e and events with. */
  readonly signingCertificatePem: string
  /** Every request, in arrival order (live view). */
  readonly received: ReadonlyArray<ReceivedRequest>
  /** Every NFS-e authorized so far, in order, with its cancellation if any. */
  readonly submissions: () => ReadonlyArray<AuthorizedNfse>
  /**
   * Adds or replaces a taxpayer in the register (the real system's CNC), by normalized CNPJ/CPF: the
   * name and address its NFS-e print from then on.
   */
  readonly registerTaxpayer: (taxId: string, taxpayer: RegisteredTaxpayer) => void
  /** Calls per operation, refused and disrupted ones included. */
  readonly counts: () => Readonly<Record<Operation, number>>
  /** The next `count` calls (of `operations`, default all) are disrupted instead of answered. */
  readonly disruptNext: (count: number, disruption: Disruption, operations?: ReadonlyArray<Operation>) => void
  /** Stops listening, drops held and open connections. */
  readonly close: () => Promise<void>
}

const SEFIN_BASE = "/SefinNacional"
const DANFSE_BASE = "/danfse"

interface Route {
  readonly operation: Operation
  readonly parameter: string
  readonly eventType?: string
  readonly sequence?: string
}

const route = (method: string, pathname: string): Route | null => {
  let match: RegExpExecArray | null
  if (method === "POST" && pathname === `${SEFIN_BASE}/nfse`) return { operation: "submitDps", parameter: "" }
  if ((method === "GET" || method === "HEAD") && (match = /^\/SefinNacional\/dps\/([^/]+)$/.exec(pathname)) !== null) {
    return { operation: "findDps", parameter: decodeURIComponent(match[1]!) }
  }
  if (method === "GET" && (match = /^\/SefinNacional\/nfse\/([^/]+)$/.exec(pathname)) !== null) {
    return { operation: "getNfse", parameter: decodeURIComponent(match[1]!) }
  }
  if (method === "POST" && (match = /^\/SefinNacional\/nfse\/([^/]+)\/eventos$/.exec(pathname)) !== null) {
    return { operation: "registerEvent", parameter: decodeURIComponent(match[1]!) }
  }
  if (
    method === "GET" &&
    (match = /^\/SefinNacional\/nfse\/([^/]+)\/eventos\/([0-9]+)\/([0-9]+)$/.exec(pathname)) !== null
  ) {
    return {
      operation: "findEvent",
      parameter: decodeURIComponent(match[1]!),
      eventType: match[2]!,
      sequence: match[3]!
    }
  }
  if (method === "GET" && (match = /^\/danfse\/([^/]+)$/.exec(pathname)) !== null) {
    return { operation: "getDanfse", parameter: decodeURIComponent(match[1]!) }
  }
  return null
}

const derToPem = (der: Buffer): string =>
  `-----BEGIN CERTIFICATE-----\n${
    der.toString("base64").match(/.{1,64}/g)?.join("\n") ?? ""
  }\n-----END CERTIFICATE-----\n`

const taxIdOf = (certificatePem: string): string | null => {
  try {
    return extractTaxId(forge.pki.certificateFromPem(certificatePem))
  } catch {
    // forge reads RSA certificates only; another key type has no tax id this authority can see.
    return null
  }
}

interface ClientCertificate {
  readonly pem: string
  readonly taxId: string | null
  readonly currentlyValid: boolean
  /** Chains to the authority's `clientRoots` (TLS verification, which also checks validity). */
  readonly trusted: boolean
}

/** Whether the certificate is within its validity at `now`; one Node cannot read is not. */
const validAt = (der: Buffer, now: Date): boolean => {
  try {
    const x509 = new X509Certificate(der)
    return new Date(x509.validFrom) <= now && now <= new Date(x509.validTo)
  } catch {
    return false
  }
}

const clientCertificateOf = (request: IncomingMessage, now: Date): ClientCertificate | null => {
  const peer = (request.socket as TLSSocket).getPeerCertificate(false)
  // Without a client certificate Node hands over an empty object.
  const raw: Buffer | undefined = peer?.raw
  if (raw === undefined || raw.length === 0) return null
  const pem = derToPem(raw)
  const socket = request.socket as TLSSocket
  return { pem, taxId: taxIdOf(pem), currentlyValid: validAt(raw, now), trusted: socket.authorized }
}

class BodyTooLarge extends Error {}

const readBody = (request: IncomingMessage, limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        request.pause()
        reject(new BodyTooLarge())
        return
      }
      chunks.push(chunk)
    })
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** The refusal of a client without a usable certificate, in the route's own error shape. */
const certificateRefusal = (
  operation: Operation | null,
  environment: EnvironmentCode,
  processedAt: string,
  complement: string
) => {
  const error = refusal(LocalAuthorityCodes.clientCertificateMissing, complement)
  const base = { environment, processedAt }
  switch (operation) {
    case "submitDps":
      return submitRefused({ ...base, errors: [error] })
    case "registerEvent":
      return eventRefused({ ...base, errors: [error] })
    default:
      return queryRefused({ ...base, error })
  }
}

/** Starts a local authority; resolves once it listens. */
export const startLocalAuthority = async (options: LocalAuthorityOptions = {}): Promise<LocalAuthority> => {
  // It validates every DPS and event it receives, against the schemas it loads first.
  await loadSchemas()
  const keys = localAuthorityKeys()
  const environment: EnvironmentCode = options.environment ?? 2
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024
  const timeoutAfter = Duration.fromInputUnsafe(options.timeoutAfter ?? Duration.seconds(30))
  const sefin = makeLocalSefin({
    environment,
    unavailableTimes: Math.max(0, options.unavailableTimes ?? 2),
    issRate: options.issRate ?? "2.00",
    taxpayers: options.taxpayers,
    municipalityNames: options.municipalityNames,
    signer: keys.signer,
    eventForm: options.eventForm,
    cancellationDeadlineMs: options.cancellationDeadline === undefined
      ? undefined
      : Duration.toMillis(Duration.fromInputUnsafe(options.cancellationDeadline))
  })

  const received: Array<ReceivedRequest> = []
  const counts: Record<Operation, number> = {
    submitDps: 0,
    findDps: 0,
    getNfse: 0,
    registerEvent: 0,
    findEvent: 0,
    getDanfse: 0
  }
  const disruptions: Array<{ disruption: Disruption; operations: ReadonlySet<Operation> | null }> = []
  // Answers held back (simulate:timeout, hangs): released or dropped at close.
  const heldTimers = new Set<NodeJS.Timeout>()
  const heldResponses = new Set<ServerResponse>()
  const sockets = new Set<Socket>()

  const takeDisruption = (operation: Operation): Disruption | null => {
    const index = disruptions.findIndex((d) => d.operations === null || d.operations.has(operation))
    if (index < 0) return null
    return disruptions.splice(index, 1)[0]!.disruption
  }

  const sendPage = (response: ServerResponse, status: number, page: string) => {
    response.writeHead(status, { "content-type": "text/html", "content-length": Buffer.byteLength(page) })
    response.end(page)
  }

  const sendJson = (response: ServerResponse, status: number, body: unknown, headOnly: boolean) => {
    const text = JSON.stringify(body)
    response.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text)
    })
    response.end(headOnly ? undefined : text)
  }

  const send = (response: ServerResponse, answer: Answer, headOnly: boolean) => {
    switch (answer.kind) {
      case "json":
        return sendJson(response, answer.status, answer.body, headOnly)
      case "page":
        return sendPage(response, answer.status, answer.page)
      case "pdf":
        response.writeHead(answer.status, {
          "content-type": "application/pdf",
          "content-length": answer.bytes.byteLength
        })
        return response.end(headOnly ? undefined : Buffer.from(answer.bytes))
    }
  }

  const hold = (response: ServerResponse) => {
    heldResponses.add(response)
    response.on("close", () => heldResponses.delete(response))
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const at = new Date()
    const processedAt = processingTimestamp(at, currentTicks())
    const method = request.method ?? "GET"
    const path = request.url ?? "/"
    const pathname = path.split("?")[0]!
    let matched: Route | null
    try {
      matched = route(method, pathname)
    } catch {
      // A malformed percent-escape in the path: no route can match it.
      matched = null
    }
    const certificate = clientCertificateOf(request, at)

    let body: string
    try {
      body = await readBody(request, maxBodyBytes)
    } catch (error) {
      if (error instanceof BodyTooLarge) {
        response.writeHead(413, { "content-type": "text/plain", connection: "close" })
        response.end("Request Entity Too Large")
        return
      }
      throw error
    }

    const record: { -readonly [K in keyof ReceivedRequest]: ReceivedRequest[K] } = {
      at,
      method,
      path,
      operation: matched?.operation ?? null,
      body,
      clientCertificatePem: certificate?.pem ?? null,
      clientTaxId: certificate?.taxId ?? null,
      xml: null
    }
    received.push(record)

    if (matched === null) return sendPage(response, 404, NOT_FOUND_PAGE)
    const { operation, parameter } = matched
    counts[operation]++
    const headOnly = method === "HEAD"

    if (certificate === null) {
      return sendJson(
        response,
        403,
        certificateRefusal(operation, environment, processedAt, "A requisição não apresentou certificado de cliente."),
        headOnly
      )
    }
    if (!certificate.currentlyValid) {
      return sendJson(
        response,
        403,
        certificateRefusal(
          operation,
          environment,
          processedAt,
          "O certificado de cliente está fora do prazo de validade."
        ),
        headOnly
      )
    }

    if (options.clientRoots !== undefined && !certificate.trusted) {
      return sendJson(
        response,
        403,
        certificateRefusal(
          operation,
          environment,
          processedAt,
          "O certificado de cliente não pertence a uma cadeia de certificação confiável (ICP-Brasil)."
        ),
        headOnly
      )
    }

    const disruption = takeDisruption(operation)
    switch (disruption) {
      case "unavailable":
        return sendPage(response, 503, UNAVAILABLE_PAGE)
      case "hang":
        return hold(response)
      case "reset":
        request.socket.destroy()
        return
      default:
        break
    }

    const call = { at, processedAt, clientTaxId: certificate.taxId }
    const outcome = await (() => {
      switch (operation) {
        case "submitDps":
          return sefin.submitDps(body, call)
        case "findDps":
          return sefin.findDps(parameter, call)
        case "getNfse":
          return sefin.getNfse(parameter, call)
        case "registerEvent":
          return sefin.registerEvent(parameter, body, call)
        case "findEvent":
          return sefin.findEvent(parameter, matched.eventType!, matched.sequence!, call)
        case "getDanfse":
          return sefin.getDanfse(parameter, call)
      }
    })()
    record.xml = outcome.xml ?? null

    if (disruption === "hang-after-processing") return hold(response)
    if (outcome.heldBack === true) {
      // simulate:timeout: authorized, but the caller hears of it only after timeoutAfter.
      hold(response)
      const timer = setTimeout(() => {
        heldTimers.delete(timer)
        heldResponses.delete(response)
        if (!response.destroyed) send(response, outcome.answer, headOnly)
      }, Duration.toMillis(timeoutAfter))
      heldTimers.add(timer)
      return
    }
    send(response, outcome.answer, headOnly)
  }

  const server: Server = createServer(
    mutualTlsOptions(keys.server, options.clientRoots),
    (request, response) => {
      handle(request, response).catch(() => {
        // A bug in the authority itself: answer like the real one's 500, without details.
        if (!response.headersSent) {
          sendJson(
            response,
            500,
            queryRefused({
              environment,
              processedAt: processingTimestamp(new Date(), currentTicks()),
              error: { code: "E9999", description: "Erro não catalogado." }
            }),
            false
          )
        } else {
          response.destroy()
        }
      })
    }
  )
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  server.on("secureConnection", (socket: TLSSocket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  // A client that gives up mid-handshake (or a TLS probe) must not bring the authority down.
  server.on("tlsClientError", () => undefined)

  const { origin, port } = await listenOn(server, options.port, options.host)

  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      for (const timer of heldTimers) clearTimeout(timer)
      heldTimers.clear()
      for (const response of heldResponses) response.destroy()
      heldResponses.clear()
      server.close(() => resolve())
      for (const socket of sockets) socket.destroy()
      server.closeAllConnections()
    })
    return closing
  }

  return {
    url: `${origin}${SEFIN_BASE}`,
    danfseUrl: `${origin}${DANFSE_BASE}`,
    port,
    environment,
    caPem: keys.caCertificatePem,
    signingCertificatePem: keys.signer.certificatePem,
    received,
    submissions: () => sefin.submissions(),
    registerTaxpayer: sefin.registerTaxpayer,
    counts: () => ({ ...counts }),
    disruptNext: (count, disruption, operations) => {
      const only = operations === undefined ? null : new Set(operations)
      for (let i = 0; i < count; i++) disruptions.push({ disruption, operations: only })
    },
    close
  }
}

/** The same, as a scoped Effect: closed when the scope closes. */
export const localAuthorityScoped = (
  options: LocalAuthorityOptions = {}
): Effect.Effect<LocalAuthority, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => startLocalAuthority(options)),
    (authority) => Effect.promise(() => authority.close())
  )
