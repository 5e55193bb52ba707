/**
 * The national NFS-e system (SEFIN Nacional) behind the `TaxAuthority` port (SPEC §7 "The real
 * protocol"): production for live keys, "produção restrita" for test keys.
 *
 * A document becomes a DPS v1.01 (DocumentDps.ts, Dps.ts). At acceptance the DPS is checked against
 * the official schemas (../xml/Xsd.ts), so a document the system would refuse is a 400 naming its
 * field; the worker rebuilds the same DPS (a pure function of the stored document and its
 * acceptance time), signs it with the tenant's A1 certificate (../xml/XmlSignature.ts) and sends it
 * (SefinClient.ts) over mutual TLS with the same certificate. What never left is `RequestNotSent`
 * (no usable certificate): the document fails without the authority seeing it.
 *
 * Reconciliation asks `GET /dps/{id}` by the deterministic DPS id (the submission id) and fetches
 * the note with `GET /nfse/{chave}`. A duplicate DPS (E0014) is adopted the same way. Cancellation
 * is the signed event e101101 (or the analysis request e101103), SefinEvents.ts; a note already
 * cancelled (E0840) is what a retried cancellation finds after the first attempt's answer was lost,
 * so it counts as cancelled. A substitute is a DPS with the `subst` group: nothing to send besides it.
 */
import { Clock, type Duration, Effect, Option, Redacted, Result, type Scope } from "effect"
import { CredentialVault } from "../../credentials/CredentialVault.js"
import { CredentialRequired, InvalidRequest } from "../../domain/Errors.js"
import type { Environment } from "../../domain/Principal.js"
import { brazilianDate } from "../../domain/Time.js"
import { noteAmountsOfNote } from "../NoteValues.js"
import {
  AlreadyAuthorized,
  AuthorityRejected,
  AuthorityTimeout,
  AuthorityUnavailable,
  type Authorization,
  environmentCode,
  RequestNotSent,
  type SubmissionDocument,
  type TaxAuthority
} from "../TaxAuthority.js"
import { tenantIdentity } from "../TenantIdentity.js"
import { signEnveloped } from "../xml/XmlSignature.js"
import { loadSchemas, validateXml } from "../xml/Xsd.js"
import { dpsInputOf } from "./DocumentDps.js"
import { buildDps } from "./Dps.js"
import { dpsIdPattern } from "./DpsId.js"
import { dpsRefusalOf, oneTagPerLine, type Refusal, refused } from "./DpsRefusals.js"
import { readNfse } from "./Nfse.js"
import { makeSefinClient, type SefinEndpoints } from "./SefinClient.js"
import type { SefinRefused, SefinTimeout, SefinUnavailable } from "./SefinErrors.js"
import { makeSefinEvents } from "./SefinEvents.js"
import type { ClientIdentity } from "./SefinTransport.js"

/** Where a DANFSe comes from (`TAX_AUTHORITY_*_DANFSE_SOURCE`). */
export type DanfseSource = "local" | "national"

export interface SefinAuthorityOptions {
  readonly environment: Environment
  readonly system: TaxAuthority["system"]
  readonly endpoints: SefinEndpoints
  readonly timeout: Duration.Duration
  /**
   * Where the DANFSe comes from: rendered by the service from the stored NFS-e XML (`local`, the
   * default), or relayed from the national DANFSe API (`national`), retired by NT 008/2026.
   */
  readonly danfseSource?: DanfseSource | undefined
}

/** The national system's codes this adapter acts on (README of the reference files). */
export const SefinCodes = { duplicateDps: "E0014", alreadyCancelled: "E0840" } as const

const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

/**
 * A transport failure as the port's transient errors. A failed TLS handshake is retried like any
 * outage (a fixed CA bundle and a restart let the documents through), but it is usually ours to
 * fix, so every one is logged as an error for the operator.
 */
const transportError = (error: SefinUnavailable | SefinTimeout) =>
  error._tag === "SefinTimeout"
    ? Effect.fail(new AuthorityTimeout({ message: error.message }))
    : Effect.andThen(
      error.tls === true
        ? Effect.logError(
          "TLS with the national NFS-e system failed; check the environment's CA bundle " +
            "(TAX_AUTHORITY_SANDBOX_CA_FILE / TAX_AUTHORITY_LIVE_CA_FILE)",
          { reason: error.message }
        )
        : Effect.void,
      Effect.fail(
        new AuthorityUnavailable({
          message: error.message,
          ...(error.status === undefined ? {} : { status: error.status })
        })
      )
    )

/**
 * The authority's refusal as a rejection: its first code, and every message it gave (each further
 * one with its own code, the first one's is the rejection's `code`).
 */
const rejectionOf = (refused: SefinRefused) => {
  const [first, ...others] = refused.errors
  const described = (e: SefinRefused["errors"][number]) => [e.message, e.complement].filter(Boolean).join(" — ")
  return new AuthorityRejected({
    code: first?.code ?? `HTTP${refused.status}`,
    message: first === undefined
      ? `The authority refused the request (HTTP ${refused.status}) without saying why.`
      : [described(first), ...others.map((e) => `${e.code}: ${described(e)}`)].join("; ")
  })
}

