/**
 * The mutual-TLS transport to a tax authority: the national NFS-e system (SEFIN Nacional, and the
 * ADN DANFSe API) with JSON, and the state authorities of the NF-e (SEFAZ) with SOAP. One HTTP
 * exchange over an agent that holds the tenant's A1 certificate, the answer handed back whole
 * (bounded in size) whatever its status, and a failure to get one typed as `SefinUnavailable`. What
 * the answers mean is the clients' business (SefinClient.ts, ../sefaz/SefazClient.ts).
 *
 * One `https.Agent` per credential keeps its TLS connections alive between calls; a changed
 * certificate gets a new agent (the old one is closed once its requests finish), agents left
 * unused are closed, and all are destroyed with the scope. Certificate verification is always on,
 * against Node's default roots and the shipped ICP-Brasil ones (production chains to a public CA,
 * produção restrita to ICP-Brasil, which Node does not trust); an extra CA bundle is added to them,
 * never in place of them.
 */
import { Effect, Redacted, type Scope } from "effect"
import { createHash } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import https from "node:https"
import tls from "node:tls"
import { icpBrasilRootPems } from "../../credentials/IcpBrasilRoots.js"
import { SefinUnavailable } from "./SefinErrors.js"

/** The tenant's certificate and key, as the credential vault gives them (`CredentialMaterial` fits). */
export interface ClientIdentity {
  readonly credentialId: string
  readonly certificatePem: string
  readonly privateKeyPem: Redacted.Redacted<string>
}

export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

export interface ExchangeRequest {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly json?: unknown
  /** A body that is not JSON (a SOAP envelope), with its content type. */
  readonly text?: { readonly contentType: string; readonly body: string } | undefined
  readonly accept: string
  readonly traceparent: string | null
}

/** One HTTP exchange over the identity's agent; interruption (the timeout) destroys the request and its socket. */
export type Exchange = (identity: ClientIdentity, request: ExchangeRequest) => Effect.Effect<Answer, SefinUnavailable>

// Far above any real answer, and small enough that a broken or hostile endpoint cannot make us hold
// much: an NFS-e is a few KiB, an event less, a DANFSe a few hundred KiB.
const MAX_JSON_ANSWER_BYTES = 2 * 1024 * 1024
const MAX_PDF_ANSWER_BYTES = 10 * 1024 * 1024
// Agents with no request for this long are closed; the next call opens a new connection.
const AGENT_IDLE_MS = 10 * 60_000
// Idle keep-alive sockets are closed after this; the real servers drop them sooner anyway.
const IDLE_SOCKET_MS = 30_000

// Node's codes for a failed handshake or an untrusted peer; the rest are connection failures.
const isTlsFailure = (code: string | undefined): boolean =>
  code !== undefined &&
  (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || code.startsWith("CERT_") ||
    code.includes("CERTIFICATE") || code.includes("SELF_SIGNED") || code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" ||
    code === "UNABLE_TO_GET_ISSUER_CERT" || code === "UNABLE_TO_GET_ISSUER_CERT_LOCALLY" ||
    code === "HOSTNAME_MISMATCH")

// Node's codes for a connection that was never made: nothing of the request left.
const NO_CONNECTION = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

const transportFailure = (error: unknown, peer: string): SefinUnavailable => {
  const code = error !== null && typeof error === "object" && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined
  // Node's messages name hosts, ports and certificate problems; nothing of ours (key, body) is in them.
  // Only Node's first sentence: its hints are about command-line flags a customer cannot act on.
  const detail = error instanceof Error ? error.message.split(";")[0]!.slice(0, 200) : "unknown error"
  if (isTlsFailure(code)) {
    return new SefinUnavailable({
      message: `TLS with ${peer} failed (${code}: ${detail}); the authority's certificate chains neither to a public ` +
        "root nor to ICP-Brasil: the service's operator must trust its certificate authority " +
        "(TAX_AUTHORITY_SANDBOX_CA_FILE or TAX_AUTHORITY_LIVE_CA_FILE)",
      tls: true
    })
  }
  const kind = code === "ECONNREFUSED"
    ? `${peer} refused the connection`
    : code === "ECONNRESET" || code === "EPIPE"
    ? `the connection to ${peer} was reset`
    : `could not reach ${peer}`
  return new SefinUnavailable({
    message: `${kind} (${code ?? "no code"}: ${detail})`,
    ...(code !== undefined && NO_CONNECTION.has(code) ? { unreached: true } : {})
  })
}

