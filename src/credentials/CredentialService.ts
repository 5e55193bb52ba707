/**
 * Uploading and reading credentials (SPEC §8). An upload is parsed, checked against the tenant and
 * the clock, sealed by the vault and stored as the tenant's active credential in one transaction
 * that marks the previous one `replaced`. Reads return metadata only.
 */
import { Context, Effect, Layer, Option, Schedule } from "effect"
import { readFile } from "node:fs/promises"
import { makeTransaction, Transaction } from "../db/Repository.js"
import { Credential } from "../domain/Credential.js"
import {
  CertificateExpired,
  CertificateNotYetValid,
  CertificatePasswordIncorrect,
  CertificateTaxIdMismatch,
  InvalidCertificate,
  InvalidRequest,
  NotFound,
  PayloadTooLarge
} from "../domain/Errors.js"
import { makeId, type TenantId } from "../domain/Ids.js"
import { cursorOf, type PageParams, pageSize, toPage } from "../domain/Pagination.js"
import { now } from "../domain/Time.js"
import { TaxIdOwnership } from "../tenants/TaxIdOwnership.js"
import { TenantService } from "../tenants/TenantService.js"
import { MAX_PKCS12_BYTES, type UploadCredential } from "./Api.js"
import { CertificateTrust } from "./CertificateTrust.js"
import { type CredentialRecord, CredentialRepo, type NewCredential } from "./CredentialRepo.js"
import { CredentialVault } from "./CredentialVault.js"
import { checkCertificate } from "./Pkcs12.js"
import { Pkcs12Opener } from "./Pkcs12Opener.js"

export const toCredential = (row: CredentialRecord) =>
  new Credential({
    id: row.id,
    kind: row.kind,
    subject: row.subject,
    issuer: row.issuer,
    serial_number: row.serialNumber,
    tax_id: row.taxId,
    not_before: row.notBefore,
    not_after: row.notAfter,
    fingerprint_sha256: row.fingerprintSha256,
    verified_chain: row.verifiedChain,
    status: row.status,
    created_at: row.createdAt
  })

const tooLarge = new PayloadTooLarge({ message: `The certificate file is larger than ${MAX_PKCS12_BYTES / 1024} KiB.` })

/** The file's bytes, from either encoding of the upload. */
const fileBytes = (payload: UploadCredential): Effect.Effect<Uint8Array, InvalidRequest | PayloadTooLarge> =>
  "file" in payload
    ? Effect.tryPromise({
      try: () => readFile(payload.file.path),
      catch: () => new InvalidRequest({ message: "The uploaded file could not be read." })
    })
    : Effect.sync(() => {
      const text = payload.pkcs12.replace(/\s+/g, "")
      // Checked before decoding so an oversized string costs no allocation.
      return text.length > Math.ceil(MAX_PKCS12_BYTES / 3) * 4 + 4
        ? null
        : new Uint8Array(Buffer.from(text, /[-_]/.test(text) ? "base64url" : "base64"))
    }).pipe(Effect.flatMap((bytes) => (bytes === null ? Effect.fail(tooLarge) : Effect.succeed(bytes))))

