/**
 * The HTTP transport to the national NFS-e system (SEFIN Nacional, and the ADN DANFSe API): mutual
 * TLS with the tenant's A1 certificate, JSON bodies carrying gzip + base64 XML, and the system's
 * answers read as they really are (three error shapes, `alertas: null`, an HTML 404 for a wrong
 * path; see ../shared/reference/nfse-nacional/README.md). It builds no documents: it moves signed
 * XML and hands back what came back, with failures typed as final (`SefinRefused`) or transient
 * (`SefinUnavailable`, `SefinTimeout`) for the adapter to map to the pipeline's retry rules.
 *
 * One `https.Agent` per credential keeps its TLS connections alive between calls; a changed
 * certificate gets a new agent (the old one is closed once its requests finish), agents left
 * unused are closed, and all are destroyed with the scope. Certificate verification is always on;
 * an extra CA bundle (produção restrita chains to ICP-Brasil, which Node does not trust) is added
 * to Node's default roots, never in place of them.
 */
import { createHash } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import https from "node:https"
import tls from "node:tls"
import { gunzipSync, gzipSync } from "node:zlib"
import { Duration, Effect, Option, Redacted, Schema, type Scope } from "effect"
import { currentTraceparent } from "../../telemetry/TraceContext.js"

export interface SefinEndpoints {
  /** e.g. https://sefin.nfse.gov.br/SefinNacional */
  readonly sefinUrl: string
  /** e.g. https://adn.nfse.gov.br/danfse */
  readonly danfseUrl: string
  /** Extra PEM bundle trusted for the authority's TLS, on top of Node's default roots. */
  readonly ca?: string | undefined
}

/** The tenant's certificate and key, as the credential vault gives them (`CredentialMaterial` fits). */
export interface ClientIdentity {
  readonly credentialId: string
  readonly certificatePem: string
  readonly privateKeyPem: Redacted.Redacted<string>
}

/** One entry of the authority's error or alert lists, whatever shape it came in. */
export interface SefinMessage {
  readonly code: string
  readonly message: string
  readonly complement?: string | undefined
}

const SefinMessageSchema = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  complement: Schema.optional(Schema.String)
})

/** The authority refused the request (a 4xx with an error list): final, never retried as is. */
export class SefinRefused extends Schema.TaggedError<SefinRefused>()("SefinRefused", {
  status: Schema.Number,
  errors: Schema.Array(SefinMessageSchema),
  /** `idDPS` of a refused submission, when the authority could read it (e.g. E0014, duplicate). */
  dpsId: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `SEFIN refused the request (${this.status}): ${this.errors.map((e) => `${e.code} ${e.message}`).join("; ")}`
  }
}

/** No usable answer: 5xx, 429, an HTML or unreadable answer, a connection or TLS failure. Transient. */
export class SefinUnavailable extends Schema.TaggedError<SefinUnavailable>()("SefinUnavailable", {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  /** The TLS handshake failed: usually our configuration (the authority's CA not trusted), not an outage. */
  tls: Schema.optional(Schema.Boolean)
}) {}

/** No answer within the timeout (the request was aborted). Transient; the outcome is unknown. */
export class SefinTimeout extends Schema.TaggedError<SefinTimeout>()("SefinTimeout", {
  message: Schema.String
}) {}

export type SefinError = SefinRefused | SefinUnavailable | SefinTimeout

export interface DpsSubmitted {
  /** The 50-digit access key (chaveAcesso). */
  readonly accessKey: string
  /** The NFS-e XML, unpacked, exactly as the authority sent it. */
  readonly nfseXml: string
  /** `dataHoraProcessamento` as sent, e.g. "2026-01-22T14:42:34.4777475-03:00". */
  readonly processedAt: string
  /** `alertas` (null in real answers: empty here). */
  readonly alerts: ReadonlyArray<SefinMessage>
}

export interface SefinClient {
  /** `POST /nfse` with the signed DPS. */
  readonly submitDps: (identity: ClientIdentity, signedDpsXml: string) => Effect.Effect<DpsSubmitted, SefinError>
  /** `GET /dps/{id}`: None only when the authority says so in JSON (E2404). */
  readonly findDps: (identity: ClientIdentity, dpsId: string) => Effect.Effect<Option.Option<{ readonly accessKey: string }>, SefinError>
  /** `GET /nfse/{chave}`: None only when the authority says so in JSON (E2401). */
  readonly getNfse: (identity: ClientIdentity, accessKey: string) => Effect.Effect<Option.Option<{ readonly nfseXml: string }>, SefinError>
  /** `POST /nfse/{chave}/eventos` with the signed pedRegEvento; the registered event's XML. */
  readonly registerEvent: (
    identity: ClientIdentity,
    accessKey: string,
    signedPedRegEventoXml: string
  ) => Effect.Effect<{ readonly eventXml: string }, SefinError>
  /** `GET {danfseUrl}/{chave}`: the DANFSe PDF. */
  readonly getDanfse: (identity: ClientIdentity, accessKey: string) => Effect.Effect<Uint8Array, SefinError>
}

