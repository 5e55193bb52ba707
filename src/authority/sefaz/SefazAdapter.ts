/**
 * The state authorities (SEFAZ) behind the goods port (GoodsAuthority.ts): production for live
 * keys, homologation for test keys. Each note goes to the authorizer of its emitter's state (its own
 * SEFAZ, SVRS or SVAN: SefazAddresses.ts), signed with the tenant's A1 certificate and sent over
 * mutual TLS with it (SefazClient.ts). What never left is `RequestNotSent`: no usable certificate,
 * or a note the official schema refuses (our bug, so the document fails rather than being sent).
 */
import { type Duration, Effect, Option, type Scope } from "effect"
import type { CredentialVault } from "../../credentials/CredentialVault.js"
import { CredentialRequired } from "../../domain/Errors.js"
import type { Environment } from "../../domain/Principal.js"
import { drawDanfe } from "../danfe/Danfe.js"
import type { GoodsAuthority } from "../GoodsAuthority.js"
import { makeSefinTransport } from "../sefin/SefinTransport.js"
import { RequestNotSent, type TaxAuthority } from "../TaxAuthority.js"
import { tenantIdentity } from "../TenantIdentity.js"
import { loadCancellationSchemas } from "./NfeCancellation.js"
import { loadEventSchemas } from "./NfeCorrection.js"
import { loadVoidingSchemas } from "./NfeVoiding.js"
import { loadNfeSchemas } from "./NfeXsd.js"
import { addressesAt } from "./SefazAddresses.js"
import { makeSefazClient } from "./SefazClient.js"
import { goodsSubmissionIdOf, modelOf, type NoteNotValid } from "./SignedNote.js"

export interface SefazAuthorityOptions {
  readonly environment: Environment
  readonly system: TaxAuthority["system"]
  readonly timeout: Duration.Duration
  /** One base URL for every state's services (the local SEFAZ); none: the published addresses. */
  readonly baseUrl?: string | undefined
  /** Extra PEM bundle trusted for the authorities' TLS, on top of Node's default roots. */
  readonly ca?: string | undefined
}

const notSent = (error: NoteNotValid) =>
  Effect.fail(
    new RequestNotSent({
      code: "note_not_valid",
      message: `The note was not sent: ${error.message}. This is the service's error, not yours; write to support.`
    })
  )

export const makeSefazAuthority = (
  options: SefazAuthorityOptions
): Effect.Effect<GoodsAuthority, never, CredentialVault | Scope.Scope> =>
  Effect.gen(function*() {
    // The official schemas are checked before every send: without them the adapter must not start.
    yield* Effect.tryPromise({
      try: () => Promise.all([loadNfeSchemas(), loadCancellationSchemas(), loadEventSchemas(), loadVoidingSchemas()]),
      catch: (error) => new Error(`The NF-e schemas cannot be loaded: ${String(error)}`)
    }).pipe(Effect.orDie)
    const exchange = yield* makeSefinTransport(options.ca, "SEFAZ")
    const client = makeSefazClient({
      exchange,
      timeout: options.timeout,
      ...(options.baseUrl === undefined ? {} : { addressOf: addressesAt(options.baseUrl) })
    })
    const identityOf = yield* tenantIdentity(options.environment, "the state authorities")

    return {
      system: options.system,
      submissionIdOf: goodsSubmissionIdOf,
      // A note goes out signed with the tenant's certificate: without a usable one it is refused now, not failed later.
      requirementsFor: (issuer) =>
        identityOf(issuer.tenantId).pipe(
          Effect.asVoid,
          Effect.mapError((error) => new CredentialRequired({ message: error.message }))
        ),
      submit: (submission) =>
        Effect.flatMap(
          identityOf(submission.tenantId),
          (identity) => client.submit(submission.note, identity, submission.offlineXml)
        ).pipe(
          Effect.catchTag("NoteNotValid", notSent)
        ),
      issueOffline: (submission) =>
        Effect.flatMap(identityOf(submission.tenantId), (identity) => client.prepare(submission.note, identity)).pipe(
          Effect.map((prepared) => ({ accessKey: prepared.accessKey, xml: prepared.note })),
          Effect.catchTag("NoteNotValid", notSent)
        ),
      lookup: (submission) =>
        Effect.flatMap(identityOf(submission.tenantId), (identity) => client.lookup(submission.note, identity)).pipe(
          Effect.catchTag("NoteNotValid", notSent)
        ),
      cancel: (request) =>
        Effect.flatMap(identityOf(request.tenantId), (identity) => client.cancel(request.note, request, identity)).pipe(
          Effect.catchTag("NoteNotValid", notSent)
        ),
      correct: (request) =>
        Effect.flatMap(identityOf(request.tenantId), (identity) => client.correct(request.note, request, identity))
          .pipe(
            Effect.catchTag("NoteNotValid", notSent)
          ),
      voidNumbers: (request) =>
        Effect.flatMap(identityOf(request.tenantId), (identity) => client.voidNumbers(request, identity)).pipe(
          Effect.catchTag("NoteNotValid", notSent)
        ),
      status: (probe) =>
        Effect.flatMap(
          identityOf(probe.tenantId),
          (identity) => client.status(modelOf(probe.type), probe.state, options.environment, identity, probe.stateCode)
        ).pipe(Effect.map(Option.some)),
      danfe: drawDanfe
    } satisfies GoodsAuthority
  })