export class CredentialService extends Context.Service<CredentialService>()("etd/CredentialService", {
  make: Effect.gen(function*() {
    const repo = yield* CredentialRepo
    const vault = yield* CredentialVault
    const opener = yield* Pkcs12Opener
    const trust = yield* CertificateTrust
    const tenants = yield* TenantService
    const ownership = yield* TaxIdOwnership
    const inTransaction = yield* makeTransaction

    const upload = Effect.fn("CredentialService.upload")(function*(tenantId: TenantId, payload: UploadCredential) {
      const bytes = yield* fileBytes(payload)
      if (bytes.length === 0) {
        return yield* new InvalidRequest({
          message: "The certificate file is empty.",
          issues: [{ path: ["file" in payload ? "file" : "pkcs12"], message: "must not be empty" }]
        })
      }
      if (bytes.length > MAX_PKCS12_BYTES) return yield* tooLarge

      const parsed = yield* opener.open(bytes, payload.password).pipe(
        Effect.mapError((error) =>
          error.reason === "wrong_password"
            ? new CertificatePasswordIncorrect()
            // Pkcs12Error messages are fixed texts (they never pass forge's own errors through).
            : new InvalidCertificate({ message: `${error.message}.` })
        )
      )
      const tenant = yield* tenants.issuer(tenantId)
      if (Option.isNone(tenant)) return yield* new NotFound()
      const tenantTaxId = tenant.value.taxId
      const at = yield* now
      yield* checkCertificate(parsed, { now: at, tenantTaxId }).pipe(
        Effect.mapError((rejected) => {
          switch (rejected.reason) {
            case "expired":
              return new CertificateExpired({ message: `${rejected.message}.` })
            case "not_yet_valid":
              return new CertificateNotYetValid({ message: `${rejected.message}.` })
            case "tax_id_missing":
              return new CertificateTaxIdMismatch({ message: `${rejected.message}.` })
            case "tax_id_mismatch":
              return new CertificateTaxIdMismatch({
                message: `The certificate was issued to ${parsed.taxId}, not to the tenant's tax id ${tenantTaxId}.`
              })
          }
        })
      )

      // Bounded native work (CertificatePath.ts): a handful of signature checks at most.
      const chain = trust.verify(parsed.certificatePem, parsed.chainPems, at)
      const id = yield* makeId("credential")
      const sealed = vault.sealMaterial(tenantId, id, parsed)
      const row: NewCredential = {
        id,
        tenantId,
        kind: "a1_certificate",
        subject: parsed.subject,
        issuer: parsed.issuer,
        serialNumber: parsed.serialNumber,
        taxId: parsed.taxId ?? tenantTaxId,
        notBefore: parsed.notBefore,
        notAfter: parsed.notAfter,
        fingerprintSha256: parsed.fingerprintSha256,
        verifiedChain: chain.trusted,
        status: "active",
        envelope: sealed.envelope,
        masterKeyId: sealed.masterKeyId,
        createdAt: at,
        updatedAt: at
      }
      yield* Effect.andThen(repo.replaceActive(tenantId, at), repo.insert(row)).pipe(
        // Only an ICP-Brasil certificate proves the tenant's tax id (SPEC §5): `Conflict` when another
        // tenant proved it first; the tenants that named it before are told. Any other is stored for test
        // documents and proves nothing.
        Effect.andThen(chain.trusted ? ownership.verify(tenantId) : Effect.void),
        inTransaction,
        // Two uploads at once: the unique index on the active credential lets one commit first and
        // the other retry, so it replaces the first instead of failing.
        Effect.retry({
          times: 3,
          schedule: Schedule.spaced("10 millis"),
          while: (error) => error._tag === "ActiveCredentialTaken"
        }),
        // Still losing after that many tries is nothing the uploader could fix.
        Effect.catchTag("ActiveCredentialTaken", Effect.die)
      )
      yield* Effect.annotateCurrentSpan({ "credential.id": id })
      yield* Effect.logInfo("credential uploaded", {
        tenant_id: tenantId,
        credential_id: id,
        not_after: parsed.notAfter.toISOString(),
        verified_chain: chain.trusted,
        ...(chain.trusted ? { root: chain.root } : { chain_problem: chain.reason })
      })
      return toCredential(row)
    })

    const get = Effect.fn("CredentialService.get")(function*(tenantId: TenantId, id: string) {
      const row = yield* repo.findById(tenantId, id)
      return toCredential(
        yield* Option.match(row, { onNone: () => Effect.fail(new NotFound()), onSome: Effect.succeed })
      )
    })

    const list = Effect.fn("CredentialService.list")(function*(tenantId: TenantId, page: PageParams) {
      const cursor = cursorOf(page)
      const rows = yield* repo.list(tenantId, pageSize(page.limit), cursor)
      const result = toPage(rows, pageSize(page.limit), cursor)
      return { ...result, data: result.data.map(toCredential) }
    })

    return { upload, get, list } as const
  })
}) {
  static readonly layerNoDeps = Layer.effect(this, this.make)
  /** The vault still needs its `MasterKeys` (`MasterKeysLive`), the tax id's ownership the `EventLog`. */
  static readonly layer = this.layerNoDeps.pipe(
    Layer.provide([
      TaxIdOwnership.layer,
      CredentialRepo.layer,
      CredentialVault.layer,
      CertificateTrust.layer,
      Pkcs12Opener.layer,
      TenantService.layer,
      Transaction.layer
    ])
  )
}
