/**
 * The credentials vault: the only code that seals and opens credential envelopes. It gives the
 * tax-authority layers the decrypted key material of a tenant's active certificate, in memory only
 * (for XML signatures and mutual TLS); nothing it returns is ever logged or put on a span.
 *
 * Master-key rotation: `CREDENTIALS_MASTER_KEY=new:<b64>,old:<b64>` (new key first). Envelopes
 * sealed under `old` keep opening; `rewrapAll` (run once at every start-up by
 * `MasterKeyRewrapLive`) re-wraps their data keys under `new`. When the start-up log reports
 * nothing left under an old key id, that key can be removed from the variable.
 */
import { Context, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { AppConfig } from "../Config.js"
import { TenantId } from "../domain/Ids.js"
import { now } from "../domain/Time.js"
import { resolveSecret, SecretUnavailable } from "../runtime/Secrets.js"
import { untraced } from "../telemetry/TraceContext.js"
import { CredentialRepo } from "./CredentialRepo.js"
import {
  generateMasterKey,
  type MasterKeyRing,
  open,
  parseEnvelope,
  parseMasterKeys,
  rewrap,
  seal,
  serializeEnvelope
} from "./Envelope.js"

/** The configured master keys (current first). */
export class MasterKeys extends Context.Service<MasterKeys, MasterKeyRing>()("etd/MasterKeys") {}

export const MASTER_KEY_FILE = "credentials-master-key"

/** From `CREDENTIALS_MASTER_KEY`; generated once into DATA_DIR outside production; required in production. */
export const MasterKeysLive = Layer.effect(
  MasterKeys,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const raw = yield* resolveSecret({
      variable: "CREDENTIALS_MASTER_KEY",
      configured: config.credentialsMasterKey,
      production: config.production,
      dataDir: config.dataDir,
      file: MASTER_KEY_FILE,
      generate: () => generateMasterKey("dev1")
    })
    return yield* Effect.mapError(
      parseMasterKeys(Redacted.value(raw)),
      (error) => new SecretUnavailable({ message: `${error.message}; the service will not start without a valid key.` })
    )
  })
)

/** A certificate and its private key, decrypted. Keep it in memory; never log it. */
export interface CredentialMaterial {
  readonly credentialId: string
  readonly notAfter: Date
  /** Whether the certificate chained to a trusted root when uploaded (`verified_chain`). */
  readonly verifiedChain: boolean
  readonly certificatePem: string
  readonly privateKeyPem: Redacted.Redacted<string>
}

export class NoActiveCredential extends Schema.TaggedError<NoActiveCredential>()("NoActiveCredential", {
  tenantId: TenantId,
  message: Schema.String
}) {}

/** A stored envelope that does not open: unknown master key id (removed too early) or tampering. */
export class CredentialUnreadable extends Schema.TaggedError<CredentialUnreadable>()("CredentialUnreadable", {
  credentialId: Schema.String,
  message: Schema.String
}) {}

// The envelope is bound to its row: copied onto another credential or tenant, it does not open.
const aadOf = (tenantId: TenantId, credentialId: string) => `credential\0${tenantId}\0${credentialId}`

const Plaintext = Schema.fromJsonString(
  Schema.Struct({ v: Schema.Literal(1), certificate_pem: Schema.String, private_key_pem: Schema.String })
)