// Far above any real answer, and small enough that a broken or hostile endpoint cannot make us hold
// much: an NFS-e is a few KiB (tens unpacked), an event less, a DANFSe a few hundred KiB.
const MAX_JSON_ANSWER_BYTES = 2 * 1024 * 1024
const MAX_PDF_ANSWER_BYTES = 10 * 1024 * 1024
const MAX_UNPACKED_XML_BYTES = 2 * 1024 * 1024
// Agents with no request for this long are closed; the next call opens a new connection.
const AGENT_IDLE_MS = 10 * 60_000
// Idle keep-alive sockets are closed after this; the real servers drop them sooner anyway.
const IDLE_SOCKET_MS = 30_000

/**
 * The error list of an answer, in any of the three shapes the real system uses:
 * `erros: [{Codigo, Descricao, Complemento?}]` (PascalCase, `POST /nfse`),
 * `erro: {codigo, descricao}` (an object, the queries) and `erro: [{codigo, descricao}]` (a list,
 * the events endpoint). Keys are read case-insensitively. Empty when there is none.
 */
export const readSefinMessages = (list: unknown): Array<SefinMessage> => {
  const items = Array.isArray(list) ? list : list !== null && typeof list === "object" ? [list] : []
  return items.flatMap((item): Array<SefinMessage> => {
    if (item === null || typeof item !== "object") return []
    const field = (name: string): string | undefined => {
      const entry = Object.entries(item).find(([key]) => key.toLowerCase() === name)
      const value = entry?.[1]
      return typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined
    }
    const code = field("codigo")
    const message = field("descricao") ?? field("mensagem")
    if (code === undefined && message === undefined) return []
    const complement = field("complemento")
    return [{ code: code ?? "", message: message ?? "", ...(complement === undefined ? {} : { complement }) }]
  })
}

export const readSefinErrors = (body: unknown): Array<SefinMessage> => {
  if (body === null || typeof body !== "object") return []
  const record = body as Record<string, unknown>
  return [...readSefinMessages(record["erros"]), ...readSefinMessages(record["erro"])]
}

const gzipBase64 = (xml: string): string => gzipSync(Buffer.from(xml, "utf8")).toString("base64")

const gunzipBase64 = (what: string, b64: string): Effect.Effect<string, SefinUnavailable> =>
  Effect.try({
    try: () => gunzipSync(Buffer.from(b64, "base64"), { maxOutputLength: MAX_UNPACKED_XML_BYTES }).toString("utf8"),
    catch: () => new SefinUnavailable({ message: `SEFIN answered with ${what} that does not unpack (gzip + base64)` })
  })

interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** The answer as JSON when it is JSON (whatever its content type says), else undefined. */
const jsonOf = (answer: Answer): unknown => {
  const text = answer.body.toString("utf8").trim()
  if (!text.startsWith("{")) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// Node's codes for a failed handshake or an untrusted peer; the rest are connection failures.
const isTlsFailure = (code: string | undefined): boolean =>
  code !== undefined &&
  (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || code.startsWith("CERT_") ||
    code.includes("CERTIFICATE") || code.includes("SELF_SIGNED") || code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
    code === "UNABLE_TO_GET_ISSUER_CERT" || code === "UNABLE_TO_GET_ISSUER_CERT_LOCALLY" || code === "HOSTNAME_MISMATCH")

const transportFailure = (error: unknown): SefinUnavailable => {
  const code = error !== null && typeof error === "object" && "code" in error && typeof error.code === "string" ? error.code : undefined
  // Node's messages name hosts, ports and certificate problems; nothing of ours (key, body) is in them.
  // Only Node's first sentence: its hints are about command-line flags a customer cannot act on.
  const detail = error instanceof Error ? error.message.split(";")[0]!.slice(0, 200) : "unknown error"
  if (isTlsFailure(code)) {
    return new SefinUnavailable({
      message: `TLS with SEFIN failed (${code}: ${detail}); the service's operator must trust the authority's ` +
        "certificate authority (TAX_AUTHORITY_SANDBOX_CA_FILE or TAX_AUTHORITY_LIVE_CA_FILE)",
      tls: true
    })
  }
  const kind = code === "ECONNREFUSED"
    ? "SEFIN refused the connection"
    : code === "ECONNRESET" || code === "EPIPE"
    ? "the connection to SEFIN was reset"
    : "could not reach SEFIN"
  return new SefinUnavailable({ message: `${kind} (${code ?? "no code"}: ${detail})` })
}

interface AgentEntry {
  readonly fingerprint: string
  readonly agent: https.Agent
  inFlight: number
  lastUsed: number
  retired: boolean
}

// Of the certificate's text: enough to notice a replaced certificate without parsing it here.
const fingerprintOf = (identity: ClientIdentity): string => createHash("sha256").update(identity.certificatePem).digest("hex")

const trimSlash = (url: string) => url.replace(/\/+$/, "")

const SubmitAnswer = Schema.Struct({
  chaveAcesso: Schema.String,
  nfseXmlGZipB64: Schema.String,
  dataHoraProcessamento: Schema.String,
  alertas: Schema.optional(Schema.NullOr(Schema.Unknown))
})
const DpsAnswer = Schema.Struct({ chaveAcesso: Schema.String })
const NfseAnswer = Schema.Struct({ nfseXmlGZipB64: Schema.String })
const EventAnswer = Schema.Struct({ eventoXmlGZipB64: Schema.String })

export const makeSefinClient = (options: {
  readonly endpoints: SefinEndpoints
  readonly timeout: Duration.Input
}): Effect.Effect<SefinClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sefinUrl = trimSlash(options.endpoints.sefinUrl)
    const danfseUrl = trimSlash(options.endpoints.danfseUrl)
    const timeoutMs = Duration.toMillis(options.timeout)
    // Node's default roots (its bundle, NODE_EXTRA_CA_CERTS, the system store when enabled) plus the
    // extra bundle: `ca` alone would replace the roots, not add to them.
    const ca = options.endpoints.ca === undefined || options.endpoints.ca.trim() === ""
      ? undefined
      : [...tls.getCACertificates("default"), options.endpoints.ca]

    const agents = new Map<string, AgentEntry>()
    const retired = new Set<AgentEntry>()
    let closed = false

    const destroy = (entry: AgentEntry) => {
      entry.agent.destroy()
      retired.delete(entry)
    }

    // A replaced agent may still carry requests: it is closed when the last one ends.
    const retire = (entry: AgentEntry) => {
      entry.retired = true
      if (entry.inFlight === 0) destroy(entry)
      else retired.add(entry)
    }

    const acquire = (identity: ClientIdentity): AgentEntry => {
      const now = Date.now()
      for (const [credentialId, entry] of agents) {
        if (entry.inFlight === 0 && now - entry.lastUsed > AGENT_IDLE_MS) {
          agents.delete(credentialId)
          retire(entry)
        }
      }
      const fingerprint = fingerprintOf(identity)
      const existing = agents.get(identity.credentialId)
      if (existing !== undefined && existing.fingerprint === fingerprint) {
        existing.inFlight += 1
        existing.lastUsed = now
        return existing
      }
      if (existing !== undefined) retire(existing)
      const entry: AgentEntry = {
        fingerprint,
        agent: new https.Agent({
          keepAlive: true,
          timeout: IDLE_SOCKET_MS,
          cert: identity.certificatePem,
          key: Redacted.value(identity.privateKeyPem),
          ...(ca === undefined ? {} : { ca }),
          rejectUnauthorized: true,
          minVersion: "TLSv1.2"
        }),
        inFlight: 1,
        lastUsed: now,
        retired: false
      }
      agents.set(identity.credentialId, entry)
      return entry
    }

    const release = (entry: AgentEntry) => {
      entry.inFlight -= 1
      entry.lastUsed = Date.now()
      if (entry.retired && entry.inFlight === 0) destroy(entry)
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        for (const entry of agents.values()) entry.agent.destroy()
        for (const entry of retired) entry.agent.destroy()
        agents.clear()
        retired.clear()
      })
    )

    /** One HTTP exchange over the identity's agent; interruption (the timeout) destroys the request and its socket. */
    const exchange = (
      identity: ClientIdentity,
      request: {
        readonly method: "GET" | "POST"
        readonly url: string
        readonly json?: unknown
        readonly accept: string
        readonly traceparent: string | null
      }
    ): Effect.Effect<Answer, SefinUnavailable> =>
      Effect.callback<Answer, SefinUnavailable>((resume) => {
        if (closed) {
          resume(Effect.fail(new SefinUnavailable({ message: "the SEFIN client is closed" })))
          return
        }
        let entry: AgentEntry | undefined
        let settled = false
        const finish = (effect: Effect.Effect<Answer, SefinUnavailable>) => {
          if (settled) return
          settled = true
          if (entry !== undefined) release(entry)
          resume(effect)
        }
        let req: ReturnType<typeof https.request> | undefined
        try {
          entry = acquire(identity)
          const body = request.json === undefined ? undefined : Buffer.from(JSON.stringify(request.json), "utf8")
          req = https.request(request.url, {
            method: request.method,
            agent: entry.agent,
            headers: {
              accept: request.accept,
              "user-agent": "etd-service",
              // The authority (or a proxy in front of it) may continue our trace (SPEC §13).
              ...(request.traceparent === null ? {} : { traceparent: request.traceparent }),
              ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8", "content-length": body.length })
            }
          })
          req.on("response", (res) => {
            const chunks: Array<Buffer> = []
            let size = 0
            res.on("data", (chunk: Buffer) => {
              size += chunk.length
              if (size > (request.accept === "application/pdf" ? MAX_PDF_ANSWER_BYTES : MAX_JSON_ANSWER_BYTES)) {
                // Settled first: destroying the response reports it as cut short.
                finish(Effect.fail(new SefinUnavailable({ message: "SEFIN's answer is too large", status: res.statusCode })))
                res.destroy()
                return
              }
              chunks.push(chunk)
            })
            // Node hands the socket back to the agent's pool on the tick after "end": resuming on the
            // next turn lets the caller's next request reuse the kept-alive connection.
            res.on("end", () =>
              setImmediate(() => finish(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))))
            res.on("error", (error) => finish(Effect.fail(transportFailure(error))))
            res.on("aborted", () => finish(Effect.fail(new SefinUnavailable({ message: "the connection to SEFIN was cut mid-answer" }))))
          })
          req.on("error", (error) => finish(Effect.fail(transportFailure(error))))
          req.end(body)
        } catch (error) {
          // A certificate or key Node cannot load fails here, before any connection.
          finish(Effect.fail(new SefinUnavailable({ message: `the request to SEFIN could not be made (${error instanceof Error ? error.name : "error"})` })))
        }
        return Effect.sync(() => {
          if (!settled) {
            settled = true
            if (entry !== undefined) release(entry)
          }
          req?.destroy()
        })
      })

    /** The exchange bounded by the timeout, with every non-2xx answer classified; `absent` codes give None. */
    const call = <A>(
      operation: string,
      identity: ClientIdentity,
      request: { readonly method: "GET" | "POST"; readonly url: string; readonly json?: unknown; readonly accept?: string },
      onSuccess: (answer: Answer) => Effect.Effect<A, SefinUnavailable>,
      absentCodes: ReadonlyArray<string> = []
    ): Effect.Effect<Option.Option<A>, SefinError> =>
      Effect.flatMap(currentTraceparent, (traceparent) => exchange(identity, { accept: "application/json", ...request, traceparent })).pipe(
        Effect.timeoutOrElse({
          duration: timeoutMs,
          orElse: () => Effect.fail(new SefinTimeout({ message: `SEFIN did not answer ${operation} within ${timeoutMs} ms` }))
        }),
        Effect.flatMap((answer): Effect.Effect<Option.Option<A>, SefinError> => {
          if (answer.status >= 200 && answer.status < 300) return Effect.map(onSuccess(answer), Option.some)
          const json = jsonOf(answer)
          const errors = readSefinErrors(json)
          if (answer.status >= 500 || answer.status === 429) {
            const codes = errors.map((e) => e.code).filter((c) => c !== "")
            return Effect.fail(
              new SefinUnavailable({
                message: `SEFIN answered ${operation} with ${answer.status}${codes.length > 0 ? ` (${codes.join(", ")})` : ""}`,
                status: answer.status
              })
            )
          }
          if (answer.status >= 400 && errors.length > 0) {
            if (answer.status === 404 && errors.some((e) => absentCodes.includes(e.code))) return Effect.succeedNone
            const dpsId = json !== null && typeof json === "object" && "idDPS" in json && typeof json.idDPS === "string"
              ? json.idDPS
              : undefined
            return Effect.fail(new SefinRefused({ status: answer.status, errors, ...(dpsId === undefined ? {} : { dpsId }) }))
          }
          // A redirect, an HTML page (the 404 of a wrong base path), a 4xx without an error list: not the
          // authority's word on this request, so nothing final can be concluded from it.
          const kind = json === undefined ? "a non-JSON answer" : "an answer without an error list"
          return Effect.fail(new SefinUnavailable({ message: `SEFIN answered ${operation} with ${answer.status} and ${kind}`, status: answer.status }))
        })
      )

    const decode = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, operation: string) =>
    (answer: Answer): Effect.Effect<S["Type"], SefinUnavailable> => {
      const decoded = Schema.decodeUnknownOption(schema)(jsonOf(answer))
      return Option.isSome(decoded)
        ? Effect.succeed(decoded.value)
        : Effect.fail(new SefinUnavailable({ message: `SEFIN answered ${operation} with ${answer.status} but not the expected JSON`, status: answer.status }))
    }

    // Only reached for 2xx answers of operations that have no None case.
    const required = <A>(option: Option.Option<A>): A => Option.getOrThrow(option)

    const submitDps = Effect.fn("SefinClient.submitDps")(function*(identity: ClientIdentity, signedDpsXml: string) {
      const answer = yield* call("POST /nfse", identity, {
        method: "POST",
        url: `${sefinUrl}/nfse`,
        json: { dpsXmlGZipB64: gzipBase64(signedDpsXml) }
      }, decode(SubmitAnswer, "POST /nfse"))
      const success = required(answer)
      return {
        accessKey: success.chaveAcesso,
        nfseXml: yield* gunzipBase64("an NFS-e", success.nfseXmlGZipB64),
        processedAt: success.dataHoraProcessamento,
        alerts: readSefinMessages(success.alertas)
      } satisfies DpsSubmitted
    })

    const findDps = Effect.fn("SefinClient.findDps")(function*(identity: ClientIdentity, dpsId: string) {
      const answer = yield* call("GET /dps/{id}", identity, {
        method: "GET",
        url: `${sefinUrl}/dps/${encodeURIComponent(dpsId)}`
      }, decode(DpsAnswer, "GET /dps/{id}"), ["E2404"])
      return Option.map(answer, (found) => ({ accessKey: found.chaveAcesso }))
    })

    const getNfse = Effect.fn("SefinClient.getNfse")(function*(identity: ClientIdentity, accessKey: string) {
      const answer = yield* call("GET /nfse/{chave}", identity, {
        method: "GET",
        url: `${sefinUrl}/nfse/${encodeURIComponent(accessKey)}`
      }, decode(NfseAnswer, "GET /nfse/{chave}"), ["E2401"])
      if (Option.isNone(answer)) return Option.none<{ readonly nfseXml: string }>()
      return Option.some({ nfseXml: yield* gunzipBase64("an NFS-e", answer.value.nfseXmlGZipB64) })
    })

    const registerEvent = Effect.fn("SefinClient.registerEvent")(
      function*(identity: ClientIdentity, accessKey: string, signedPedRegEventoXml: string) {
        const answer = yield* call("POST /nfse/{chave}/eventos", identity, {
          method: "POST",
          url: `${sefinUrl}/nfse/${encodeURIComponent(accessKey)}/eventos`,
          json: { pedidoRegistroEventoXmlGZipB64: gzipBase64(signedPedRegEventoXml) }
        }, decode(EventAnswer, "POST /nfse/{chave}/eventos"))
        return { eventXml: yield* gunzipBase64("an event", required(answer).eventoXmlGZipB64) }
      }
    )

    const getDanfse = Effect.fn("SefinClient.getDanfse")(function*(identity: ClientIdentity, accessKey: string) {
      const answer = yield* call("GET /danfse/{chave}", identity, {
        method: "GET",
        url: `${danfseUrl}/${encodeURIComponent(accessKey)}`,
        accept: "application/pdf"
      }, (answer) =>
        answer.body.subarray(0, 5).toString("latin1") === "%PDF-"
          ? Effect.succeed(new Uint8Array(answer.body))
          : Effect.fail(new SefinUnavailable({ message: `the DANFSe API answered ${answer.status} without a PDF`, status: answer.status })))
      return required(answer)
    })

    return { submitDps, findDps, getNfse, registerEvent, getDanfse } satisfies SefinClient
  })