interface AgentEntry {
  readonly fingerprint: string
  readonly agent: https.Agent
  inFlight: number
  lastUsed: number
  retired: boolean
}

// Of the certificate's text: enough to notice a replaced certificate without parsing it here.
const fingerprintOf = (identity: ClientIdentity): string =>
  createHash("sha256").update(identity.certificatePem).digest("hex")

/**
 * What a SEFIN connection trusts: Node's default roots (its bundle, NODE_EXTRA_CA_CERTS, the system
 * store when enabled), the ICP-Brasil roots (produção restrita's chain) and the extra bundle. All
 * of them, because TLS's `ca` alone would replace the roots, not add to them.
 */
export const sefinTrustedRoots = (extraCa: string | undefined): ReadonlyArray<string> => [
  ...tls.getCACertificates("default"),
  ...icpBrasilRootPems(),
  ...(extraCa === undefined || extraCa.trim() === "" ? [] : [extraCa])
]

/**
 * The exchange for a client of `peer` (its name in failures: "SEFIN", "SEFAZ"), with `extraCa` (PEM)
 * trusted on top of Node's default roots.
 */
export const makeSefinTransport = (
  extraCa: string | undefined,
  peer = "SEFIN"
): Effect.Effect<Exchange, never, Scope.Scope> =>
  Effect.gen(function*() {
    const ca = [...sefinTrustedRoots(extraCa)]

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
          ca,
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

    const exchange: Exchange = (identity, request) =>
      Effect.callback<Answer, SefinUnavailable>((resume) => {
        if (closed) {
          resume(Effect.fail(new SefinUnavailable({ message: `the ${peer} client is closed` })))
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
          const body = request.json !== undefined
            ? Buffer.from(JSON.stringify(request.json), "utf8")
            : request.text === undefined
            ? undefined
            : Buffer.from(request.text.body, "utf8")
          const contentType = request.json !== undefined
            ? "application/json; charset=utf-8"
            : request.text?.contentType
          req = https.request(request.url, {
            method: request.method,
            agent: entry.agent,
            headers: {
              accept: request.accept,
              "user-agent": "etd-service",
              // The authority (or a proxy in front of it) may continue our trace (SPEC §13).
              ...(request.traceparent === null ? {} : { traceparent: request.traceparent }),
              ...(body === undefined ? {} : { "content-type": contentType, "content-length": body.length })
            }
          })
          req.on("response", (res) => {
            const chunks: Array<Buffer> = []
            let size = 0
            res.on("data", (chunk: Buffer) => {
              size += chunk.length
              if (size > (request.accept === "application/pdf" ? MAX_PDF_ANSWER_BYTES : MAX_JSON_ANSWER_BYTES)) {
                // Settled first: destroying the response reports it as cut short.
                finish(
                  Effect.fail(
                    new SefinUnavailable({ message: `${peer}'s answer is too large`, status: res.statusCode })
                  )
                )
                res.destroy()
                return
              }
              chunks.push(chunk)
            })
            // Node hands the socket back to the agent's pool on the tick after "end": resuming on the
            // next turn lets the caller's next request reuse the kept-alive connection.
            res.on("end", () =>
              setImmediate(() =>
                finish(
                  Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) })
                )
              ))
            res.on("error", (error) => finish(Effect.fail(transportFailure(error, peer))))
            res.on(
              "aborted",
              () =>
                finish(Effect.fail(new SefinUnavailable({ message: `the connection to ${peer} was cut mid-answer` })))
            )
          })
          req.on("error", (error) => finish(Effect.fail(transportFailure(error, peer))))
          req.end(body)
        } catch (error) {
          // A certificate or key Node cannot load fails here, before any connection.
          finish(
            Effect.fail(
              new SefinUnavailable({
                message: `the request to ${peer} could not be made (${error instanceof Error ? error.name : "error"})`
              })
            )
          )
        }
        return Effect.sync(() => {
          if (!settled) {
            settled = true
            if (entry !== undefined) {
              release(entry)
            }
          }
          req?.destroy()
        })
      })

    return exchange
  })