const ICP_BRASIL_REQUIRED = "Live documents go to the national NFS-e system's production, which accepts only " +
  "ICP-Brasil certificates: the tenant's active certificate does not chain to an ICP-Brasil root (its " +
  "`verified_chain` is false), or the tenant has not proven its tax id with one. Upload the tenant's ICP-Brasil " +
  "A1 certificate, exported with its certification path."

const refusedWith = (refused: SefinRefused, code: string) => refused.errors.some((e) => e.code === code)

export const makeSefinAuthority = (
  options: SefinAuthorityOptions
): Effect.Effect<TaxAuthority, never, CredentialVault | Scope.Scope> =>
  Effect.gen(function*() {
    const vault = yield* CredentialVault
    // The official schemas are checked before every send: without them the adapter must not start.
    yield* Effect.tryPromise({
      try: loadSchemas,
      catch: (error) => new Error(`The national NFS-e schemas cannot be loaded: ${String(error)}`)
    }).pipe(Effect.orDie)
    const client = yield* makeSefinClient({ endpoints: options.endpoints, timeout: options.timeout })
    const { system } = options
    const tpAmb = environmentCode(options.environment)

    /** The tenant's certificate for signing and for the TLS connection; none usable → not sent. */
    const identityOf = yield* tenantIdentity(options.environment, "the national NFS-e system")

    /** Signs `xml` over `element` with the tenant's key; a key the signature cannot use is not sent. */
    const sign = (xml: string, element: "infDPS" | "infPedReg", identity: ClientIdentity) =>
      Effect.try({
        try: () =>
          signEnveloped(xml, {
            element,
            privateKeyPem: Redacted.value(identity.privateKeyPem),
            certificatePem: identity.certificatePem
          }),
        // The library's message may quote key material: only a fixed text leaves.
        catch: () =>
          new RequestNotSent({
            code: "credential_unusable",
            message: "The tenant's certificate cannot sign for the national system (it needs an RSA key)."
          })
      })

    /**
     * The authorization an NFS-e XML records, once it is shown to be the note of our DPS (its DPS
     * id) under the access key the authority named: anything else is not an answer to our request,
     * so the outcome stays unknown (transient) rather than recording someone else's note.
     */
    const authorizationOf = (nfseXml: string, expected: { readonly dpsId: string; readonly accessKey: string }) =>
      Result.match(readNfse(nfseXml), {
        onFailure: (error) =>
          Effect.fail(
            new AuthorityUnavailable({ message: `The authority answered an unreadable NFS-e: ${error.message}` })
          ),
        onSuccess: (note): Effect.Effect<Authorization, AuthorityUnavailable> => {
          const authorizedAt = new Date(note.processedAt)
          if (
            note.dps.id !== expected.dpsId || note.accessKey !== expected.accessKey ||
            Number.isNaN(authorizedAt.getTime())
          ) {
            return Effect.fail(
              new AuthorityUnavailable({
                message:
                  "The authority answered with an NFS-e that is not the note of this DPS (DPS id, access key or " +
                  "processing time do not match)."
              })
            )
          }
          return Effect.succeed({
            accessKey: note.accessKey,
            nfseNumber: note.nfseNumber,
            // The national system registers every note under a document number (nDFSe): our protocol.
            protocol: note.dfseNumber ?? note.accessKey,
            authorizedAt,
            nfseXml,
            amounts: noteAmountsOfNote(note),
            ibsCbs: note.ibsCbs
          })
        }
      })

    /** The note the authority holds for a DPS id, if any. */
    const noteOfDps = (identity: ClientIdentity, dpsId: string) =>
      Effect.gen(function*() {
        const found = yield* client.findDps(identity, dpsId)
        if (Option.isNone(found)) return Option.none<Authorization>()
        const note = yield* client.getNfse(identity, found.value.accessKey)
        if (Option.isNone(note)) {
          // The DPS names a key the query does not know yet: the national system is still settling it.
          return yield* new AuthorityUnavailable({ message: "The authority knows the DPS but not yet its NFS-e." })
        }
        return Option.some(yield* authorizationOf(note.value.nfseXml, { dpsId, accessKey: found.value.accessKey }))
      })

    const submit: TaxAuthority["submit"] = (submission) =>
      Effect.gen(function*() {
        const identity = yield* identityOf(submission.tenantId)
        // The DPS checked at acceptance (requirementsFor): the same document gives the same DPS.
        const dps = buildDps(dpsInputOf(submission.document, options.environment))
        const signed = yield* sign(dps.xml, "infDPS", identity)
        const sent = yield* Effect.result(client.submitDps(identity, signed))
        if (Result.isSuccess(sent)) {
          return yield* authorizationOf(sent.success.nfseXml, { dpsId: dps.id, accessKey: sent.success.accessKey })
        }
        const error = sent.failure
        if (error._tag !== "SefinRefused") return yield* transportError(error)
        if (!refusedWith(error, SefinCodes.duplicateDps)) return yield* rejectionOf(error)
        // Sent before (the first answer was lost): adopt the note the authority already issued.
        const existing = yield* noteOfDps(identity, dps.id)
        if (Option.isNone(existing)) return yield* rejectionOf(error)
        return yield* new AlreadyAuthorized(existing.value)
      }).pipe(
        Effect.catchTags({ SefinUnavailable: transportError, SefinTimeout: transportError, SefinRefused: rejectionOf })
      )

    const lookup: TaxAuthority["lookup"] = (ref) =>
      Effect.gen(function*() {
        const identity = yield* identityOf(ref.tenantId)
        const note = yield* noteOfDps(identity, ref.submissionId)
        return Option.map(
          note,
          (authorization) => ({ status: "authorized" as const, authorization, cancelledAt: null })
        )
      }).pipe(
        Effect.catchTags({
          SefinUnavailable: transportError,
          SefinTimeout: transportError,
          // A query refused with an error list is not an answer about the DPS: ask again later.
          SefinRefused: (refused) =>
            Effect.fail(new AuthorityUnavailable({ message: rejectionOf(refused).message, status: refused.status }))
        })
      )

    const events = makeSefinEvents({
      environment: options.environment,
      tpAmb,
      client,
      identityOf,
      sign: (xml, identity) => sign(xml, "infPedReg", identity),
      transportError,
      rejectionOf,
      alreadyCancelledCode: SefinCodes.alreadyCancelled
    })

    const relayDanfse: TaxAuthority["danfse"] = (request) =>
      Effect.flatMap(identityOf(request.tenantId), (identity) => client.getDanfse(identity, request.accessKey)).pipe(
        Effect.catchTags({
          SefinUnavailable: transportError,
          SefinTimeout: transportError,
          SefinRefused: (refused) =>
            Effect.fail(new AuthorityUnavailable({ message: rejectionOf(refused).message, status: refused.status }))
        })
      )

    // The renderer (pdfkit, its fonts, the QR encoder) is loaded by the first PDF asked for.
    const renderDanfse: TaxAuthority["danfse"] = (request) =>
      Effect.flatMap(
        Effect.promise(() => import("../danfse/Danfse.js")),
        ({ renderNfseXml }) =>
          Effect.promise(() =>
            renderNfseXml(request.nfseXml, { cancelled: request.cancelled, substituted: request.substituted })
          )
      )

    const danfse = options.danfseSource === "national" ? relayDanfse : renderDanfse

    /**
     * The DPS this document would become, checked against the official schema (it may not carry
     * its signature yet: the schema allows that), and the competence date the system refuses when
     * it is after the emission's day.
     */
    const refusalsOf = (document: SubmissionDocument): ReadonlyArray<Refusal> => {
      const refusals: Array<Refusal> = []
      if (document.issueDate > brazilianDate(document.createdAt)) {
        refusals.push({
          path: ["issue_date"],
          message: `issue_date ${document.issueDate} is after today in Brasília time: the national NFS-e system ` +
            "refuses a competence date after the note's emission."
        })
      }
      const xml = oneTagPerLine(buildDps(dpsInputOf(document, options.environment)).xml)
      const violation = validateXml("DPS", xml)
      if (Result.isFailure(violation)) refusals.push(...violation.failure.messages.map((m) => dpsRefusalOf(m, xml)))
      return refusals
    }

    const requirementsFor: TaxAuthority["requirementsFor"] = (issuer, document) =>
      Effect.gen(function*() {
        // The national system takes only a DPS signed with the tenant's own certificate.
        const signing = yield* vault.signing(issuer.tenantId, yield* now)
        if (Option.isNone(signing)) {
          return yield* new CredentialRequired({
            message: `Documents of the ${document.environment} environment go to the national NFS-e system, which ` +
              "needs the tenant's A1 certificate: upload an active certificate for the tenant's tax id first."
          })
        }
        // Production takes only ICP-Brasil certificates, and only the proven holder issues for a tax id.
        if (options.environment === "live" && !(issuer.verified && signing.value.verifiedChain)) {
          return yield* new CredentialRequired({ message: ICP_BRASIL_REQUIRED })
        }
        if (document.service.nbs_code === undefined) {
          return yield* new InvalidRequest({
            message: "The request is not valid. service.nbs_code: the national NFS-e system requires the service's " +
              "9-digit NBS code.",
            issues: [{ path: ["service", "nbs_code"], message: "required by the national NFS-e system (cNBS)" }]
          })
        }
        const refusals = refusalsOf(document)
        if (refusals.length > 0) return yield* refused(refusals)
      })

    return {
      system,
      submissionIdOf: dpsIdPattern,
      requirementsFor,
      submit,
      lookup,
      cancel: events.cancel,
      cancellationRequirementsFor: events.cancellationRequirementsFor,
      danfse,
      analysisDecision: events.analysisDecision
    } satisfies TaxAuthority
  })