export class CredentialVault extends Context.Service<CredentialVault>()("etd/CredentialVault", {
  make: Effect.gen(function*() {
    const ring = yield* MasterKeys
    const repo = yield* CredentialRepo

    /** The envelope of a new credential: what goes into `credentials.envelope`. */
    const sealMaterial = (
      tenantId: TenantId,
      credentialId: string,
      material: { readonly certificatePem: string; readonly privateKeyPem: Redacted.Redacted<string> }
    ) => {
      const plaintext = Buffer.from(
        JSON.stringify({
          v: 1,
          certificate_pem: material.certificatePem,
          private_key_pem: Redacted.value(material.privateKeyPem)
        }),
        "utf8"
      )
      try {
        const envelope = seal(ring, plaintext, aadOf(tenantId, credentialId))
        return { envelope: serializeEnvelope(envelope), masterKeyId: envelope.keyId }
      } finally {
        plaintext.fill(0)
      }
    }

    const openRow = (row: { id: string; tenantId: TenantId; envelope: string }) =>
      Effect.gen(function*() {
        const envelope = yield* parseEnvelope(row.envelope)
        const bytes = yield* open(ring, envelope, aadOf(row.tenantId, row.id))
        const text = Buffer.from(bytes).toString("utf8")
        bytes.fill(0)
        return yield* Schema.decodeUnknownEffect(Plaintext)(text)
      }).pipe(
        // The reasons are fixed texts from Envelope.ts; the parse error is replaced so nothing decrypted is quoted.
        Effect.catchTags({
          EnvelopeError: (error) =>
            Effect.fail(new CredentialUnreadable({ credentialId: row.id, message: error.message })),
          SchemaError: () =>
            Effect.fail(
              new CredentialUnreadable({ credentialId: row.id, message: "The decrypted content is not a credential." })
            )
        })
      )

    /** The tenant's active certificate and private key, decrypted in memory. */
    const activeFor = (
      tenantId: TenantId
    ): Effect.Effect<CredentialMaterial, NoActiveCredential | CredentialUnreadable> =>
      Effect.gen(function*() {
        const row = yield* repo.activeSealed(tenantId)
        if (Option.isNone(row)) {
          return yield* new NoActiveCredential({ tenantId, message: "The tenant has no active credential." })
        }
        yield* Effect.annotateCurrentSpan({
          "credential.id": row.value.id,
          "credential.master_key_id": row.value.masterKeyId
        })
        const content = yield* openRow(row.value)
        return {
          credentialId: row.value.id,
          notAfter: row.value.notAfter,
          verifiedChain: row.value.verifiedChain,
          certificatePem: content.certificate_pem,
          privateKeyPem: Redacted.make(content.private_key_pem)
        }
      }).pipe(Effect.withSpan("CredentialVault.activeFor", { attributes: { "tenant.id": tenantId } }))

    /**
     * Re-wraps every envelope not under the current master key. The data and its ciphertext are
     * untouched; only the 60-byte wrapped data key changes. Safe to run on several instances at once.
     */
    const rewrapAll = Effect.gen(function*() {
      let rewrapped = 0
      let failed = 0
      let after = ""
      for (;;) {
        const batch = yield* repo.sealedNotUnder(ring.current.id, 100, after)
        if (batch.length === 0) break
        for (const row of batch) {
          after = row.id
          const result = yield* Effect.result(
            Effect.flatMap(
              parseEnvelope(row.envelope),
              (envelope) => rewrap(ring, envelope, aadOf(row.tenantId, row.id))
            )
          )
          if (Result.isFailure(result)) {
            failed += 1
            yield* Effect.logError("credential envelope could not be re-wrapped", {
              credential_id: row.id,
              master_key_id: row.masterKeyId,
              reason: result.failure.reason
            })
            continue
          }
          const updated = yield* repo.updateEnvelope(
            row.id,
            row.envelope,
            serializeEnvelope(result.success),
            result.success.keyId,
            yield* now
          )
          if (updated) rewrapped += 1
        }
      }
      return { rewrapped, failed, currentKeyId: ring.current.id }
    }).pipe(Effect.withSpan("CredentialVault.rewrapAll"))

    /**
     * The tenant's certificate that can sign now, if any: active and not past its `not_after` (the
     * expiry monitor marks a lapsed one `expired` only on its next round), with whether it chains
     * to a trusted root. Nothing is decrypted.
     */
    const signing = (tenantId: TenantId, at: Date): Effect.Effect<Option.Option<{ readonly verifiedChain: boolean }>> =>
      Effect.map(
        repo.activeSealed(tenantId),
        Option.flatMap((row) =>
          row.notAfter.getTime() > at.getTime() ? Option.some({ verifiedChain: row.verifiedChain }) : Option.none()
        )
      )

    return { sealMaterial, activeFor, signing, rewrapAll } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** Still needs its `MasterKeys` (`MasterKeysLive`), which the application provides once for everyone. */
  static readonly layer = this.layerNoDeps.pipe(Layer.provide(CredentialRepo.layer))
}

/** Start-up re-wrap after a master-key rotation, in the background so it never delays serving. */
export const MasterKeyRewrapLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const vault = yield* CredentialVault
    yield* vault.rewrapAll.pipe(
      Effect.tap(({ currentKeyId, failed, rewrapped }) =>
        rewrapped > 0 || failed > 0
          ? Effect.logInfo("credential envelopes re-wrapped under the current master key", {
            master_key_id: currentKeyId,
            rewrapped,
            failed
          })
          : Effect.void
      ),
      Effect.catchCause((cause) =>
        Effect.logError("credential re-wrap failed; it runs again at the next start", cause)
      ),
      untraced,
      Effect.forkScoped
    )
  })
)
